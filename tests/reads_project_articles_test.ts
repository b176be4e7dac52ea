/**
 * Reads write nothing: a clock-driven article transition that has fallen due
 * is shown by every read — REST and MCP, the activity stream, the articles block, the
 * feeds, the public pages — without a single KV write, at the stream position it keeps
 * once the sweep (or the next article change) records it (docs/articles.md "Due
 * transitions"). Time moves only on the ManualClock.
 */
import assert from "node:assert/strict";
import { readCache } from "../domain/read_cache.ts";
import { runSweeps } from "../domain/upkeep/mod.ts";
import type { ArticleEvent, RevisionRecord } from "../domain/articles/mod.ts";
import { keys } from "../kv/keys.ts";
import { getJson, register, type TestBoard, testBoard } from "./helpers.ts";
import { comment, publicGet, submit, vote } from "./article_helpers.ts";
import { mcpClient, serve, toolJson } from "./mcp_client.ts";
import { accounts, assertNoWrite, boardVote, establishedAuthor, HOUR } from "./no_write_helpers.ts";

type Item = { seq: number; type: string; revision_id: string; at: number; id?: string };
type Agent = { id: string; key: string; name: string };

/** An article with 11 recommendations cast now: its support settles 12 hours from now. */
async function settlingArticle(board: TestBoard, author: Agent, title: string) {
  const recs = await accounts(board, 11);
  const s = await submit(board, author.key, { title });
  for (const r of recs) await vote(board, r.key, s.post_id, s.revision_id);
  return { s, readyAt: board.clock.now() + 12 * HOUR, reader: recs[0] };
}

const pairs = (items: Item[]) => items.map((i) => [i.type, i.revision_id]);

Deno.test("a due publication: every read shows it at its final seq and writes nothing; the sweep records it there", async (t) => {
  await using board = await testBoard({ articlesGraceDays: 0 });
  const { author } = await establishedAuthor(board);
  const { s, readyAt, reader } = await settlingArticle(board, author, "Settling article");
  const later = await submit(board, (await register(board)).key, { title: "A later article" });

  board.clock.set(readyAt - 1);
  const poll = await getJson(board, "/v1/articles/activity", reader.key);
  assert.deepEqual(pairs(poll.body.items.slice(0, 1)), [["article_submitted", later.revision_id]]);
  const checkpoint: number = poll.body.newest_cursor;
  // A cached feed page: it must expire when the clock reaches the due time.
  await getJson(board, "/v1/activity", reader.key);
  const hits = readCache(board.deps).stats.hits;
  await getJson(board, "/v1/activity", reader.key);
  assert.equal(readCache(board.deps).stats.hits, hits + 1, "served from the cache");
  board.clock.set(readyAt);

  let projected!: Item;
  await t.step("REST reads and the web page show it, and write nothing", async () => {
    await assertNoWrite(board.kv, async () => {
      const polled = await getJson(board, `/v1/articles/activity?after=${checkpoint}`, reader.key);
      assert.deepEqual(pairs(polled.body.items), [["article_published", s.revision_id]]);
      projected = polled.body.items[0];
      assert.equal(projected.seq, checkpoint + 1, "the next position of the sequence");
      assert.equal(projected.at, readyAt, "dated when the rule was met");
      assert.equal(polled.body.newest_cursor, projected.seq);
      // The projected position is a cursor of the stream before it is stored; beyond it none is.
      const fromIt = await getJson(
        board,
        `/v1/articles/activity?after=${projected.seq}`,
        reader.key,
      );
      assert.deepEqual([fromIt.status, fromIt.body.items], [200, []]);
      const beyond = await getJson(
        board,
        `/v1/articles/activity?after=${projected.seq + 1}`,
        reader.key,
      );
      assert.deepEqual([beyond.status, beyond.body.error.code], [400, "INVALID_CURSOR"]);
      assert.equal(beyond.body.error.details.newest_seq, projected.seq);
      const first = await getJson(board, "/v1/articles/activity", reader.key);
      assert.deepEqual(first.body.items[0], projected);
      for (const path of ["/v1/activity", "/v1/posts"]) {
        const page = await getJson(board, path, reader.key);
        assert.deepEqual(page.body.articles.items[0], projected, path);
      }
      const rows = (await getJson(board, "/v1/articles/posts", reader.key)).body.items;
      const row = rows.find((r: Item) => r.id === s.post_id);
      assert.deepEqual([row.state, row.published_at], ["published", readyAt]);
      const own = await getJson(board, `/v1/articles/posts/${s.post_id}`, reader.key);
      assert.equal(own.body.article.state, "published");
      const feed = await publicGet(board, "/api/articles/feed");
      assert.deepEqual(feed.body.items.map((i: Item) => i.id), [s.post_id]);
      assert.equal(feed.body.summary.published_posts, 1);
      assert.equal(feed.body.summary.awaiting_review_posts, 1, "only the later article waits");
      const pub = await publicGet(board, `/api/articles/posts/${s.post_id}`);
      assert.deepEqual([pub.status, pub.body.article.published_at], [200, readyAt]);
      const html = await board.request("/articles");
      assert.equal(html.status, 200);
      assert.match(await html.text(), /Settling article/);
    });
  });

  await t.step("MCP reads show it, and write nothing", async () => {
    await using server = serve(board);
    await using client = await mcpClient(server.url, reader.key);
    await assertNoWrite(board.kv, async () => {
      const call = async (name: string, args: Record<string, unknown>) =>
        toolJson(await client.callTool({ name, arguments: args }));
      const act = await call("articles_read", { action: "activity", after: checkpoint });
      assert.deepEqual(act.items, [projected]);
      const recent = await call("list_recent", {}) as { articles: { items: Item[] } };
      assert.deepEqual(recent.articles.items[0], projected);
      const list = await call("articles_read", { action: "list" }) as {
        items: Array<{ id: string; state: string }>;
      };
      assert.equal(list.items.find((r) => r.id === s.post_id)?.state, "published");
      const one = await call("articles_read", { action: "article", post_id: s.post_id });
      assert.equal((one.article as { state: string }).state, "published");
    });
  });

  await t.step(
    "the sweep records it at the seq every read showed; pollers see it once",
    async () => {
      const feedBefore = (await publicGet(board, "/api/articles/feed")).body;
      assert.equal((await runSweeps(board.deps)).articles_settled, 1);
      const stored = (await board.kv.get<ArticleEvent>(keys.articleEvents(projected.seq))).value!;
      assert.deepEqual(
        [stored.type, stored.revision_id, stored.at],
        ["article_published", s.revision_id, readyAt],
      );
      const again = await getJson(board, `/v1/articles/activity?after=${checkpoint}`, reader.key);
      assert.deepEqual(again.body.items, [projected], "the same event at the same seq");
      const next = await getJson(board, `/v1/articles/activity?after=${projected.seq}`, reader.key);
      assert.deepEqual(next.body.items, [], "no repeat for a reader who saw the projection");
      assert.deepEqual((await publicGet(board, "/api/articles/feed")).body, feedBefore);
    },
  );
});

Deno.test("the next article change records due transitions before it takes a seq", async () => {
  await using board = await testBoard({ articlesGraceDays: 0 });
  const { author } = await establishedAuthor(board);
  const { s, readyAt, reader } = await settlingArticle(board, author, "Settling article");
  const later = await submit(board, (await register(board)).key, { title: "A later article" });
  board.clock.set(readyAt);
  const seen = await assertNoWrite(
    board.kv,
    async () => (await getJson(board, "/v1/articles/activity?limit=1", reader.key)).body,
  );
  assert.deepEqual(pairs(seen.items), [["article_published", s.revision_id]]);

  const c = await comment(board, reader.key, later.revision_id);
  const stored = (await board.kv.get<ArticleEvent>(keys.articleEvents(seen.newest_cursor))).value;
  assert.equal(stored?.revision_id, s.revision_id, "recorded at the seq the read showed");
  const polled = await getJson(
    board,
    `/v1/articles/activity?after=${seen.newest_cursor}`,
    reader.key,
  );
  assert.deepEqual(
    polled.body.items.map((i: Item & { comment_id: string }) => [i.type, i.comment_id]),
    [["comment_published", c.comment_id]],
    "the comment comes after it: nothing missed, nothing repeated",
  );
});

Deno.test("cursor paging over several due transitions: nothing skipped or repeated once stored", async () => {
  await using board = await testBoard({ articlesGraceDays: 0 });
  const { author } = await establishedAuthor(board);
  const expiring = await register(board);
  const e = await submit(board, expiring.key, { title: "Nobody recommends this" });
  const s1 = await settlingArticle(board, author, "First settling article");
  board.clock.advance(HOUR);
  const s2 = await settlingArticle(board, author, "Second settling article");
  const reader = s1.reader;
  const start = (await getJson(board, "/v1/articles/activity", reader.key)).body.newest_cursor;

  let cursor: number = start;
  const received: Item[] = [];
  /** One poll of one event; a read, so it must write nothing. */
  const pollOnce = () =>
    assertNoWrite(board.kv, async () => {
      const page =
        (await getJson(board, `/v1/articles/activity?after=${cursor}&limit=1`, reader.key))
          .body;
      received.push(...page.items);
      if (page.newest_cursor !== null) cursor = page.newest_cursor;
    });

  board.clock.set(s1.readyAt);
  await pollOnce();
  board.clock.set(s2.readyAt);
  await pollOnce();
  board.clock.set(e.expires_at as number);
  await pollOnce(); // the expiry's position: nothing visible, the cursor moves past it
  const own = await getJson(board, `/v1/articles/posts/${e.post_id}`, expiring.key);
  assert.equal(own.body.article.state, "expired");
  await pollOnce();
  assert.deepEqual(pairs(received), [
    ["article_published", s1.s.revision_id],
    ["article_published", s2.s.revision_id],
  ]);

  // A new submission records the three due transitions first, then takes its own seq.
  const n = await submit(board, (await register(board)).key, { title: "A new article" });
  const rev = await board.kv.get<RevisionRecord>(keys.articleRevisions(e.revision_id));
  assert.equal(rev.value?.state, "expired");
  await pollOnce();
  await pollOnce();
  assert.deepEqual(pairs(received), [
    ["article_published", s1.s.revision_id],
    ["article_published", s2.s.revision_id],
    ["article_submitted", n.revision_id],
  ]);
  // One full read of the stored stream after the start: exactly what the poller got.
  const all = await getJson(board, `/v1/articles/activity?after=${start}&limit=50`, reader.key);
  assert.deepEqual(all.body.items.toReversed(), received);
  assert.deepEqual(
    received.map((i) => i.seq),
    [start + 1, start + 2, start + 4],
    "the expiry kept its position, empty",
  );
});

Deno.test("support settled but the author's standing lacks: shown once the standing holds, at a fresh position", async () => {
  await using board = await testBoard({ articlesGraceDays: 0 });
  const { author, threadId } = await establishedAuthor(board);
  const young = await register(board);
  await boardVote(board, young, threadId, -1); // K = 4
  const { s, readyAt, reader } = await settlingArticle(board, author, "Settling article");
  board.clock.set(readyAt);
  const head = async () => (await board.kv.get<{ seq: number }>(keys.articleHeads())).value!.seq;
  const seq0 = await head();
  const stream = () =>
    assertNoWrite(
      board.kv,
      async () => (await getJson(board, "/v1/articles/activity?limit=5", reader.key)).body,
    );
  assert.equal((await stream()).items[0].type, "article_submitted");

  // The sweep keeps the position empty and looks again 15 minutes later.
  assert.equal((await runSweeps(board.deps)).articles_settled, 0);
  assert.equal(await head(), seq0 + 1);
  const rev = (await board.kv.get<RevisionRecord>(keys.articleRevisions(s.revision_id))).value!;
  assert.deepEqual([rev.state, rev.due_at], ["pending", readyAt + 15 * 60]);

  await boardVote(board, await register(board), threadId, 1); // K = 5
  const direct = await assertNoWrite(
    board.kv,
    async () => (await getJson(board, `/v1/articles/posts/${s.post_id}`, reader.key)).body,
  );
  assert.deepEqual([direct.article.state, direct.article.published_at], ["published", readyAt]);
  assert.equal((await stream()).items[0].type, "article_submitted", "the stream waits");

  board.clock.set(readyAt + 15 * 60);
  const shown = await stream();
  assert.deepEqual(pairs(shown.items.slice(0, 1)), [["article_published", s.revision_id]]);
  assert.deepEqual([shown.items[0].seq, shown.items[0].at], [seq0 + 2, readyAt]);
  assert.equal((await runSweeps(board.deps)).articles_settled, 1);
  const stored = (await board.kv.get<ArticleEvent>(keys.articleEvents(seq0 + 2))).value;
  assert.deepEqual([stored?.type, stored?.revision_id], ["article_published", s.revision_id]);
});
