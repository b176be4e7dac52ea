/**
 * `null` for an optional body field means the field is absent (many serializers write it);
 * an idempotent replay matches whether the field was omitted or null.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { dropNullOptionals } from "../routes/validate.ts";
import {
  assertError,
  freshNetwork,
  getJson,
  idemKey,
  jsonInit,
  post,
  register,
  testBoard,
} from "./helpers.ts";

Deno.test("dropNullOptionals() drops the nulls of optional, non-nullable and unknown fields", () => {
  const schema = z.strictObject({
    req: z.string(),
    opt: z.string().optional(),
    nul: z.string().nullable().optional(),
  });
  assert.deepEqual(
    dropNullOptionals(schema, { req: null, opt: null, nul: null, extra: null }),
    { req: null, nul: null },
  );
  // A body that takes no field keeps them all, to be refused.
  assert.deepEqual(dropNullOptionals(z.strictObject({}), { extra: null }), { extra: null });
});

Deno.test("null optional fields are taken as absent, also for replays", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const send = (path: string, body: unknown, key: string) =>
    board.request(path, jsonInit("POST", body, a.key, { "idempotency-key": key }), freshNetwork());

  await t.step(
    '"topic": null posts to the default topic; the replay without it matches',
    async () => {
      const key = idemKey();
      const first = await send("/v1/posts", { title: "t", body: "b", topic: null }, key);
      const receipt = await first.json();
      assert.equal(first.status, 201, JSON.stringify(receipt));
      const again = await send("/v1/posts", { title: "t", body: "b" }, key);
      const replay = await again.json();
      assert.equal(again.status, 200, JSON.stringify(replay));
      assert.equal(replay.replayed, true);
      assert.equal(replay.id, receipt.id);
    },
  );

  await t.step('"reply_to_id": null replies to the root; omitted then null replays', async () => {
    const root = await post(board, a.key);
    const key = idemKey();
    const path = `/v1/posts/${root.id}/replies`;
    const first = await send(path, { body: "r" }, key);
    assert.equal(first.status, 201);
    const receipt = await first.json();
    const again = await send(path, { body: "r", reply_to_id: null }, key);
    const replay = await again.json();
    assert.equal(again.status, 200, JSON.stringify(replay));
    assert.equal(replay.id, receipt.id);
  });

  await t.step("null for a required field is still refused, naming it", async () => {
    const details = await assertError(
      send("/v1/posts", { title: null, body: "b" }, idemKey()),
      400,
      "INVALID_INPUT",
    );
    assert.equal(details.field, "title");
  });
});

Deno.test("a 161-character title is one issue", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await board.request(
    "/v1/posts",
    jsonInit("POST", { title: "x".repeat(161), body: "b" }, a.key, {
      "idempotency-key": idemKey(),
    }),
    freshNetwork(),
  );
  const details = await assertError(res, 400, "INVALID_INPUT");
  assert.equal(details.issues.length, 1, JSON.stringify(details));
  assert.equal(details.field, "title");
});

Deno.test("an unknown body field is named; /b says it has no topics", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const named = await board.request(
    "/v1/posts",
    jsonInit("POST", { title: "t", body: "b", tags: ["x"] }, a.key, {
      "idempotency-key": idemKey(),
    }),
    freshNetwork(),
  );
  const d = await assertError(named, 400, "INVALID_INPUT");
  assert.equal(d.field, "tags");
  const anon = await board.request(
    "/b/posts",
    jsonInit("POST", { title: "t", body: "b", topic: "general" }, undefined, {
      "idempotency-key": idemKey(),
    }),
    freshNetwork(),
  );
  const body = await anon.json();
  assert.equal(anon.status, 400);
  assert.equal(body.error.details.field, "topic");
  assert.match(body.error.message, /anonymous board has no topics: remove "topic"/);
});

Deno.test('"topic": null on /b is absent, as on the named board; a write without a body still refuses a null field', async () => {
  await using board = await testBoard();
  const a = await register(board);
  const key = idemKey();
  const net = freshNetwork(); // /b keys are the network's
  const post = (body: unknown) =>
    board.request("/b/posts", jsonInit("POST", body, undefined, { "idempotency-key": key }), net);
  const made = await post({ title: "One struct", body: "For both boards", topic: null });
  assert.equal(made.status, 201, await made.clone().text());
  const id = (await made.json()).id;
  // The same key without the field replays it: the null was never part of the request.
  const again = await post({ title: "One struct", body: "For both boards" });
  assert.deepEqual([again.status, (await again.json()).id], [200, id]);
  const revoke = await board.request(
    "/v1/me/revoke",
    jsonInit("POST", { api_key: null }, a.key, { "idempotency-key": idemKey() }),
  );
  const d = await assertError(revoke, 400, "INVALID_INPUT");
  assert.equal(d.field, "api_key");
  assert.equal((await getJson(board, "/v1/me", a.key)).status, 200, "the key still works");
});
