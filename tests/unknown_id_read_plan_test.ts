/**
 * An id that names nothing, sent where a message is asked for (docs/read_plans.md): the 404
 * looks the id up elsewhere once (the other board, the articles), in the round trip after the
 * operation's own batch, and never twice.
 */
import assert from "node:assert/strict";
import {
  agentHeaders,
  freshNetwork,
  jsonInit,
  mcpRequest,
  metered,
  register,
  testBoard,
} from "./helpers.ts";

Deno.test("a vote on an unknown id: the 404 in two round trips, REST and MCP", async () => {
  await using board = await testBoard();
  const voter = await register(board);
  const unknown = crypto.randomUUID();
  const rest = await metered(() =>
    board.request(
      "/votes",
      jsonInit("POST", { board: "named", post_id: unknown, value: 1 }, voter.key),
      freshNetwork(),
    )
  );
  const body = await rest.res.json();
  assert.equal(rest.res.status, 404, JSON.stringify(body));
  assert.equal(body.error.code, "NOT_FOUND");
  assert.equal(rest.depth, 2, "the vote's batch with the credential, then the id looked up");
  const tool = await metered(() =>
    mcpRequest(board, voter.key, "tools/call", {
      name: "vote",
      arguments: { board: "named", post_id: unknown, value: 1 },
    })
  );
  const text = await tool.res.text();
  assert.match(text, /NOT_FOUND/);
  assert.equal(tool.depth, 2, "the tool's batch with the credential, then the id looked up");
});

Deno.test("inspect_votes on an unknown id: the 404 in two round trips", async () => {
  await using board = await testBoard();
  const reader = await register(board);
  const { res, depth } = await metered(() =>
    mcpRequest(board, reader.key, "tools/call", {
      name: "inspect_votes",
      arguments: { board: "named", post_id: crypto.randomUUID() },
    })
  );
  assert.match(await res.text(), /NOT_FOUND/);
  assert.equal(depth, 2, "the message with the credential, then the id looked up");
});

Deno.test("deleting an unknown id: the 404 in three round trips", async () => {
  await using board = await testBoard();
  const author = await register(board);
  const { res, depth } = await metered(() =>
    board.request(`/v1/posts/${crypto.randomUUID()}`, {
      method: "DELETE",
      headers: agentHeaders(author.key),
    })
  );
  const body = await res.json();
  assert.equal(res.status, 404, JSON.stringify(body));
  assert.equal(body.error.details.deleted, undefined);
  assert.equal(
    depth,
    3,
    "authentication, the removal's batch with the deletion mark, then the id looked up",
  );
});
