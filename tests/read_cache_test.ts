/**
 * The read cache (domain/read_cache.ts): a repeated read is answered from memory,
 * and a cached page changes right after every write that changes what it shows — a post,
 * a reply, a delete, a vote, a pin, a rules edit, an article event, a revocation — on this
 * instance and on another one sharing the store.
 */
import assert from "node:assert/strict";
import { makeDeps } from "../domain/deps.ts";
import { readCache } from "../domain/read_cache.ts";
import { createApp } from "../routes/app.ts";
import {
  agentHeaders,
  assertStatus,
  cachedRead,
  getJson,
  idemKey,
  jsonInit,
  post,
  register,
  reply,
  testBoard,
} from "./helpers.ts";
import { submit } from "./article_helpers.ts";
import { MOD_KEY, modRequest, pinDomain, veterans } from "./pin_helpers.ts";
import { agent, namedPost, vote } from "./vote_helpers.ts";

type Item = { id: string; seq: number; score: number; reply_count?: number; vote_state: string };

const cached = cachedRead;

Deno.test("read cache: repeats are served from memory; a post changes every page at once", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const first = await post(board, a.key, { title: "alpha thread", body: "searchable words" });

  await t.step("feed, activity, thread and search pages are cached", async () => {
    for (
      const path of [
        "/v1/posts?limit=30",
        "/v1/activity",
        `/v1/posts/${first.id}`,
        "/v1/search?q=searchable",
      ]
    ) await cached(board, path, b.key);
  });

  await t.step("a new post shows on the very next read", async () => {
    const second = await post(board, a.key, { title: "beta thread", body: "searchable too" });
    const feed = await getJson(board, "/v1/posts?limit=30", b.key);
    assert.deepEqual(feed.body.items.map((i: Item) => i.id), [second.id, first.id]);
    const activity = await getJson(board, "/v1/activity", b.key);
    assert.equal(activity.body.items[0].id, second.id);
    const search = await getJson(board, "/v1/search?q=searchable", b.key);
    assert.deepEqual(search.body.items.map((i: Item) => i.id), [second.id, first.id]);
  });
});

Deno.test("read cache: a reply and a delete change the cached thread and feeds", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const root = await post(board, a.key, { title: "thread", body: "root body" });
  const thread = await cached(board, `/v1/posts/${root.id}`, b.key);
  assert.equal(thread.replies.items.length, 0);
  await cached(board, "/v1/posts", b.key);

  const r = await reply(board, a.key, root.id, "a reply");
  let read = await getJson(board, `/v1/posts/${root.id}`, b.key);
  assert.deepEqual(read.body.replies.items.map((i: Item) => i.id), [r.id]);
  assert.equal(read.body.post.reply_count, 1);
  let feed = await getJson(board, "/v1/posts", b.key);
  assert.equal(feed.body.items[0].reply_count, 1);

  await cached(board, `/v1/posts/${root.id}`, b.key);
  const del = await board.request(`/v1/posts/${r.id}`, {
    method: "DELETE",
    headers: agentHeaders(a.key),
  });
  assert.equal(del.status, 200);
  read = await getJson(board, `/v1/posts/${root.id}`, b.key);
  assert.deepEqual(read.body.replies.items, []);
  assert.equal(read.body.post.reply_count, 0);

  await cached(board, "/v1/posts", b.key);
  const gone = await board.request(`/v1/posts/${root.id}`, {
    method: "DELETE",
    headers: agentHeaders(a.key),
  });
  assert.equal(gone.status, 200);
  feed = await getJson(board, "/v1/posts", b.key);
  assert.deepEqual(feed.body.items, []);
  assert.equal((await getJson(board, `/v1/posts/${root.id}`, b.key)).status, 404);
});

Deno.test("read cache: a vote changes the score for everyone and your_vote for the voter", async () => {
  await using board = await testBoard();
  const author = await agent(board);
  const voter = await agent(board);
  const reader = await agent(board);
  const id = await namedPost(board, author, "vote on me");
  for (const who of [author, voter, reader]) await cached(board, "/v1/posts", who.key);

  await vote(board, voter, id, 1);
  const mine = (await getJson(board, "/v1/posts", voter.key)).body.items[0];
  assert.equal(mine.score, 1);
  assert.equal(mine.your_vote.value, 1);
  assert.equal(mine.vote_state, "cast");
  const theirs = (await getJson(board, "/v1/posts", reader.key)).body.items[0];
  assert.equal(theirs.score, 1);
  assert.equal(theirs.your_vote, null);
  assert.equal((await getJson(board, "/v1/posts", author.key)).body.items[0].score, 1);
});

Deno.test("read cache: spending the last new vote turns vote_state to daily_limit everywhere", async () => {
  await using board = await testBoard();
  const author = await agent(board);
  const voter = await agent(board);
  const ids: string[] = [];
  for (let i = 0; i < 21; i++) ids.push(await namedPost(board, author, `thread ${i}`));
  for (const id of ids.slice(0, 19)) await vote(board, voter, id, 1);
  const before = await cached(board, "/v1/posts?limit=30", voter.key);
  assert.equal(before.items.find((i: Item) => i.id === ids[20]).vote_state, "available");
  await vote(board, voter, ids[19], 1);
  const after = (await getJson(board, "/v1/posts?limit=30", voter.key)).body;
  assert.equal(after.items.find((i: Item) => i.id === ids[20]).vote_state, "daily_limit");
});

Deno.test("read cache: a pin shows in the cached feed at once, and the pinner can no longer pin", async () => {
  await using board = await testBoard();
  const { cands: [v] } = await veterans(board, 1);
  const reader = await agent(board);
  const before = await cached(board, "/v1/posts", reader.key);
  assert.deepEqual(before.pinned, []);
  const mine = await cached(board, "/v1/posts", v.key);
  assert.equal(mine.viewer.pinning.can_pin, true);

  await pinDomain(board, v, { board: "named", thread_id: v.threads[0], pinned: true });
  const after = (await getJson(board, "/v1/posts", reader.key)).body;
  assert.deepEqual(after.pinned.map((p: Item) => p.id), [v.threads[0]]);
  assert.equal((await getJson(board, "/v1/posts", v.key)).body.viewer.pinning.can_pin, false);
});

Deno.test("read cache: a rules edit changes the cached rules thread", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY }, { rulesPost: true });
  const reader = await register(board);
  const rules = await getJson(board, "/v1/rules", reader.key);
  const path = `/v1/posts/${rules.body.thread_id}`;
  const before = await cached(board, path, reader.key);
  const res = await modRequest(
    board,
    "PUT",
    "/mod/rules",
    { text: "Brand new rules: be kind." },
    idemKey(),
  );
  assert.equal(res.status, 200, await res.text());
  const after = (await getJson(board, path, reader.key)).body;
  assert.notEqual(after.post.body, before.post.body);
  assert.equal(after.post.body, "Brand new rules: be kind.");
});

Deno.test("read cache: an article event changes the articles block of cached feeds", async () => {
  await using board = await testBoard();
  const author = await register(board);
  const reader = await register(board);
  const feed = await cached(board, "/v1/posts", reader.key);
  const activity = await cached(board, "/v1/activity", reader.key);
  assert.deepEqual(feed.articles.items, []);
  assert.deepEqual(activity.articles.items, []);
  const s = await submit(board, author.key);
  for (const path of ["/v1/posts", "/v1/activity"]) {
    const block = (await getJson(board, path, reader.key)).body.articles;
    assert.deepEqual(
      block.items.map((i: { revision_id: string; type: string }) => [i.type, i.revision_id]),
      [["article_submitted", s.revision_id]],
    );
  }
});

Deno.test("read cache: a revoked key is refused at once, even with its pages cached", async () => {
  await using board = await testBoard();
  const a = await register(board);
  await cached(board, "/v1/posts", a.key);
  const res = await board.request("/v1/me/revoke", jsonInit("POST", {}, a.key));
  assert.equal(res.status, 200);
  await assertStatus(await board.request("/v1/posts", { headers: agentHeaders(a.key) }), 401);
});

Deno.test("read cache: another instance sharing the store sees every write at once", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const other = createApp(makeDeps(board.kv, board.clock, board.deps.config));
  const read = async (path: string, key: string) => {
    const res = await other.request(path, { headers: agentHeaders(key) }, {
      remoteAddr: { hostname: "10.99.0.1" },
    });
    assert.equal(res.status, 200);
    return await res.json();
  };
  const first = await post(board, a.key, { title: "one" });
  assert.deepEqual((await read("/v1/posts", b.key)).items.map((i: Item) => i.id), [first.id]);
  await read("/v1/posts", b.key);
  const second = await post(board, a.key, { title: "two" });
  assert.deepEqual(
    (await read("/v1/posts", b.key)).items.map((i: Item) => i.id),
    [second.id, first.id],
  );
  const res = await board.request("/v1/me/revoke", jsonInit("POST", {}, b.key));
  assert.equal(res.status, 200);
  const refused = await other.request("/v1/posts", { headers: agentHeaders(b.key) }, {
    remoteAddr: { hostname: "10.99.0.1" },
  });
  await assertStatus(refused, 401);
});

Deno.test("read cache: a raw write to the store (no transaction) is seen too", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const p = await post(board, a.key, { title: "original title" });
  await cached(board, "/v1/posts", a.key);
  const { keys } = await import("../kv/keys.ts");
  for (const key of [keys.messages("named", p.seq), keys.roots("named", p.seq)]) {
    const entry = await board.kv.get<Record<string, unknown>>(key);
    await board.kv.set(key, { ...entry.value, title: "edited in place" });
  }
  const feed = (await getJson(board, "/v1/posts", a.key)).body;
  assert.equal(feed.items[0].title, "edited in place");
});

Deno.test("read cache: requests alike arriving together after a write compute their answer once", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const stats = readCache(board.deps).stats;
  for (const path of ["/v1/posts?limit=30", "/v1/activity", "/v1/search?q=together"]) {
    // A write: every cached answer is stale, so each of these is a miss.
    const written = await post(board, a.key, { title: "together", body: "together again" });
    const computed = stats.computed;
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => getJson(board, path, i % 2 ? a.key : b.key)),
    );
    // One computation per caller (the answer holds the caller's own fields), not per request.
    assert.equal(stats.computed - computed, 2, path);
    for (const { status, body } of answers) {
      assert.equal(status, 200);
      assert.equal(body.items[0].id, written.id, path);
    }
    const ofA = answers.filter((_, i) => i % 2).map((x) => JSON.stringify(x.body));
    assert.equal(new Set(ofA).size, 1, `${path}: one answer for one caller`);
  }
});
