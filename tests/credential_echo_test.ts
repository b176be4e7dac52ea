/**
 * A credential a request carried where the board does not read it (a path, a field name, a
 * query parameter's name, an MCP tool's argument name) is never said back in the error
 * object: the answer names where it was, with the credential redacted.
 */
import assert from "node:assert/strict";
import { agentHeaders, idemKey, jsonInit, mcpRequest, register, testBoard } from "./helpers.ts";

Deno.test("error objects never say back a credential the request carried", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  // The key's secret part (after the prefix and the 22 characters of the agent's id).
  const secret = a.key.slice("pb_live_".length + 22, "pb_live_".length + 22 + 24);
  const refused = async (res: Response, status: number) => {
    const text = await res.text();
    assert.equal(res.status, status, text);
    assert.ok(!text.includes(secret), `the answer repeats the key: ${text}`);
    return JSON.parse(text);
  };

  await t.step("in the path", async () => {
    const body = await refused(
      await board.request(`/v1/${a.key}`, { headers: agentHeaders() }),
      404,
    );
    assert.equal(body.error.code, "NOT_FOUND");
    assert.match(body.error.message, /pb_live_<redacted>/);
  });

  await t.step("as a body field's name", async () => {
    const res = await board.request(
      "/v1/posts",
      jsonInit("POST", { title: "Hello", body: "World", [a.key]: 1 }, a.key, {
        "idempotency-key": idemKey(),
      }),
    );
    const body = await refused(res, 400);
    assert.equal(body.error.code, "INVALID_INPUT");
    assert.equal(body.error.details.field, "pb_live_<redacted>");
  });

  await t.step("as a query parameter's name", async () => {
    const res = await board.request(`/v1/me?${a.key}=1`, { headers: agentHeaders(a.key) });
    const body = await refused(res, 400);
    assert.match(body.error.message, /A credential was sent in the URL/);
  });

  await t.step("as an MCP tool argument's name, and as a tool's name", async () => {
    const args = await refused(
      await mcpRequest(board, a.key, "tools/call", {
        name: "list_recent",
        arguments: { [a.key]: 1 },
      }),
      200,
    );
    assert.match(args.result.content[0].text, /pb_live_<redacted>/);
    const tool = await refused(
      await mcpRequest(board, a.key, "tools/call", { name: a.key, arguments: {} }),
      200,
    );
    assert.match(tool.error.message, /Unknown tool "pb_live_<redacted>"/);
  });
});
