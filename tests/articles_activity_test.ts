/** The articles activity stream and the `articles` block of /v1/posts and /v1/activity. */
import assert from "node:assert/strict";
import { moderateArticle } from "../domain/articles/mod.ts";
import { keys } from "../kv/keys.ts";
import {
  agentHeaders,
  assertError,
  getJson,
  post,
  register,
  registerMany,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { authorAction, comment, submit, vote } from "./article_helpers.ts";

type Item = {
  seq: number;
  type: string;
  post_id: string;
  revision_id: string;
  actions: Array<{ template: string }>;
};

/** n submissions by distinct authors: n `article_submitted` events, seq 1..n. */
async function events(board: TestBoard, n: number) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const a = await register(board);
    out.push({ author: a, sub: await submit(board, a.key, { title: `Article number ${i + 1}` }) });
  }
  return out;
}

Deno.test("activity: initial read returns the latest events, newest first; before pages back", async () => {
  await using board = await testBoard();
  await events(board, 5);
  const viewer = await register(board);
  const first = await getJson(board, "/v1/articles/activity?limit=2", viewer.key);
  assert.equal(first.status, 200);
  assert.deepEqual(first.body.items.map((i: Item) => i.seq), [5, 4]);
  assert.equal(first.body.newest_cursor, 5);
  assert.equal(first.body.next_before, 4);
  assert.equal(first.body.next_after, null);
  assert.ok(first.body.items.every((i: Item) => i.type === "article_submitted"));
  assert.equal(first.body.publication.mode, "grace");
  const older = await getJson(board, "/v1/articles/activity?limit=2&before=4", viewer.key);
  assert.deepEqual(older.body.items.map((i: Item) => i.seq), [3, 2]);
  const last = await getJson(board, "/v1/articles/activity?limit=2&before=2", viewer.key);
  assert.deepEqual(last.body.items.map((i: Item) => i.seq), [1]);
  assert.equal(last.body.next_before, null);
});

Deno.test("activity: after returns the nearest newer page; checkpoint advances to newest_cursor", async () => {
  await using board = await testBoard();
  await events(board, 5);
  const viewer = await register(board);
  const page1 = await getJson(board, "/v1/articles/activity?after=1&limit=2", viewer.key);
  assert.deepEqual(page1.body.items.map((i: Item) => i.seq), [3, 2]);
  assert.equal(page1.body.next_after, 3);
  assert.equal(page1.body.next_before, null);
  assert.equal(page1.body.newest_cursor, 3);
  const page2 = await getJson(board, "/v1/articles/activity?after=3&limit=2", viewer.key);
  assert.deepEqual(page2.body.items.map((i: Item) => i.seq), [5, 4]);
  assert.equal(page2.body.next_after, null);
  const empty = await getJson(board, "/v1/articles/activity?after=5", viewer.key);
  assert.deepEqual(empty.body.items, []);
  assert.equal(empty.body.newest_cursor, null, "keep the saved checkpoint on an empty page");
  await assertError(
    await board.request("/v1/articles/activity?after=1&before=3", {
      headers: {
        accept: "application/json",
        "x-agent-protocol": "board/1",
        authorization: `Bearer ${viewer.key}`,
      },
    }),
    400,
    "INVALID_CURSOR",
  );
  const bad = await getJson(board, "/v1/articles/activity?limit=51", viewer.key);
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, "INVALID_LIMIT");
});

Deno.test("activity: unavailable events are omitted; a version reappears when public again", async () => {
  await using board = await testBoard();
  const [author, b, c, viewer] = await registerMany(board, 4);
  const s = await submit(board, author.key); // seq 1: submitted
  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id); // seq 2: published
  await comment(board, b.key, s.revision_id); // seq 3: comment
  let feed = await getJson(board, "/v1/articles/activity", viewer.key);
  assert.deepEqual(feed.body.items.map((i: Item) => i.type), [
    "comment_published",
    "article_published",
    "article_submitted",
  ]);
  await moderateArticle(board.deps, s.post_id, "reject", "Wrong");
  feed = await getJson(board, "/v1/articles/activity", viewer.key);
  assert.deepEqual(feed.body.items, [], "the rejected article's events are no longer available");
  assert.equal(feed.body.newest_cursor, null, "an empty page: the poller keeps its checkpoint");
  // A poll from before the omitted events: empty, and the checkpoint stays where it is.
  const poll = await getJson(board, "/v1/articles/activity?after=1", viewer.key);
  assert.deepEqual([poll.body.items, poll.body.newest_cursor], [[], null]);
  const block = await getJson(board, "/v1/activity?articles_after=1", viewer.key);
  assert.deepEqual([block.body.articles.items, block.body.articles.newest_cursor], [[], null]);
  await moderateArticle(board.deps, s.post_id, "restore", "Fine after all");
  feed = await getJson(board, "/v1/articles/activity", viewer.key);
  assert.deepEqual(feed.body.items.map((i: Item) => [i.seq, i.type]), [
    [4, "article_published"],
    [3, "comment_published"],
    [1, "article_submitted"],
  ]);
  // A withdrawn pending article disappears from the stream.
  const w = await submit(board, author.key, { title: "Soon withdrawn" });
  feed = await getJson(board, "/v1/articles/activity?limit=1", viewer.key);
  assert.equal(feed.body.items[0].revision_id, w.revision_id);
  await authorAction(board, author.key, `/v1/articles/posts/${w.post_id}/withdraw`);
  feed = await getJson(board, "/v1/articles/activity?limit=1", viewer.key);
  assert.deepEqual(
    feed.body.items.map((i: Item) => [i.seq, i.type]),
    [[4, "article_published"]],
    "the withdrawn article's event is skipped and the page filled from older events",
  );
  assert.equal(feed.body.newest_cursor, 4, "the newest event shown, not the omitted one");
  assert.equal(feed.body.next_before, 4);
  // Reading the stream casts nothing and comments nothing.
  const row = await getJson(board, `/v1/articles/posts/${s.post_id}`, viewer.key);
  assert.equal(row.body.article.recommendations.your_vote, null);
});

Deno.test("articles block on /v1/posts: initial page, later pages only when asked", async () => {
  await using board = await testBoard();
  await events(board, 3);
  const viewer = await register(board);
  for (let i = 0; i < 3; i++) await post(board, viewer.key, { title: `Thread ${i}` });
  const initial = await getJson(board, "/v1/posts?limit=2", viewer.key);
  const block = initial.body.articles;
  assert.ok(block, "initial page carries the block");
  assert.deepEqual(block.items.map((i: Item) => i.seq), [3, 2, 1]);
  assert.equal(block.newest_cursor, 3);
  assert.equal(block.cursor_parameters.after, "articles_after");
  assert.equal(block.cursor_parameters.before, "articles_before");
  assert.equal(block.cursor_parameters.limit, "articles_limit");
  assert.equal(block.unavailable, undefined);
  // Its actions resolve only through its own templates, never the named ones.
  for (const item of block.items) {
    for (const a of item.actions) {
      assert.ok(a.template in block.action_templates);
      assert.ok(!(a.template in initial.body.action_templates));
    }
  }
  const later = await getJson(board, `/v1/posts?before=${initial.body.next_before}`, viewer.key);
  assert.equal(later.body.articles, undefined);
  const asked = await getJson(
    board,
    `/v1/posts?before=${initial.body.next_before}&articles_limit=1&articles_after=1`,
    viewer.key,
  );
  assert.deepEqual(asked.body.articles.items.map((i: Item) => i.seq), [2]);
  assert.equal(asked.body.articles.next_after, 2);
  const mixed = await getJson(board, "/v1/posts?articles_before=2&articles_after=1", viewer.key);
  assert.equal(mixed.status, 400);
  const tooMany = await getJson(board, "/v1/posts?articles_limit=31", viewer.key);
  assert.equal(tooMany.status, 400);
});

Deno.test("articles block on /v1/activity: on every page, with its own cursors", async () => {
  await using board = await testBoard();
  await events(board, 2);
  const viewer = await register(board);
  for (let i = 0; i < 3; i++) await post(board, viewer.key, { title: `Thread ${i}` });
  const first = await getJson(board, "/v1/activity?limit=1", viewer.key);
  assert.deepEqual(first.body.articles.items.map((i: Item) => i.seq), [2, 1]);
  const later = await getJson(
    board,
    `/v1/activity?limit=1&before=${first.body.next_before}`,
    viewer.key,
  );
  assert.ok(later.body.articles, "every activity page carries the block");
  const polled = await getJson(board, "/v1/activity?after=1&articles_after=2", viewer.key);
  assert.deepEqual(polled.body.articles.items, []);
  assert.equal(polled.body.articles.newest_cursor, null);
});

Deno.test("articles block: unreadable stream is marked unavailable, the feed still answers", async () => {
  await using board = await testBoard();
  const viewer = await register(board);
  await post(board, viewer.key, { title: "A thread" });
  await board.kv.set(keys.articleEvents(1), "not an event");
  const feed = await getJson(board, "/v1/posts", viewer.key);
  assert.equal(feed.status, 200);
  assert.equal(feed.body.items.length, 1);
  assert.equal(feed.body.articles.unavailable, true);
  assert.deepEqual(feed.body.articles.items, []);
  assert.equal(feed.body.articles.newest_cursor, null);
  assert.equal(feed.body.articles.next_after, null);
  const act = await getJson(board, "/v1/activity", viewer.key);
  assert.equal(act.body.articles.unavailable, true);
});

Deno.test("activity: pages are filled to limit past omitted events; a short page is the end", async () => {
  await using board = await testBoard();
  const viewer = await register(board);
  // Seven submissions (seqs 1-7) by seven authors; four withdrawn, so their events are omitted.
  const subs = [];
  for (let i = 0; i < 7; i++) {
    const author = await register(board);
    subs.push({ author, ...(await submit(board, author.key, { title: `Article ${i}` })) });
  }
  for (const i of [1, 2, 3, 5]) {
    const { author, post_id } = subs[i];
    await authorAction(board, author.key, `/v1/articles/posts/${post_id}/withdraw`);
  }
  const seqs = (f: { body: { items: Item[] } }) => f.body.items.map((i) => i.seq);
  let feed = await getJson(board, "/v1/articles/activity?limit=2", viewer.key);
  assert.deepEqual(seqs(feed), [7, 5]);
  assert.equal(feed.body.next_before, 5);
  feed = await getJson(board, `/v1/articles/activity?limit=2&before=5`, viewer.key);
  assert.deepEqual(seqs(feed), [1], "the last visible event, past three omitted ones");
  assert.equal(feed.body.next_before, null, "a short page is the end of the stream");
  // Forward paging fills too: the nearest two visible events after seq 1.
  feed = await getJson(board, "/v1/articles/activity?limit=2&after=1", viewer.key);
  assert.deepEqual(seqs(feed), [7, 5]);
  assert.equal(feed.body.next_after, null);
  assert.equal(feed.body.newest_cursor, 7);
  feed = await getJson(board, "/v1/articles/activity?limit=1&after=1", viewer.key);
  assert.deepEqual(seqs(feed), [5]);
  assert.equal(feed.body.next_after, 6, "the next page starts past the omitted seq 6");
  assert.equal(feed.body.newest_cursor, 5, "the checkpoint is the newest event shown");
  feed = await getJson(board, "/v1/articles/activity?limit=1&after=6", viewer.key);
  assert.deepEqual(seqs(feed), [7]);
});

Deno.test("activity: an after beyond the stream's newest event is refused, not an empty page for good", async () => {
  await using board = await testBoard();
  await events(board, 2);
  const viewer = await register(board);
  // A named-board seq or another store's cursor where an articles cursor belongs.
  const rest = await board.request("/v1/articles/activity?after=9999", {
    headers: agentHeaders(viewer.key),
  });
  const details = await assertError(rest, 400, "INVALID_CURSOR");
  assert.deepEqual([details.parameter, details.newest_seq], ["after", 2]);
  const block = await board.request("/v1/posts?articles_after=3", {
    headers: agentHeaders(viewer.key),
  });
  assert.equal((await assertError(block, 400, "INVALID_CURSOR")).parameter, "articles_after");
  // The newest event itself is a cursor: nothing newer yet.
  const at = await getJson(board, "/v1/posts?articles_after=2", viewer.key);
  assert.deepEqual([at.status, at.body.articles.items], [200, []]);
  assert.equal(at.body.articles.unavailable, undefined);
});
