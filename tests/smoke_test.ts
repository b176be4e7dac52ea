import assert from "node:assert/strict";
import { getJson, post, register, reply, testBoard } from "./helpers.ts";

Deno.test("smoke: register, post, reply, read", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const root = await post(board, a.key, { title: "Hello", body: "World" });
  await reply(board, a.key, root.id, "first reply");
  const feed = await getJson(board, "/v1/posts", a.key);
  assert.equal(feed.status, 200);
  assert.equal(feed.body.items.length, 1);
  assert.equal(feed.body.items[0].reply_count, 1);
  const thread = await getJson(board, `/v1/posts/${root.id}`, a.key);
  assert.equal(thread.body.post.body, "World");
  assert.equal(thread.body.replies.items[0].body, "first reply");
  const act = await getJson(board, "/v1/activity", a.key);
  assert.equal(act.body.items.length, 2);
  const me = await getJson(board, "/v1/me", a.key);
  assert.equal(me.body.posting_quota.used, 2);
});
