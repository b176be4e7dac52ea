/**
 * Operations that read while the credential resolves (`readsWhileAuthenticating`,
 * routes/authentication.ts `whileAuthenticating`): the credential's KV read and the
 * handler's first reads are one round trip, and a refused credential still answers its
 * refusal, never what the handler made.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { cors } from "hono/cors";
import { type Operation, operation, READ, tool, WRITE } from "../routes/api/operation.ts";
import { mcpGuards, mcpPost } from "../mcp/handler.ts";
import { callerOf } from "../routes/authentication.ts";
import type { AppEnv } from "../routes/env.ts";
import { errorResponse } from "../routes/http.ts";
import { operationRoutes } from "../routes/operation_routes.ts";
import { BoardError } from "../domain/errors.ts";
import {
  agentHeaders,
  assertError,
  mcpInit,
  metered,
  register,
  type TestBoard,
  testBoard,
} from "./helpers.ts";

/** Handler runs so far. */
let runs = 0;

/** A read that reads a key before it knows its caller, marks its answer, and names the caller. */
function probe(auth: Operation["auth"], path: string): Operation {
  return operation({
    method: "get",
    path,
    operationId: `probe${path.replaceAll("/", "_")}`,
    tag: "test",
    summary: "A probe.",
    auth,
    responses: { 200: { description: "The caller's name." } },
    readsWhileAuthenticating: true,
    handler: async (c) => {
      runs++;
      const read = await c.get("deps").kv.get(["probe"]);
      if (c.req.header("x-missing")) throw new BoardError("NOT_FOUND", "Nothing.");
      const caller = await callerOf(c);
      c.header("x-handler", "ran");
      c.header("cache-control", "public, max-age=60");
      if (read.value) throw new Error("unexpected");
      return { name: caller.agent.name };
    },
  });
}

/** The generated routes of the probes on the board's deps, with the app's error answers. */
function probeApp(board: TestBoard) {
  const app = new Hono<AppEnv>();
  app.use(cors({ origin: "*" }));
  app.use(async (c, next) => {
    c.set("deps", board.deps);
    c.set("network", "127.0.0.1");
    await next();
  });
  app.route("/v1", operationRoutes([probe("api_key", "/v1/probe")], "/v1"));
  app.route("/", operationRoutes([probe("read", "/oauth-probe")], ""));
  app.onError((err, c) => errorResponse(c, err));
  return async (path: string, init: RequestInit = {}) => await app.request(path, init);
}

Deno.test("a read's first KV batch and the credential's are one round trip", async () => {
  await using board = await testBoard();
  const send = probeApp(board);
  const agent = await register(board);
  const { res, depth } = await metered(() =>
    send("/v1/probe", { headers: agentHeaders(agent.key) })
  );
  assert.equal(res.status, 200);
  assert.equal((await res.json()).name, agent.name);
  assert.equal(res.headers.get("x-handler"), "ran");
  assert.equal(depth, 1);
});

Deno.test("a refused credential answers its refusal, without the handler's answer", async () => {
  await using board = await testBoard();
  const send = probeApp(board);
  const unknown = "pb_live_" + "A".repeat(43);
  // A token shaped like a credential is looked up while the handler reads…
  const before = runs;
  const res0 = await send("/v1/probe", { headers: agentHeaders(unknown) });
  assert.equal(res0.headers.get("x-handler"), null);
  // What the middleware before the route set (CORS) stays on the refusal.
  assert.equal(res0.headers.get("access-control-allow-origin"), "*");
  await assertError(res0, 401, "UNAUTHORIZED");
  assert.equal(runs, before + 1);
  // …anything else is refused before the handler runs: it costs no read.
  for (const headers of [agentHeaders(), agentHeaders("not-a-key")]) {
    await assertError(await send("/v1/probe", { headers }), 401, "UNAUTHORIZED");
  }
  assert.equal(runs, before + 1);
  // An OAuth-accepting read: the RFC 6750 refusal with its challenge.
  const res = await send("/oauth-probe", {
    headers: { authorization: `Bearer pb_at_${"B".repeat(43)}` },
  });
  assert.equal(res.status, 401);
  assert.equal(res.headers.get("x-handler"), null);
  assert.equal(res.headers.get("access-control-allow-origin"), "*");
  assert.match(res.headers.get("www-authenticate") ?? "", /error="invalid_token"/);
  assert.equal((await res.json()).error, "invalid_token");
});

Deno.test("a call the edge limits refuse reads nothing while it authenticates", async () => {
  await using board = await testBoard();
  const send = probeApp(board);
  // Unknown credentials from one network: each is looked up (and read for) until the
  // network's failed lookups of the minute are spent; every one after is 429 at once.
  const junk = () => "pb_live_" + crypto.randomUUID().replaceAll("-", "").padEnd(65, "x");
  const statuses: number[] = [];
  let ranBefore429 = 0;
  for (let i = 0; i < 40; i++) {
    const before = runs;
    const res = await send("/v1/probe", { headers: agentHeaders(junk()) });
    statuses.push(res.status);
    await res.body?.cancel();
    if (res.status === 429) assert.equal(runs, before, `request ${i}: the handler ran`);
    else ranBefore429 += runs - before;
  }
  const refused = statuses.filter((s) => s === 429).length;
  assert.ok(refused >= 5, JSON.stringify(statuses));
  assert.equal(statuses.indexOf(429), 40 - refused, "once refused, refused for the minute");
  assert.equal(ranBefore429, 40 - refused);
  // KV calls: none for a refused one.
  const { res, depth } = await metered(() => send("/v1/probe", { headers: agentHeaders(junk()) }));
  await assertError(res, 429, "RATE_LIMITED");
  assert.equal(depth, 0);
});

Deno.test("a handler's own error is answered once the credential is good", async () => {
  await using board = await testBoard();
  const send = probeApp(board);
  const agent = await register(board);
  await assertError(
    await send("/v1/probe", { headers: { ...agentHeaders(agent.key), "x-missing": "1" } }),
    404,
    "NOT_FOUND",
  );
  await assertError(
    await send("/v1/probe", {
      headers: { ...agentHeaders("pb_live_" + "C".repeat(43)), "x-missing": "1" },
    }),
    401,
    "UNAUTHORIZED",
  );
});

Deno.test("only reads run while the credential resolves", () => {
  const write = { ...probe("api_key", "/v1/probe"), method: "post" } as Operation;
  assert.throws(() => operationRoutes([write], "/v1"), /only reads/);
});

/** A JSON-RPC tools/call of `name`. */
function toolCall(name: string, key: string): RequestInit {
  return mcpInit(key, "tools/call", { name, arguments: {} });
}

Deno.test("an MCP tool that reads while the credential resolves", async () => {
  await using board = await testBoard();
  const agent = await register(board);
  let writes = 0;
  const tools = [
    tool({
      name: "probe_read",
      title: "Probe",
      description: "Reads before it knows its caller.",
      args: {},
      annotations: READ,
      scope: "board:read",
      readsWhileAuthenticating: true,
      call: async (ctx) => {
        await ctx.deps.kv.get(["probe"]);
        return { name: (await ctx.callerReady).agent.name };
      },
    }),
    tool({
      name: "probe_write",
      title: "Probe",
      description: "Writes once its caller is known.",
      args: {},
      annotations: WRITE,
      scope: "board:write",
      call: () => Promise.resolve({ writes: ++writes }),
    }),
  ];
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    c.set("deps", board.deps);
    c.set("network", "127.0.0.1");
    await next();
  });
  app.on("POST", ["/mcp"], ...mcpGuards, mcpPost(tools));
  app.onError((err, c) => errorResponse(c, err));

  const { res, depth } = await metered(async () =>
    await app.request("/mcp", toolCall("probe_read", agent.key))
  );
  assert.equal(res.status, 200);
  const answer = await res.json();
  assert.deepEqual(answer.result.structuredContent, { name: agent.name });
  assert.equal(depth, 1);

  const unknown = "pb_live_" + "D".repeat(43);
  for (const name of ["probe_read", "probe_write"]) {
    const refused = await app.request("/mcp", toolCall(name, unknown));
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).error.code, "UNAUTHORIZED");
  }
  assert.equal(writes, 0);
  const wrote = await app.request("/mcp", toolCall("probe_write", agent.key));
  assert.deepEqual((await wrote.json()).result.structuredContent, { writes: 1 });
});
