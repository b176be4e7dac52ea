import assert from "node:assert/strict";
import { type Handler, Hono } from "hono";
import type { Agent } from "../domain/accounts/mod.ts";
import { keys } from "../kv/keys.ts";
import { createApp } from "../routes/app.ts";
import type { AppEnv } from "../routes/env.ts";
import {
  authenticateRequest,
  requireCaller,
  resolveCaller,
  scopeRefusal,
} from "../routes/authentication.ts";
import { ERROR_STATUS } from "../domain/errors.ts";
import {
  agentHeaders,
  assertError,
  assertStatus,
  idemKey,
  jsonInit,
  mcpInit,
  register,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { BASE, connect, refresh, scopedTokens, whoami } from "./oauth_helpers.ts";
import { mcpClient, serve, toolJson } from "./mcp_client.ts";

const PRM = `${BASE}/.well-known/oauth-protected-resource/mcp`;

/** A tiny app using the REST middleware the way the votes, pins and articles routes do. */
function routesApp(board: TestBoard) {
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    c.set("deps", board.deps);
    c.set("network", "127.0.0.1");
    await next();
  });
  const echo: Handler<AppEnv> = (c) =>
    c.json({ agent_id: c.get("caller").agent.id, via: c.get("caller").via });
  app.post("/votes", requireCaller({ scope: "board:write" }), echo);
  app.get("/articles", requireCaller({ scope: "board:read" }), echo);
  app.post("/pins", requireCaller({ scope: "board:write", apiKey: false }), echo);
  app.get("/resolve", async (c) => {
    const token = c.req.header("authorization")!.slice(7);
    const plain = await resolveCaller(c, token);
    const withOAuth = await resolveCaller(c, token, { oauth: true });
    return c.json({ plain: plain?.via ?? null, oauth: withOAuth?.via ?? null });
  });
  return (path: string, method: string, token?: string) =>
    app.request(path, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
}

function readOnlyToken(board: TestBoard) {
  return scopedTokens(board, "board:read");
}

Deno.test("bearer challenges (RFC 6750 / RFC 9728)", async (t) => {
  await using board = await testBoard();

  await t.step(
    "no credentials: 401 invalid_token, challenge without an error attribute",
    async () => {
      const res = await whoami(board);
      assert.equal(res.status, 401);
      const body = await res.json();
      assert.equal(body.error, "invalid_token");
      assert.equal(typeof body.error_description, "string");
      const h = res.headers.get("www-authenticate")!;
      assert.match(h, /^Bearer /);
      assert.ok(h.includes(`resource_metadata="${PRM}"`), h);
      assert.match(h, /scope="board:read board:write"/);
      assert.ok(!/error=/.test(h), h);
    },
  );

  await t.step('an invalid token: 401 with error="invalid_token"', async () => {
    const res = await whoami(board, "pb_at_" + "x".repeat(43));
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error, "invalid_token");
    const h = res.headers.get("www-authenticate")!;
    assert.match(h, /error="invalid_token"/);
    assert.ok(h.includes(`resource_metadata="${PRM}"`));
  });

  await t.step("a token for another audience is refused", async () => {
    const { tokens } = await connect(board);
    const moved = createApp({
      ...board.deps,
      config: { ...board.deps.config, baseUrl: "http://moved.test" },
    });
    const res = await moved.request("/oauth/whoami", {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    }, { remoteAddr: { hostname: "127.0.0.1" } });
    assert.equal(res.status, 401);
    const body = await res.json();
    assert.equal(body.error, "invalid_token");
    assert.match(body.error_description, /issued for 'http:\/\/board\.test\/mcp'/);
    assert.match(res.headers.get("www-authenticate")!, /http:\/\/moved\.test\/\.well-known/);
  });
});

Deno.test("REST routes that accept OAuth", async (t) => {
  await using board = await testBoard();
  const call = routesApp(board);
  const agent = await register(board);
  const { tokens } = await connect(board, { mode: "link", api_key: agent.key });
  const readOnly = await readOnlyToken(board);

  await t.step("OAuth token and API key both accepted where allowed", async () => {
    const oauth = await (await call("/votes", "POST", tokens.access_token)).json();
    assert.deepEqual(oauth, { agent_id: agent.id, via: "oauth" });
    const key = await (await call("/votes", "POST", agent.key)).json();
    assert.deepEqual(key, { agent_id: agent.id, via: "api_key" });
  });

  await t.step("insufficient scope: 403 insufficient_scope with a scope hint", async () => {
    const res = await call("/votes", "POST", readOnly.access_token);
    assert.equal(res.status, 403);
    assert.equal((await res.json()).error, "insufficient_scope");
    const h = res.headers.get("www-authenticate")!;
    assert.match(h, /error="insufficient_scope"/);
    assert.match(h, /scope="board:write"/);
    assert.ok(h.includes(`resource_metadata="${PRM}"`));
    await assertStatus(await call("/articles", "GET", readOnly.access_token), 200);
  });

  await t.step("OAuth-only routes refuse raw API keys", async () => {
    await assertError(call("/pins", "POST", agent.key), 403, "OAUTH_REQUIRED");
    await assertStatus(await call("/pins", "POST", tokens.access_token), 200);
  });

  await t.step("missing credentials answer the OAuth shape with a challenge", async () => {
    const res = await call("/votes", "POST");
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error, "invalid_token");
    assert.match(res.headers.get("www-authenticate")!, /scope="board:write"/);
  });

  await t.step("resolveCaller takes OAuth tokens only when asked", async () => {
    const res = await (await call("/resolve", "GET", tokens.access_token)).json();
    assert.deepEqual(res, { plain: null, oauth: "oauth" });
  });

  await t.step("named /v1 routes accept raw API keys only", async () => {
    const res = await board.request("/v1/me", { headers: agentHeaders(tokens.access_token) });
    // A valid token is told that the route takes the API key (not "invalid or revoked").
    await assertError(res, 403, "FORBIDDEN");
  });
});

Deno.test("revoking the agent's key ends its OAuth connections", async (t) => {
  await using board = await testBoard();
  const agent = await register(board);
  const { clientId, tokens } = await connect(board, { mode: "link", api_key: agent.key });
  const grantsOf = async () => {
    const out = [];
    for await (const e of board.kv.list({ prefix: keys.oauthGrantsByAgent.range(agent.id) })) {
      out.push(e);
    }
    return out;
  };
  assert.equal((await grantsOf()).length, 1);
  await assertStatus(await board.request("/v1/me/revoke", jsonInit("POST", {}, agent.key)), 200);

  await t.step("the revocation itself deletes the agent's grants", async () => {
    assert.equal((await grantsOf()).length, 0);
  });

  await t.step("the access token answers the board error UNAUTHORIZED", async () => {
    await assertError(whoami(board, tokens.access_token), 401, "UNAUTHORIZED");
  });

  await t.step("refresh fails", async () => {
    const res = await refresh(board, clientId, tokens.refresh_token);
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error, "invalid_grant");
  });
});

Deno.test("token validation refuses a non-active agent even if its grants linger", async () => {
  await using board = await testBoard();
  const { tokens } = await connect(board);
  const me = await (await whoami(board, tokens.access_token)).json();
  // As if the process stopped between the revocation commit and the grant clean-up.
  const entry = await board.kv.get<Agent>(keys.agents(me.agent_id));
  await board.kv.set(keys.agents(me.agent_id), { ...entry.value!, status: "removed" });
  const res = await whoami(board, tokens.access_token);
  await assertError(res, 401, "UNAUTHORIZED");
  assert.match(res.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
});

Deno.test("authenticateRequest accepts OAuth tokens and named API keys at /mcp", async (t) => {
  const moderatorKey = "moderator-key-for-tests-0123456789abcdef";
  await using board = await testBoard({ moderatorKey });
  const agent = await register(board);
  const { tokens } = await connect(board, { mode: "link", api_key: agent.key });
  const mcp = (token?: string) =>
    new Request(`${BASE}/mcp`, {
      method: "POST",
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });

  await t.step("access token with audience {base}/mcp", async () => {
    const caller = await authenticateRequest(board.deps, mcp(tokens.access_token));
    assert.ok(!(caller instanceof Response));
    assert.equal(caller.agent.id, agent.id);
    assert.equal(caller.via, "oauth");
    assert.ok(caller.scopes.has("board:write"));
  });

  await t.step("named API key as a bearer token", async () => {
    const caller = await authenticateRequest(board.deps, mcp(agent.key), { scope: "board:write" });
    assert.ok(!(caller instanceof Response));
    assert.equal(caller.via, "api_key");
  });

  await t.step("refusals are ready-made responses", async () => {
    const none = await authenticateRequest(board.deps, mcp());
    assert.ok(none instanceof Response);
    await assertStatus(none, 401);
    const bad = await authenticateRequest(board.deps, mcp("pb_live_" + "y".repeat(43)));
    assert.ok(bad instanceof Response);
    await assertError(bad, 401, "UNAUTHORIZED");
    // The moderator key is no credential here: the answer of any unknown token.
    const mod = await authenticateRequest(board.deps, mcp(moderatorKey));
    assert.ok(mod instanceof Response);
    await assertStatus(mod, 401);
  });
});

Deno.test("a token without the scope gets one refusal from the REST route and the MCP tool", async (t) => {
  await using board = await testBoard();
  const [author, voter] = [await register(board), await register(board)];
  const posted = await board.request(
    "/v1/posts",
    jsonInit("POST", { title: "To vote on", body: "A body" }, author.key, {
      "idempotency-key": idemKey(),
    }),
  );
  const postId = (await posted.json()).id;
  const link = { mode: "link", api_key: voter.key };
  const cases = [
    {
      name: "a board:read token casting a vote: POST /votes and the vote tool",
      token: await scopedTokens(board, "board:read", link),
      held: ["board:read"],
      needed: "board:write" as const,
      rest: (token: string) =>
        board.request(
          "/votes",
          jsonInit("POST", { board: "named", post_id: postId, value: 1 }, token),
        ),
      tool: { name: "vote", arguments: { board: "named", post_id: postId, value: 1 } },
    },
    {
      name: "a board:write token reading the voting status: GET /v1/voting and its tool",
      token: await scopedTokens(board, "board:write", link),
      held: ["board:write"],
      needed: "board:read" as const,
      rest: (token: string) =>
        board.request(`/v1/voting?board=named&post_ids=${postId}`, {
          headers: agentHeaders(token),
        }),
      tool: { name: "get_voting_status", arguments: { board: "named", post_ids: [postId] } },
    },
  ];
  for (const c of cases) {
    await t.step(c.name, async () => {
      const expected = scopeRefusal({ scopes: new Set(c.held) }, c.needed);
      assert.ok(expected);
      assert.match(expected.message, new RegExp(`"${c.needed}"`));
      // REST: RFC 6750's 403 insufficient_scope, the refusal's message as its description (in
      // RFC 6749's characters: its double quotes as single ones).
      const res = await c.rest(c.token.access_token);
      assert.equal(res.status, ERROR_STATUS.INSUFFICIENT_SCOPE);
      assert.deepEqual(await res.json(), {
        error: "insufficient_scope",
        error_description: expected.message.replaceAll('"', "'"),
      });
      const challenge = res.headers.get("www-authenticate") ?? "";
      assert.match(challenge, /error="insufficient_scope"/);
      assert.match(challenge, new RegExp(`scope="${c.needed}"`));
      // MCP: the same refusal as a tool error (the board's error object).
      const mcp = await board.request("/mcp", mcpInit(c.token.access_token, "tools/call", c.tool));
      assert.equal(mcp.status, 200);
      const answer = await mcp.json();
      assert.equal(answer.result.isError, true, JSON.stringify(answer));
      const { error } = JSON.parse(answer.result.content[0].text);
      assert.deepEqual(error, {
        code: "INSUFFICIENT_SCOPE",
        message: expected.message,
        details: { required_scope: c.needed, granted_scopes: c.held },
      });
    });
  }
  await t.step("the official MCP SDK client, over HTTP, gets the same refusal", async () => {
    await using server = serve(board);
    const c = cases[0];
    await using client = await mcpClient(server.url, c.token.access_token);
    const result = await client.callTool(c.tool);
    assert.equal(result.isError, true, JSON.stringify(result));
    const expected = scopeRefusal({ scopes: new Set(c.held) }, c.needed)!;
    assert.deepEqual(toolJson(result).error, {
      code: "INSUFFICIENT_SCOPE",
      message: expected.message,
      details: { required_scope: c.needed, granted_scopes: c.held },
    });
  });
});

Deno.test("/mcp: a refused key on a request answered without the caller is a 401, and the server lives on", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const key = "pb_live_" + "z".repeat(43); // credential-shaped, unknown
  // Params `initialize` refuses are answered before the caller is needed.
  for (const params of [{}, { protocolVersion: 7 }]) {
    const res = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params }),
    });
    assert.equal(res.status, 401);
    await res.body?.cancel();
  }
  // A macrotask later (where an unhandled refusal would end the process), the server answers.
  await new Promise((r) => setTimeout(r, 10));
  const home = await fetch(`${server.url}/`);
  assert.equal(home.status, 200);
  await home.body?.cancel();
});
