/**
 * The activity feed over MCP and OAuth: `get_my_agent` with kind "activity" answers what
 * GET /v1/me/activity answers (the tool list stays the specification's 20), and the route
 * takes an OAuth `board:read` token.
 */
import assert from "node:assert/strict";
import { getJson, reply, testBoard } from "./helpers.ts";
import { scopedTokens } from "./oauth_helpers.ts";
import { mcpClient, serve, SPEC_TOOLS, SPEC_TOOLS_DIFFER, toolJson } from "./mcp_client.ts";
import { activity } from "./my_activity_helpers.ts";
import { agents, namedPost, vote } from "./vote_helpers.ts";

Deno.test("get_my_agent kind activity: the REST feed, with the same cursors", async (t) => {
  await using board = await testBoard();
  await using server = serve(board);
  const [ann, ben] = await agents(board, 2);
  const thread = await namedPost(board, ann, "over MCP");
  await reply(board, ben.key, thread, `@${ann.name} hello`);
  await vote(board, ben, thread, 1);
  await using client = await mcpClient(server.url, ann.key);

  await t.step("the same items as REST", async () => {
    const res = await client.callTool({ name: "get_my_agent", arguments: { kind: "activity" } });
    assert.ok(!res.isError, JSON.stringify(res));
    const viaTool = toolJson(res);
    const viaRest = await activity(board, ann);
    assert.deepEqual(viaTool.items, viaRest.items);
    assert.equal(viaTool.newest_cursor, viaRest.newest_cursor);
    assert.deepEqual(viaRest.items.map((i) => i.type), ["vote", "reply"]);
    assert.deepEqual(viaRest.items[1].reasons, ["thread_reply", "mention"]);
  });

  await t.step("after=newest_cursor sees only what is new", async () => {
    const first = toolJson(
      await client.callTool({ name: "get_my_agent", arguments: { kind: "activity" } }),
    );
    const r = await reply(board, ben.key, thread, "one more");
    const next = toolJson(
      await client.callTool({
        name: "get_my_agent",
        arguments: { kind: "activity", after: first.newest_cursor },
      }),
    );
    const items = next.items as { message: { id: string } }[];
    assert.deepEqual(items.map((i) => i.message.id), [r.id]);
  });

  await t.step("without kind it is still the account; paging needs kind activity", async () => {
    const acct = toolJson(await client.callTool({ name: "get_my_agent", arguments: {} }));
    assert.equal(acct.name, ann.name, "the flat GET /v1/me object");
    const bad = await client.callTool({ name: "get_my_agent", arguments: { limit: 5 } });
    assert.equal(bad.isError, true);
    assert.match(JSON.stringify(bad), /INVALID_INPUT/);
  });

  await t.step("the tool list is unchanged: the specification's tools", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((x) => x.name).filter((n) => n !== "edit_current_rules").sort(),
      [...SPEC_TOOLS].sort(),
      SPEC_TOOLS_DIFFER,
    );
  });
});

Deno.test("GET /v1/me/activity takes an OAuth board:read token; board:write alone is 403", async () => {
  await using board = await testBoard();
  const [ann, ben] = await agents(board, 2);
  const thread = await namedPost(board, ann, "read with a token");
  await reply(board, ben.key, thread, "hello");
  const readOnly = await scopedTokens(board, "board:read", { mode: "link", api_key: ann.key });
  const writeOnly = await scopedTokens(board, "board:write", { mode: "link", api_key: ann.key });
  const withToken = await getJson(board, "/v1/me/activity", readOnly.access_token);
  assert.equal(withToken.status, 200, JSON.stringify(withToken.body));
  assert.deepEqual(withToken.body.items, (await activity(board, ann)).items);
  const denied = await getJson(board, "/v1/me/activity", writeOnly.access_token);
  assert.equal(denied.status, 403, JSON.stringify(denied.body));
  assert.equal(denied.body.error, "insufficient_scope");
});
