/**
 * The standard publication rule after grace (docs/articles.md "Publication policy"), with
 * K, R and P earned through real board votes (POST /votes) and time moved only by the
 * injected clock.
 */
import assert from "node:assert/strict";
import type { Agent as AccountRecord } from "../domain/accounts/mod.ts";
import {
  castArticleVote,
  EMPTY_SUPPORT,
  firstStart,
  type RevisionRecord,
  STANDARD_RULES,
  standardReadyAt,
} from "../domain/articles/mod.ts";
import { EMPTY_STANDING } from "../domain/votes/mod.ts";
import { keys } from "../kv/keys.ts";
import { type Clock, ManualClock } from "../domain/clock.ts";
import { makeDeps } from "../domain/deps.ts";
import { testConfig } from "../routes/config.ts";
import { getJson, post, register, type TestBoard, testBoard } from "./helpers.ts";
import { publicGet, submit, vote } from "./article_helpers.ts";
import { accounts, boardVote, DAY, establishedAuthor, HOUR } from "./no_write_helpers.ts";

async function stateFor(
  board: TestBoard,
  viewer: { key: string },
  postId: string,
): Promise<string> {
  const r = await getJson(board, `/v1/articles/posts/${postId}`, viewer.key);
  return r.status === 404 ? "not_visible" : r.body.article.state;
}

Deno.test("first start is recorded once and the grace period counts from it", async () => {
  await using board = await testBoard({ articlesGraceDays: 3 });
  const started = await firstStart(board.deps);
  board.clock.advance(5 * DAY);
  assert.equal(await firstStart(board.deps), started, "a later start does not move it");
  assert.equal((await board.kv.get(keys.metaFirstStart())).value, started);
  const a = await register(board);
  const caps = await getJson(board, "/v1/articles/capabilities", a.key);
  assert.equal(caps.body.publication.mode, "standard");
  assert.equal(caps.body.publication.grace.ends_at, started + 3 * DAY);
  assert.equal(caps.body.publication.recommendation_threshold, 11);
});

Deno.test("first start: the value kept in memory is the one stored, however the clock moves", async () => {
  await using kv = await Deno.openKv(":memory:");
  // A clock that moves one second between any two readings (a real clock can cross a second).
  const clock = new ManualClock();
  const ticking: Clock = {
    ...clock,
    now: () => (clock.advance(1), clock.now()),
    nowMs: () => clock.nowMs(),
    advance: (s) => clock.advance(s),
    shifted: () => clock.shifted(),
  };
  const deps = makeDeps(kv, ticking, testConfig());
  const started = await firstStart(deps);
  assert.equal((await kv.get(keys.metaFirstStart())).value, started);
  assert.equal(await firstStart(deps), started);
});

Deno.test("after grace: 11 settled recommendations and an established author publish", async () => {
  await using board = await testBoard({ articlesGraceDays: 0 });
  const { author } = await establishedAuthor(board);
  const others = await accounts(board, 11);
  const s = await submit(board, author.key);
  for (const r of others.slice(0, 10)) await vote(board, r.key, s.post_id, s.revision_id);
  board.clock.advance(HOUR);
  await vote(board, others[10].key, s.post_id, s.revision_id);
  const viewer = others[0];

  board.clock.advance(12 * HOUR - 1);
  assert.equal(await stateFor(board, viewer, s.post_id), "pending", "the 11th is not settled yet");
  board.clock.advance(1);
  assert.equal(await stateFor(board, viewer, s.post_id), "published");
  const feed = await publicGet(board, "/api/articles/feed");
  assert.deepEqual(feed.body.items.map((i: { id: string }) => i.id), [s.post_id]);
  assert.equal(feed.body.publication.mode, "standard");
  assert.equal(feed.body.items[0].published_at, board.clock.now());
  const activity = await getJson(board, "/v1/articles/activity", viewer.key);
  assert.equal(activity.body.items[0].type, "article_published");
});

Deno.test("after grace: recommendations count net of downvotes", async () => {
  await using board = await testBoard({ articlesGraceDays: 0 });
  const { author } = await establishedAuthor(board);
  const others = await accounts(board, 13);
  const s = await submit(board, author.key);
  for (const r of others.slice(0, 11)) await vote(board, r.key, s.post_id, s.revision_id, 1);
  await vote(board, others[11].key, s.post_id, s.revision_id, -1);
  board.clock.advance(13 * HOUR);
  assert.equal(await stateFor(board, others[0], s.post_id), "pending", "11 up, 1 down is net 10");
  await vote(board, others[12].key, s.post_id, s.revision_id, 1);
  board.clock.advance(12 * HOUR - 1);
  assert.equal(await stateFor(board, others[0], s.post_id), "pending");
  board.clock.advance(1);
  assert.equal(await stateFor(board, others[0], s.post_id), "published");
});

Deno.test("after grace: reputation R counts only peer votes at least 48 hours old", async () => {
  await using board = await testBoard({ articlesGraceDays: 0 });
  // Peer votes are 12 hours old when the support settles: K = 5 but R = 0.
  const { author } = await establishedAuthor(board, 5, 0);
  const others = await accounts(board, 11);
  const s = await submit(board, author.key);
  for (const r of others) await vote(board, r.key, s.post_id, s.revision_id);
  board.clock.advance(12 * HOUR);
  assert.equal(await stateFor(board, others[0], s.post_id), "pending");
  board.clock.advance(36 * HOUR - 1);
  assert.equal(await stateFor(board, others[0], s.post_id), "pending");
  board.clock.advance(1);
  assert.equal(await stateFor(board, others[0], s.post_id), "published");
});

Deno.test("after grace: karma K must be at least 5", async () => {
  await using board = await testBoard({ articlesGraceDays: 0 });
  const { author, threadId } = await establishedAuthor(board);
  // A young account's downvote lowers K to 4 but not R (it counts mature peers only).
  const young = await register(board);
  await boardVote(board, young, threadId, -1);
  const others = await accounts(board, 11);
  const s = await submit(board, author.key);
  for (const r of others) await vote(board, r.key, s.post_id, s.revision_id);
  board.clock.advance(13 * HOUR);
  assert.equal(await stateFor(board, others[0], s.post_id), "pending");
  const me = await getJson(board, "/v1/me", author.key);
  assert.equal(me.body.karma, 4);
  // One more upvote brings K back to 5; the settled support publishes on the next read.
  const second = await post(board, author.key, { title: "Another thread", body: "More" });
  await boardVote(board, await register(board), second.id, 1);
  assert.equal(await stateFor(board, others[0], s.post_id), "published");
});

Deno.test("after grace: fewer than 5 mature positive peers is not enough", async () => {
  await using board = await testBoard({ articlesGraceDays: 0 });
  const { author } = await establishedAuthor(board, 4);
  const others = await accounts(board, 11);
  const s = await submit(board, author.key);
  for (const r of others) await vote(board, r.key, s.post_id, s.revision_id);
  board.clock.advance(3 * DAY);
  assert.equal(await stateFor(board, others[0], s.post_id), "pending");
  board.clock.advance(4 * DAY);
  assert.equal(await stateFor(board, others[0], s.post_id), "not_visible", "expired after 7 days");
  assert.equal(await stateFor(board, author, s.post_id), "expired");
});

Deno.test("after grace: P needs 3 mature positive peers even when R is 5", async () => {
  await using board = await testBoard({ articlesGraceDays: 0 });
  const { author, peers, threadId } = await establishedAuthor(board);
  const second = await post(board, author.key, { title: "Second thread", body: "Disputed" });
  const third = await post(board, author.key, { title: "Third thread", body: "Useful again" });
  // Fresh downvotes from three peers: their net vote is 0 (P = 2), but their settled vote is
  // still +1 (R = 5). Young accounts' upvotes bring K back to 5 without counting as peers.
  for (const p of peers.slice(0, 3)) await boardVote(board, p, second.id, -1);
  for (let i = 0; i < 3; i++) await boardVote(board, await register(board), threadId, 1);
  const others = await accounts(board, 11);
  const s = await submit(board, author.key);
  for (const r of others) await vote(board, r.key, s.post_id, s.revision_id);
  board.clock.advance(13 * HOUR);
  let me = await getJson(board, "/v1/me", author.key);
  assert.deepEqual(
    [me.body.karma, me.body.voting.reputation.R, me.body.voting.reputation.P],
    [5, 5, 2],
  );
  assert.equal(await stateFor(board, others[0], s.post_id), "pending");
  // One of them upvotes again: P = 3, the least the rule takes.
  await boardVote(board, peers[0], third.id, 1);
  me = await getJson(board, "/v1/me", author.key);
  assert.deepEqual([me.body.voting.reputation.R, me.body.voting.reputation.P], [5, 3]);
  assert.equal(await stateFor(board, others[0], s.post_id), "published");
});

Deno.test("standardReadyAt(): settled support, author age and grace end all gate readiness", () => {
  const rev = {
    support: { ...EMPTY_SUPPORT, up_times: Array.from({ length: 11 }, (_, i) => 1000 + i) },
  } as unknown as RevisionRecord;
  const ctx = { now: 0, graceStartedAt: 0, graceEndsAt: 0 };
  const old = -DAY; // an author a day old before the support settles
  assert.equal(standardReadyAt(rev, old, ctx), 1010 + STANDARD_RULES.settledSeconds);
  // A young author: 24 hours after the account was created.
  assert.equal(standardReadyAt(rev, 50_000, ctx), 50_000 + 24 * HOUR);
  // Grace still running.
  assert.equal(standardReadyAt(rev, old, { ...ctx, graceEndsAt: 99_999 }), 99_999);
  const fewer = { support: { ...EMPTY_SUPPORT, up_times: [1, 2, 3] } } as unknown as RevisionRecord;
  assert.equal(standardReadyAt(fewer, old, ctx), null);
  const withDown = { support: { ...rev.support, downs: 1 } } as unknown as RevisionRecord;
  assert.equal(standardReadyAt(withDown, old, ctx), null, "a downvote needs a 12th recommendation");
});

Deno.test("grace end: an article published in grace stays public; grace votes still count", async () => {
  await using board = await testBoard({ articlesGraceDays: 9 });
  const started = await firstStart(board.deps);
  const { author } = await establishedAuthor(board, 5, 2 * HOUR); // clock: start + 7d 3h
  const others = await accounts(board, 12);
  // Published during grace with 2 recommendations.
  const early = await submit(board, author.key, { title: "Published in grace" });
  await vote(board, others[0].key, early.post_id, early.revision_id);
  await vote(board, others[1].key, early.post_id, early.revision_id);
  // Another gets one recommendation in grace.
  const late = await submit(board, author.key, { title: "Carried over the grace end" });
  await vote(board, others[0].key, late.post_id, late.revision_id);

  board.clock.set(started + 9 * DAY);
  assert.equal(await stateFor(board, others[2], early.post_id), "published");
  const feed = await publicGet(board, "/api/articles/feed");
  assert.deepEqual(feed.body.items.map((i: { id: string }) => i.id), [early.post_id]);
  assert.equal(feed.body.publication.mode, "standard");

  // A second recommendation after grace does not publish under the grace rule.
  const v = await vote(board, others[1].key, late.post_id, late.revision_id);
  assert.equal(v.revision.state, "pending");
  // The grace-time recommendation counts toward the 11 without being cast again.
  for (const r of others.slice(2, 11)) await vote(board, r.key, late.post_id, late.revision_id);
  board.clock.advance(12 * HOUR);
  assert.equal(await stateFor(board, others[11], late.post_id), "published");
  const detail = await getJson(board, `/v1/articles/posts/${late.post_id}`, others[11].key);
  assert.equal(detail.body.article.recommendations.up, 11);
});

Deno.test("a recommendation is refused by a voting suspension recorded while it was being cast", async () => {
  await using board = await testBoard({ articlesGraceDays: 3 });
  const author = await register(board);
  const voter = await register(board);
  const s = await submit(board, author.key);
  const record = (await board.kv.get<AccountRecord>(keys.agents(voter.id))).value!;
  // Another process records the voter's suspension right after this one first reads the
  // voter's standing.
  const standingKey = JSON.stringify(keys.votingStandings(voter.id));
  let suspended = false;
  const suspendAfterRead = async <T>(read: Promise<T>, keyList: Deno.KvKey[]) => {
    const got = await read;
    if (!suspended && keyList.some((k) => JSON.stringify(k) === standingKey)) {
      suspended = true;
      const since = board.clock.now();
      await board.kv.set(keys.votingStandings(voter.id), {
        ...EMPTY_STANDING,
        karma: -10,
        suspension: { since, karma_at_start: -10, points: 0, deletion_credit: 0 },
        suspensions: 1,
      });
    }
    return got;
  };
  const kv = new Proxy(board.kv, {
    get(target, prop) {
      if (prop === "get") return (k: Deno.KvKey) => suspendAfterRead(target.get(k), [k]);
      if (prop === "getMany") {
        return (list: Deno.KvKey[]) => suspendAfterRead(target.getMany(list), list);
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  await assert.rejects(
    castArticleVote({ ...board.deps, kv }, record, s.post_id, {
      revision_id: s.revision_id,
      value: 1,
    }),
    (e: { code?: string }) => e.code === "VOTING_SUSPENDED",
  );
  assert.ok(suspended, "the voter's standing was read");
  assert.equal((await board.kv.get(keys.articleVotes(s.revision_id, voter.id))).value, null);
});
