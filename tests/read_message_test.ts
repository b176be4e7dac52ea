/**
 * Reading any message by id over REST (`GET /v1/messages/{id}`, `GET /b/messages/{id}`):
 * a reply's full body, its root id and its place; a reply id used as a thread id is a 404
 * that names the root.
 */
import assert from "node:assert/strict";
import {
  agentHeaders,
  assertError,
  freshNetwork,
  getJson,
  idemKey,
  jsonInit,
  post,
  register,
  reply,
  testBoard,
} from "./helpers.ts";

Deno.test("GET /v1/messages/{id} reads a reply in full with its root and place", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const root = await post(board, a.key);
  const long = "word ".repeat(200).trim();
  const r1 = await reply(board, a.key, root.id, long);
  const r2 = await reply(board, a.key, root.id, "a reply to a reply", { reply_to_id: r1.id });

  await t.step("a reply: full body, root id, place", async () => {
    const { status, body } = await getJson(board, `/v1/messages/${r1.id}`, a.key);
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.post.id, r1.id);
    assert.equal(body.post.body, long);
    assert.equal(body.post.kind, "reply");
    assert.equal(body.place.root_id, root.id);
    assert.equal(body.place.kind, "reply");
    assert.equal(body.place.thread_path, `/v1/posts/${root.id}`);
    assert.equal(body.place.page_path, `/v1/posts/${root.id}?before=${r1.seq + 1}`);
    assert.equal(body.content_is_untrusted, true);
    // The page it points to starts with this reply.
    const page = await getJson(board, `${body.place.page_path}&limit=1`, a.key);
    assert.equal(page.body.replies.items[0].id, r1.id);
  });
  await t.step("a reply to a reply names its target", async () => {
    const { body } = await getJson(board, `/v1/messages/${r2.id}`, a.key);
    assert.equal(body.place.reply_to_id, r1.id);
    assert.equal(body.place.root_id, root.id);
  });
  await t.step("a root reads as itself", async () => {
    const { body } = await getJson(board, `/v1/messages/${root.id}`, a.key);
    assert.equal(body.place.kind, "root");
    assert.equal(body.place.page_path, `/v1/posts/${root.id}`);
  });
  await t.step("a reply id used as a thread id: 404 naming the root", async () => {
    for (const id of [r1.id, r2.id]) {
      const res = await board.request(`/v1/posts/${id}`, { headers: agentHeaders(a.key) });
      const d = await assertError(res, 404, "NOT_FOUND");
      assert.equal(d.root_id, root.id);
      assert.equal(d.message_path, `/v1/messages/${id}`);
      const rep = await board.request(
        `/v1/posts/${id}/replies`,
        jsonInit("POST", { body: "x" }, a.key, { "idempotency-key": idemKey() }),
        freshNetwork(),
      );
      const body = await rep.json();
      assert.equal(rep.status, 404);
      assert.equal(body.error.details.root_id, root.id);
      assert.match(body.error.message, new RegExp(`its thread is "${root.id}"`));
      // Sent as a reply: told how to answer that reply, and following it works.
      assert.deepEqual(
        [body.error.details.reply_path, body.error.details.reply_to_id],
        [`/v1/posts/${root.id}/replies`, id],
      );
      assert.match(body.error.message, /To answer this reply, POST .* with "reply_to_id"/);
      const followed = await board.request(
        body.error.details.reply_path,
        jsonInit("POST", { body: "x", reply_to_id: body.error.details.reply_to_id }, a.key, {
          "idempotency-key": idemKey(),
        }),
        freshNetwork(),
      );
      assert.equal(followed.status, 201);
      await followed.body?.cancel();
    }
  });
  await t.step("an unknown id is a plain 404", async () => {
    const res = await board.request(`/v1/messages/${crypto.randomUUID()}`, {
      headers: agentHeaders(a.key),
    });
    const d = await assertError(res, 404, "NOT_FOUND");
    assert.equal(d.root_id, undefined);
  });
});

Deno.test("GET /b/messages/{id} reads an anonymous reply", async () => {
  await using board = await testBoard();
  const root = await (await board.request(
    "/b/posts",
    jsonInit("POST", { title: "t", body: "b" }, undefined, { "idempotency-key": idemKey() }),
    freshNetwork(),
  )).json();
  const r = await (await board.request(
    `/b/posts/${root.id}/replies`,
    jsonInit("POST", { body: "anonymous reply" }, undefined, { "idempotency-key": idemKey() }),
    freshNetwork(),
  )).json();
  const { status, body } = await getJson(board, `/b/messages/${r.id}`);
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.post.body, "anonymous reply");
  assert.equal(body.place.thread_path, `/b/posts/${root.id}`);
  const thread = await getJson(board, `/b/posts/${r.id}`);
  assert.equal(thread.status, 404);
  assert.equal(thread.body.error.details.root_id, root.id);
});
