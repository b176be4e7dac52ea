import assert from "node:assert/strict";
import {
  agentHeaders,
  assertError,
  assertStatus,
  getJson,
  idemKey,
  jsonInit,
  post,
  register,
  testBoard,
} from "./helpers.ts";

type Board = Awaited<ReturnType<typeof testBoard>>;
type Item = {
  id: string;
  seq: number;
  author: string;
  agent_id?: string;
  kind: string;
  actions: { template: string }[];
};

async function anonPost(
  board: Board,
  body: unknown,
  network = "192.0.2.10",
  idem = idemKey(),
  path = "/b/posts",
) {
  const res = await board.request(
    path,
    jsonInit("POST", body, undefined, { "idempotency-key": idem }),
    network,
  );
  return { status: res.status, body: await res.json() };
}

Deno.test("/b: post, reply, read and poll without an account", async (t) => {
  await using board = await testBoard();
  const root = await anonPost(board, { title: "Unsorted hello", body: "no account needed" });
  await t.step("201 receipt with a /b url", () => {
    assert.equal(root.status, 201);
    assert.equal(root.body.thread_id, null);
    assert.equal(root.body.url, `http://board.test/b/posts/${root.body.id}`);
  });
  const rep = await anonPost(
    board,
    { body: "anon reply" },
    "192.0.2.11",
    idemKey(),
    `/b/posts/${root.body.id}/replies`,
  );
  await t.step("replies attach to the root", () => {
    assert.equal(rep.status, 201);
    assert.equal(rep.body.thread_id, root.body.id);
  });
  await t.step("feeds: authors are anonymous, no agent_id, own sequence", async () => {
    const feed = await getJson(board, "/b/posts");
    assert.equal(feed.status, 200);
    assert.equal(feed.body.items.length, 1);
    const item = feed.body.items[0];
    assert.equal(item.author, "anonymous");
    assert.ok(!("agent_id" in item));
    assert.equal(item.seq, 1);
    assert.equal(feed.body.content_is_untrusted, true);
    assert.equal(feed.body.viewer.anonymous, true);
    assert.ok("pinned" in feed.body);
    assert.equal(feed.body.articles, undefined, "no articles block on /b");
    assert.ok(!item.actions.some((a: { template: string }) => a.template === "delete"));
    const act = await getJson(board, "/b/activity");
    assert.deepEqual(act.body.items.map((i: Item) => i.id), [rep.body.id, root.body.id]);
    assert.equal(act.body.items[0].seq, 2);
  });
  await t.step("thread read with full bodies", async () => {
    const thread = await getJson(board, `/b/posts/${root.body.id}`);
    assert.equal(thread.status, 200);
    assert.equal(thread.body.post.body, "no account needed");
    assert.equal(thread.body.replies.items[0].body, "anon reply");
    assert.equal(thread.body.content_is_untrusted, true);
  });
  await t.step("cursors work as on the named board", async () => {
    const page = await getJson(board, "/b/activity?limit=1");
    assert.equal(page.body.next_before, 2);
    const newer = await getJson(board, "/b/activity?after=1");
    assert.deepEqual(newer.body.items.map((i: Item) => i.seq), [2]);
  });
});

Deno.test("/b: a sent Authorization is ignored and never linked to the message", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await board.request(
    "/b/posts",
    jsonInit("POST", { title: "t", body: "b" }, a.key, { "idempotency-key": idemKey() }),
  );
  assert.equal(res.status, 201);
  const { id } = await res.json();
  const thread = await getJson(board, `/b/posts/${id}`, a.key);
  assert.equal(thread.body.post.author, "anonymous");
  assert.ok(!JSON.stringify(thread.body).includes(a.id));
  const me = await getJson(board, "/v1/me", a.key);
  assert.equal(me.body.posting_quota.used, 0, "never counts toward an account's 500/day");
  // Even an invalid key is ignored.
  const bogus = await board.request(
    "/b/posts",
    jsonInit("POST", { title: "t", body: "b" }, "not-a-key", { "idempotency-key": idemKey() }),
  );
  await assertStatus(bogus, 201);
});

Deno.test("/b: no topics, no author delete, same headers, limits and errors", async (t) => {
  await using board = await testBoard();
  const root = await anonPost(board, { title: "t", body: "b" });
  await t.step("topic in the body is 400", async () => {
    const r = await anonPost(board, { title: "t", body: "b", topic: "general" });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, "INVALID_INPUT");
  });
  await t.step("topic filter is 400", async () => {
    const r = await getJson(board, "/b/posts?topic=general");
    assert.equal(r.status, 400);
  });
  await t.step("DELETE is not offered", async () => {
    const res = await board.request(`/b/posts/${root.body.id}`, {
      method: "DELETE",
      headers: agentHeaders(),
    });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET, HEAD");
    // The refusal says why, so an agent does not look for another way to delete.
    const body = await res.json();
    assert.match(body.error.message, /anonymous board has no author delete/);
    assert.match(body.error.message, /moderators/);
  });
  await t.step("headers are required", async () => {
    await assertError(
      board.request("/b/posts", { headers: { accept: "application/json" } }),
      400,
      "PROTOCOL_REQUIRED",
    );
    await assertError(
      board.request("/b/posts", { headers: { "x-agent-protocol": "board/1" } }),
      400,
      "JSON_REQUIRED",
    );
  });
  await t.step("browsers are refused", async () => {
    await assertError(
      await board.request("/b/posts", {
        headers: agentHeaders(undefined, { "sec-fetch-site": "cross-site" }),
      }),
      403,
      "BROWSER_BLOCKED",
    );
  });
  await t.step("Idempotency-Key is required and size limits apply", async () => {
    const res = await board.request("/b/posts", jsonInit("POST", { title: "t", body: "b" }));
    await assertError(res, 400, "IDEMPOTENCY_KEY_REQUIRED");
    const big = await anonPost(board, { title: "t", body: "é".repeat(4097) });
    assert.equal(big.status, 413);
    assert.equal(big.body.error.details.actual_bytes, 8194);
  });
  await t.step("limit validation", async () => {
    const r = await getJson(board, "/b/posts?limit=31");
    assert.equal(r.body.error.code, "INVALID_LIMIT");
  });
});

Deno.test("/b: a topic filter of any form is told the board has no topics", async () => {
  await using board = await testBoard();
  for (const path of ["/b/posts", "/b/activity"]) {
    // Empty or malformed, it is the board that has none: not a topic to correct.
    for (const query of ["topic=general", "topic=", "topic", "topic=Bad_Topic"]) {
      const r = await getJson(board, `${path}?${query}`);
      assert.equal(r.status, 400, `${path}?${query}`);
      assert.equal(r.body.error.code, "INVALID_INPUT");
      assert.match(r.body.error.message, /anonymous board has no topics/, `${path}?${query}`);
      assert.deepEqual(r.body.error.details, { parameter: "topic" });
    }
  }
});

Deno.test("/b: idempotency keys are scoped per network", async () => {
  await using board = await testBoard();
  const key = idemKey();
  const first = await anonPost(board, { title: "same", body: "same" }, "198.51.100.1", key);
  assert.equal(first.status, 201);
  const replay = await anonPost(board, { title: "same", body: "same" }, "198.51.100.1", key);
  assert.equal(replay.status, 200);
  assert.equal(replay.body.replayed, true);
  assert.equal(replay.body.id, first.body.id);
  const conflict = await anonPost(board, { title: "same", body: "different" }, "198.51.100.1", key);
  assert.equal(conflict.status, 409);
  assert.equal(conflict.body.error.code, "IDEMPOTENCY_CONFLICT");
  assert.deepEqual(
    conflict.body.error.details,
    { header: "Idempotency-Key" },
    "no lookup link: the lookup cannot find /b writes",
  );
  const otherNet = await anonPost(board, { title: "same", body: "same" }, "198.51.100.2", key);
  assert.equal(otherNet.status, 201, "another network's key space is separate");
  assert.notEqual(otherNet.body.id, first.body.id);
  // One IPv6 /64 is one network.
  const v6a = await anonPost(board, { title: "v6", body: "v6" }, "2001:db8:1:2::1", key);
  const v6b = await anonPost(board, { title: "v6", body: "v6" }, "2001:db8:1:2:ffff::9", key);
  assert.equal(v6a.status, 201);
  assert.equal(v6b.status, 200);
});

Deno.test("/b and the named board never mix", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const named = await post(board, a.key, { title: "named thread" });
  const anon = await anonPost(board, { title: "anon thread", body: "x" });
  const namedFeed = await getJson(board, "/v1/activity", a.key);
  assert.deepEqual(namedFeed.body.items.map((i: Item) => i.id), [named.id]);
  const topicFeed = await getJson(board, "/v1/posts?topic=general", a.key);
  assert.ok(!topicFeed.body.items.some((i: Item) => i.id === anon.body.id));
  const anonFeed = await getJson(board, "/b/activity");
  assert.deepEqual(anonFeed.body.items.map((i: Item) => i.id), [anon.body.id]);
  assert.equal((await getJson(board, `/b/posts/${named.id}`)).status, 404);
  assert.equal((await getJson(board, `/v1/posts/${anon.body.id}`, a.key)).status, 404);
  // Replying across boards is refused.
  const cross = await anonPost(
    board,
    { body: "x" },
    "192.0.2.1",
    idemKey(),
    `/b/posts/${named.id}/replies`,
  );
  assert.equal(cross.status, 404);
  assert.equal(named.seq, 1);
  assert.equal(anon.body.seq, 1, "each board has its own sequence");
});
