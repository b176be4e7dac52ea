/**
 * Unknown query parameters answer 400 INVALID_INPUT with `details.allowed` on every agent
 * route (`/v1`, `/b`, `/api`, `/votes`, `/pins`, `/mod`), generated from the operation
 * registry; a malformed query parameter is named as a parameter, not as a body field.
 */
import assert from "node:assert/strict";
import { OPERATIONS } from "../routes/api/registry.ts";
import { allowedQueryParams, refusesUnknownQuery } from "../routes/query_params.ts";
import {
  agentHeaders,
  assertError,
  getJson,
  idemKey,
  jsonInit,
  post,
  register,
  testBoard,
} from "./helpers.ts";
import { MOD_KEY } from "./pin_helpers.ts";

Deno.test("every agent route refuses an unknown query parameter with the names it takes", async (t) => {
  await using board = await testBoard({ moderatorKey: MOD_KEY, testClock: true });
  const a = await register(board);
  const strict = OPERATIONS.filter((op) => op.handler && refusesUnknownQuery(op));
  assert.ok(strict.length > 40, `only ${strict.length} routes checked`);
  for (const op of strict) {
    // POST /pins takes OAuth tokens only: a key is refused before the route reads anything.
    if (op.auth === "oauth_write") continue;
    await t.step(`${op.method.toUpperCase()} ${op.path}`, async () => {
      const path = op.path.replace("{id}", crypto.randomUUID()).replace("{revision}", "1");
      const key = op.auth === "moderator" ? MOD_KEY : op.auth === "none" ? undefined : a.key;
      const res = await board.request(`${path}?since=5`, {
        method: op.method.toUpperCase(),
        headers: agentHeaders(
          key,
          op.idempotency === "required" || op.idempotency === "lookup"
            ? { "idempotency-key": idemKey() }
            : {},
        ),
      });
      const details = await assertError(res, 400, "INVALID_INPUT");
      assert.equal(details.parameter, "since");
      assert.deepEqual(details.allowed, allowedQueryParams(op));
    });
  }
});

Deno.test("GET /v1/activity?since=, ?cursor=, ?offset= are refused and point to after", async () => {
  await using board = await testBoard();
  const a = await register(board);
  await post(board, a.key);
  for (const name of ["since", "cursor", "offset"]) {
    const { status, body } = await getJson(board, `/v1/activity?${name}=5`, a.key);
    assert.equal(status, 400, JSON.stringify(body));
    assert.equal(body.error.code, "INVALID_INPUT");
    assert.match(body.error.message, new RegExp(`^Unknown parameter "${name}"; GET /v1/activity`));
    assert.match(body.error.message, /"after"/);
    assert.ok(body.error.details.allowed.includes("after"));
  }
  // Declared parameters still work, and a route without parameters says so.
  assert.equal((await getJson(board, "/v1/activity?limit=5&after=1", a.key)).status, 200);
  const me = await getJson(board, "/v1/me?x=1", a.key);
  assert.equal(me.status, 400);
  assert.match(me.body.error.message, /GET \/v1\/me takes no query parameters/);
  assert.deepEqual(me.body.error.details.allowed, []);
});

Deno.test("the anonymous board keeps its own message for a topic parameter", async () => {
  await using board = await testBoard();
  const { status, body } = await getJson(board, "/b/posts?topic=general");
  assert.equal(status, 400);
  assert.match(body.error.message, /anonymous board has no topics/);
});

Deno.test("a malformed query parameter is reported as that parameter", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const { status, body } = await getJson(board, "/v1/posts?topic=General", a.key);
  assert.equal(status, 400);
  assert.equal(body.error.code, "INVALID_INPUT");
  assert.match(body.error.message, /^Parameter "topic" is invalid/);
  assert.equal(body.error.details.parameter, "topic");
  assert.ok(!JSON.stringify(body).includes("(body)"));
});

Deno.test("/openapi.json lists INVALID_INPUT on every route that refuses unknown parameters", async () => {
  await using board = await testBoard();
  const doc = await (await board.request("/openapi.json")).json();
  for (const op of OPERATIONS.filter((o) => o.handler && refusesUnknownQuery(o))) {
    const codes = doc.paths[op.path][op.method].responses["400"]?.["x-error-codes"] ?? [];
    assert.ok(codes.includes("INVALID_INPUT"), `${op.method} ${op.path}`);
  }
});

Deno.test("every agent GET refuses a body (parameters sent as JSON), with the headers or without", async (t) => {
  await using board = await testBoard({ moderatorKey: MOD_KEY, testClock: true });
  const a = await register(board);
  const reads = OPERATIONS.filter((op) =>
    op.handler && op.method === "get" && refusesUnknownQuery(op)
  );
  const paths = reads.map((op) => op.path);
  for (const must of ["/votes", "/pins", "/api/articles/feed", "/v1/posts", "/b/posts"]) {
    assert.ok(paths.includes(must), must);
  }
  for (const op of reads) {
    await t.step(`GET ${op.path}`, async () => {
      const path = op.path.replace("{id}", crypto.randomUUID()).replace("{revision}", "1");
      const key = op.auth === "moderator" ? MOD_KEY : op.auth === "none" ? undefined : a.key;
      // The body a client declares (in-process a GET carries none; tests/e2e sends real ones).
      const res = await board.request(path, {
        headers: { ...agentHeaders(key), "content-length": "13" },
      });
      const details = await assertError(res, 400, "INVALID_INPUT");
      assert.equal(details.field, "(body)");
    });
  }
});

Deno.test("a query parameter with an empty name is refused like any unknown one", async () => {
  await using board = await testBoard();
  const a = await register(board);
  for (const path of ["/v1/posts?=5", "/votes?=5", "/v1/posts?limit=5&="]) {
    const { status, body } = await getJson(board, path, a.key);
    assert.equal(status, 400, JSON.stringify(body));
    assert.equal(body.error.details.parameter, "");
  }
});

Deno.test("a write whose Idempotency-Key is in the URL, not the header, is told where it goes", async () => {
  await using board = await testBoard();
  const a = await register(board);
  for (const name of ["idempotency_key", "Idempotency-Key"]) {
    const res = await board.request(
      `/v1/posts?${encodeURIComponent(name)}=${idemKey()}`,
      jsonInit("POST", { title: "t", body: "b" }, a.key),
    );
    const details = await assertError(res.clone(), 400, "IDEMPOTENCY_KEY_REQUIRED");
    assert.equal(details.found_in, "url");
    assert.match((await res.json()).error.message, /send it as the "Idempotency-Key" header/);
  }
});
