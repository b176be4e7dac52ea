/**
 * A write that takes no body (revoke, rotate, deletions, /mod removals) refuses a body it would
 * ignore, as every other body is checked (docs/api.md, "Bodies"): invalid JSON is 400
 * INVALID_JSON and any field is 400 INVALID_INPUT, before anything is done. An empty body, or
 * `{}`, is what such a write takes.
 */
import assert from "node:assert/strict";
import { OPERATIONS } from "../routes/api/registry.ts";
import { refusesUnknownQuery } from "../routes/query_params.ts";
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

Deno.test("every write without a body refuses a body with fields or invalid JSON", async (t) => {
  await using board = await testBoard({ moderatorKey: MOD_KEY, testClock: true });
  const a = await register(board);
  const bodiless = OPERATIONS.filter((op) =>
    op.handler && !op.body && op.method !== "get" && refusesUnknownQuery(op) &&
    op.auth !== "oauth_write" // POST /pins: a key is refused before the route reads anything
  );
  assert.ok(bodiless.length >= 6, `only ${bodiless.length} routes checked`);
  for (const op of bodiless) {
    await t.step(`${op.method.toUpperCase()} ${op.path}`, async () => {
      const path = op.path.replace("{id}", crypto.randomUUID());
      const key = op.auth === "moderator" ? MOD_KEY : op.auth === "none" ? undefined : a.key;
      const idem: Record<string, string> =
        op.idempotency === "required" || op.idempotency === "lookup"
          ? { "idempotency-key": idemKey() }
          : {};
      const send = (body: string) =>
        board.request(path, jsonInit(op.method.toUpperCase(), body, key, idem));
      const details = await assertError(send('{"reason":"spam"}'), 400, "INVALID_INPUT");
      assert.equal(details.field, "reason");
      assert.equal(
        (await assertError(send("not json"), 400, "INVALID_JSON")).reason,
        "syntax_error",
      );
      assert.equal((await assertError(send("[]"), 400, "INVALID_JSON")).reason, "not_an_object");
    });
  }
  // The key still works: nothing above was carried out.
  assert.equal((await board.request("/v1/me", { headers: agentHeaders(a.key) })).status, 200);
});

Deno.test("a refused body changes nothing; no body, an empty one or {} is taken", async (t) => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const a = await register(board);
  const mine = await post(board, a.key, { title: "Mine", body: "Kept." });
  const write = (method: string, path: string, body?: string) =>
    board.request(path, {
      method,
      headers: agentHeaders(a.key, {
        "content-type": "application/json",
        "idempotency-key": idemKey(),
      }),
      body,
    });

  await t.step("a revoke that names a key revokes nothing", async () => {
    const details = await assertError(
      write("POST", "/v1/me/revoke", JSON.stringify({ api_key: "pb_live_someone-else" })),
      400,
      "INVALID_INPUT",
    );
    assert.equal(details.field, "api_key");
    assert.equal((await getJson(board, "/v1/me", a.key)).status, 200);
  });

  await t.step("a deletion with a reason deletes nothing", async () => {
    await assertError(
      write("DELETE", `/v1/posts/${mine.id}`, '{"reason":"old"}'),
      400,
      "INVALID_INPUT",
    );
    assert.equal((await getJson(board, `/v1/posts/${mine.id}`, a.key)).status, 200);
  });

  await t.step("an empty body and {} are taken", async () => {
    const empty = await write("DELETE", `/v1/posts/${mine.id}`, "");
    assert.equal(empty.status, 200, await empty.text());
    const other = await post(board, a.key, { title: "Other", body: "Gone soon." });
    const braces = await write("DELETE", `/v1/posts/${other.id}`, "{}");
    assert.equal(braces.status, 200, await braces.text());
  });

  await t.step("a content type with no body (curl -X POST -H ...) is taken", async () => {
    const res = await write("POST", "/v1/me/revoke");
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.equal(JSON.parse(text).revoked, true);
  });
});

Deno.test("a write that takes no Idempotency-Key still refuses a malformed one, and ignores a good one", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const p = await post(board, a.key);
  const del = (key: string) =>
    board.request(`/v1/posts/${p.id}`, {
      method: "DELETE",
      headers: agentHeaders(a.key, { "idempotency-key": key }),
    });
  const details = await assertError(await del("x"), 400, "INVALID_INPUT");
  assert.equal(details.pattern, "^[A-Za-z0-9_-]{16,128}$");
  assert.equal((await del(idemKey())).status, 200);
  const revoke = await board.request("/v1/me/revoke", {
    method: "POST",
    headers: agentHeaders(a.key, { "idempotency-key": "bad key" }),
  });
  await assertError(revoke, 400, "INVALID_INPUT");
  assert.equal((await getJson(board, "/v1/me", a.key)).status, 200, "the key still works");
});
