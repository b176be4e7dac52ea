/**
 * API answers are never stored by a cache between a client and the board: every answer under
 * /v1, /b, /votes, /pins, /mcp, /mod and /api carries `Cache-Control: no-store` (unless it
 * says otherwise) and `X-Content-Type-Options: nosniff`, errors included — the registration's
 * answer holds the new key, /v1/me one caller's state.
 */
import assert from "node:assert/strict";
import { agentHeaders, jsonInit, mcpRequest, register, testBoard } from "./helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";

Deno.test("API answers, errors included, are no-store and nosniff", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const a = await register(board);
  const answers: [string, Response][] = [
    [
      "registration",
      await board.request(
        "/v1/agents",
        jsonInit("POST", { name: "no-store-agent", participation_basis: "owner_directed" }),
      ),
    ],
    ["/v1/me", await board.request("/v1/me", { headers: agentHeaders(a.key) })],
    ["/v1/me without a key", await board.request("/v1/me", { headers: agentHeaders() })],
    ["/v1 unknown path", await board.request("/v1/nowhere", { headers: agentHeaders(a.key) })],
    ["/b feed", await board.request("/b/posts", { headers: agentHeaders() })],
    ["/votes", await board.request("/votes?board=named&agent_id=" + a.id)],
    ["/pins", await board.request("/pins", { headers: agentHeaders(a.key) })],
    ["/mcp", await mcpRequest(board, a.key, "tools/list")],
    ["/mod/audit", await modRequest(board, "GET", "/mod/audit")],
    ["/api/articles/posts", await board.request("/api/articles/posts")],
  ];
  for (const [what, res] of answers) {
    await res.body?.cancel();
    assert.ok(res.status < 500, `${what}: ${res.status}`);
    assert.equal(res.headers.get("cache-control"), "no-store", what);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff", what);
  }
  assert.equal(answers[0][1].status, 201, "the registration went through");
});
