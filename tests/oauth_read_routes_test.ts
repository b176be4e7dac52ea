/**
 * Read-scope routes of /v1 (spec: `GET /v1/voting` "named key or read scope",
 * `GET /v1/me/publications/lookup` "requires only read access"): an OAuth `board:read`
 * token is accepted like the API key, and a bad or missing credential gets the OAuth 401
 * with its `WWW-Authenticate` challenge.
 */
import assert from "node:assert/strict";
import { revokeAgent } from "../domain/writes/mod.ts";
import { agentHeaders, assertStatus, idemKey, jsonInit, register, testBoard } from "./helpers.ts";
import { BASE, scopedTokens } from "./oauth_helpers.ts";
import { OPERATIONS } from "../routes/api/registry.ts";

const PRM = `${BASE}/.well-known/oauth-protected-resource/mcp`;

Deno.test("GET /v1/voting and GET /v1/me/publications/lookup accept a board:read token", async (t) => {
  await using board = await testBoard();
  const agent = await register(board);
  const other = await register(board);
  const key = idemKey();
  const posted = await board.request(
    "/v1/posts",
    jsonInit("POST", { title: "looked up", body: "by a read token" }, other.key, {
      "idempotency-key": key,
    }),
  );
  assert.equal(posted.status, 201);
  const post = await posted.json();
  const readOnly = await scopedTokens(board, "board:read", { mode: "link", api_key: other.key });
  const writeOnly = await scopedTokens(board, "board:write", { mode: "link", api_key: agent.key });
  const voting = `/v1/voting?board=named&post_ids=${post.id}`;
  const lookup = (bearer?: string) =>
    board.request("/v1/me/publications/lookup", {
      headers: agentHeaders(bearer, { "idempotency-key": key }),
    });

  await t.step("a board:read token reads the voting status", async () => {
    const res = await board.request(voting, { headers: agentHeaders(readOnly.access_token) });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.targets[0].vote_state, "own_post");
  });

  await t.step("a board:read token looks up its agent's publication", async () => {
    const res = await lookup(readOnly.access_token);
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.found, true);
    assert.equal(body.publication.id, post.id);
  });

  await t.step("the API key still works on both", async () => {
    await assertStatus(await board.request(voting, { headers: agentHeaders(other.key) }), 200);
    const b = await lookup(other.key);
    assert.equal((await b.json()).found, true);
  });

  await t.step("a token without board:read: 403 insufficient_scope", async () => {
    for (
      const res of [
        await board.request(voting, { headers: agentHeaders(writeOnly.access_token) }),
        await lookup(writeOnly.access_token),
      ]
    ) {
      assert.equal(res.status, 403);
      assert.equal((await res.json()).error, "insufficient_scope");
      assert.match(res.headers.get("www-authenticate") ?? "", /scope="board:read"/);
    }
  });

  await t.step('a bad token: 401 invalid_token with error="invalid_token"', async () => {
    const bad = "pb_at_" + "x".repeat(43);
    for (
      const res of [
        await board.request(voting, { headers: agentHeaders(bad) }),
        await lookup(bad),
      ]
    ) {
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error, "invalid_token");
      const h = res.headers.get("www-authenticate") ?? "";
      assert.match(h, /^Bearer /);
      assert.match(h, /error="invalid_token"/);
      assert.ok(h.includes(`resource_metadata="${PRM}"`), h);
    }
  });

  await t.step("no credential: 401 with the challenge (no error attribute)", async () => {
    for (
      const res of [
        await board.request(voting, { headers: agentHeaders() }),
        await lookup(),
      ]
    ) {
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error, "invalid_token");
      const h = res.headers.get("www-authenticate") ?? "";
      assert.ok(h.includes(`resource_metadata="${PRM}"`), h);
      assert.ok(!/error=/.test(h), h);
    }
  });

  await t.step("a token whose agent's key was revoked: 401 UNAUTHORIZED", async () => {
    await revokeAgent(board.deps, other.id);
    const res = await board.request(voting, { headers: agentHeaders(readOnly.access_token) });
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.code, "UNAUTHORIZED");
  });
});

Deno.test("a valid OAuth token on a key-only route is told so, not 'invalid or revoked'", async () => {
  await using board = await testBoard();
  const agent = await register(board);
  const tokens = await scopedTokens(board, "board:read board:write", {
    mode: "link",
    api_key: agent.key,
  });
  for (const path of ["/v1/me", "/v1/me/connections", "/v1/activity"]) {
    const res = await board.request(path, { headers: agentHeaders(tokens.access_token) });
    const body = await res.json();
    assert.equal(res.status, 403, `${path}: ${JSON.stringify(body)}`);
    assert.equal(body.error.code, "FORBIDDEN");
    assert.match(body.error.message, /valid OAuth access token.*API key only/);
    assert.equal(body.error.details.credential, "oauth_access_token");
  }
  // A token that is not (or no longer) valid gets the key's 401, told it is no API key (an
  // agent must not take its key for revoked); an unknown key is an invalid or revoked key.
  for (
    const [bogus, kind] of [
      [`pb_at_${"A".repeat(43)}`, "an OAuth access token"],
      [`pb_rt_${"A".repeat(43)}`, "an OAuth refresh token"],
      [`pb_live_${"A".repeat(43)}`, null],
    ]
  ) {
    const res = await board.request("/v1/me", { headers: agentHeaders(bogus!) });
    const body = await res.json();
    assert.equal(res.status, 401);
    assert.equal(body.error.code, "UNAUTHORIZED");
    assert.match(
      body.error.message,
      kind
        ? new RegExp(`not an API key but ${kind}.*not a valid one`)
        : /invalid or has been revoked/,
    );
  }
});

Deno.test("the 403 for a token on a key-only route names every route that takes tokens", async () => {
  await using board = await testBoard();
  const agent = await register(board);
  const tokens = await scopedTokens(board, "board:read board:write", {
    mode: "link",
    api_key: agent.key,
  });
  const res = await board.request("/v1/me", { headers: agentHeaders(tokens.access_token) });
  const body = await res.json();
  assert.equal(res.status, 403, JSON.stringify(body));
  const message: string = body.error.message;
  // Every operation whose credential may be an OAuth token (routes/api/operation.ts, `Auth`).
  const takesTokens = OPERATIONS.filter((op) => ["read", "write", "oauth_write"].includes(op.auth));
  assert.ok(takesTokens.length > 0);
  for (const op of takesTokens) {
    const named = op.path.startsWith("/v1/articles/")
      ? message.includes("the /v1/articles routes")
      : message.includes(`${op.method.toUpperCase()} ${op.path}`);
    assert.ok(named, `${op.method.toUpperCase()} ${op.path} is missing from: ${message}`);
  }
  // And the reverse: each route the message names takes the token.
  const voting = `/v1/voting?board=named&post_ids=${crypto.randomUUID()}`;
  for (const path of ["/v1/me/activity", voting, "/v1/me/publications/lookup"]) {
    const ok = await board.request(path, {
      headers: agentHeaders(tokens.access_token, { "idempotency-key": idemKey() }),
    });
    const text = await ok.text();
    assert.equal(ok.status, 200, `${path}: ${text}`);
  }
});
