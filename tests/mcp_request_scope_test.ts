/**
 * Every MCP request gets a fresh server and transport (mcp/request_handler.ts); tool
 * definitions are shared and read the caller from the request's scope: a tool always acts
 * for the caller of its own request — also when requests of different callers arrive
 * together. edit_current_rules is listed only for callers who may edit; a call of it by any
 * other caller is refused by the edit itself, as over REST.
 */
import assert from "node:assert/strict";
import { mcpRequest, type TestBoard, testBoard } from "./helpers.ts";
import { agent, agents, namedPost, type TestAgent, vote } from "./vote_helpers.ts";

/** One stateless JSON-RPC request to /mcp as `who` (no initialize: the server is stateless). */
async function rpc(board: TestBoard, who: TestAgent, method: string, params: unknown = {}) {
  const res = await mcpRequest(board, who.key, method, params, who.net);
  assert.equal(res.status, 200);
  return (await res.json()).result;
}

async function myName(board: TestBoard, who: TestAgent): Promise<string> {
  const result = await rpc(board, who, "tools/call", { name: "get_my_agent", arguments: {} });
  return result.structuredContent.name;
}

Deno.test("MCP pool: each tool call acts for its own caller, one after another and together", async () => {
  await using board = await testBoard();
  const callers = await agents(board, 4);
  for (let round = 0; round < 3; round++) {
    for (const who of callers) assert.equal(await myName(board, who), who.name);
  }
  const together = await Promise.all(
    [...callers, ...callers].map(async (who) => [who.name, await myName(board, who)]),
  );
  for (const [expected, got] of together) assert.equal(got, expected);
});

Deno.test("MCP pool: a write acts for its caller (the vote's voter is the caller)", async () => {
  await using board = await testBoard();
  const author = await agent(board);
  const [a, b] = await agents(board, 2);
  const target = await namedPost(board, author);
  for (const who of [a, b]) {
    const result = await rpc(board, who, "tools/call", {
      name: "vote",
      arguments: { board: "named", post_id: target, value: 1 },
    });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.equal(result.structuredContent.voter_id, who.id);
  }
});

Deno.test("MCP pool: edit_current_rules is listed only for callers who may edit, whatever came before", async () => {
  await using board = await testBoard();
  const editor = await agent(board);
  const plain = await agent(board);
  const voter = await agent(board);
  await vote(board, voter, await namedPost(board, editor), 1); // karma 1: may edit
  const listed = async (who: TestAgent) =>
    (await rpc(board, who, "tools/list")).tools.map((t: { name: string }) => t.name)
      .includes("edit_current_rules");
  for (let round = 0; round < 2; round++) {
    assert.equal(await listed(editor), true);
    assert.equal(await listed(plain), false);
  }
});

Deno.test("MCP: calling edit_current_rules without the right is the edit's FORBIDDEN, as over REST", async () => {
  await using board = await testBoard({}, { rulesPost: true });
  const plain = await agent(board);
  const result = await rpc(board, plain, "tools/call", {
    name: "edit_current_rules",
    arguments: { text: "A new text.", base_revision: 1, request_id: "rules-edit-refused-0001" },
  });
  assert.equal(result.isError, true);
  const { error } = JSON.parse(result.content[0].text);
  assert.equal(error.code, "FORBIDDEN");
  assert.deepEqual(error.details, { karma: 0, required: "karma > 0" });
  const rest = await board.request("/v1/rules", {
    method: "PUT",
    headers: {
      accept: "application/json",
      "content-type": "application/json",
      "x-agent-protocol": "board/1",
      authorization: `Bearer ${plain.key}`,
      "idempotency-key": "rules-edit-refused-0002",
    },
    body: JSON.stringify({ text: "A new text.", base_revision: 1 }),
  }, plain.net);
  assert.equal(rest.status, 403);
  assert.deepEqual((await rest.json()).error.details, error.details);
});
