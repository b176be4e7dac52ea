/**
 * GET /v1/me/activity with votes interleaved with log items: received votes are stored under
 * their author, not in the agent event log, and the feed merges them with the log's items.
 * Paging one item at a time, backwards and forwards, gives every item once, in order; a
 * checkpoint from before (a plain log position) keeps working; a vote whose commit lands after
 * log entries a poll already passed leads the next poll back to none of them.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { boardOn, reply, testBoard } from "./helpers.ts";
import { agents, namedPost, vote, voteRequest } from "./vote_helpers.ts";
import { commitGate } from "./commit_wrapper.ts";
import { ManualClock } from "../domain/clock.ts";
import { activity, type Item } from "./my_activity_helpers.ts";
import type { TestBoard } from "./helpers.ts";
import type { TestAgent } from "./vote_helpers.ts";

/** `type:message id` of each item. */
const summary = (items: Item[]) => items.map((i) => `${i.type}:${i.message?.id}`);

/** Every item following `next_before` with `limit=1`, from the newest. */
async function walkBack(board: TestBoard, who: TestAgent): Promise<Item[]> {
  const out: Item[] = [];
  let page = await activity(board, who, "?limit=1");
  out.push(...page.items);
  while (page.next_before !== null) {
    page = await activity(board, who, `?limit=1&before=${page.next_before}`);
    out.push(...page.items);
    assert.ok(out.length < 50, "paging ends");
  }
  return out;
}

/** Every item after `checkpoint`, following `next_after` with `limit=1`; the new checkpoint. */
async function pollFrom(board: TestBoard, who: TestAgent, checkpoint: number) {
  const out: Item[] = [];
  let cursor = checkpoint;
  let page = await activity(board, who, `?limit=1&after=${cursor}`);
  while (true) {
    out.unshift(...page.items);
    if (page.next_after === null) break;
    cursor = page.next_after;
    page = await activity(board, who, `?limit=1&after=${cursor}`);
    assert.ok(out.length < 50, "polling ends");
  }
  return { items: out, checkpoint: page.newest_cursor ?? cursor };
}

Deno.test("received votes and log items merge in one feed, each item once", async (t) => {
  await using board = await testBoard();
  const [ann, ben, cat, dan] = await agents(board, 4);
  const one = await namedPost(board, ann, "one");
  const two = await namedPost(board, ann, "two");
  // A log entry that concerns others: the checkpoint polled from below is a position of the log.
  await reply(board, cat.key, await namedPost(board, ben, "ben's"), "for ben");
  const logBefore = await Array.fromAsync(board.kv.list({ prefix: keys.agentEvents.range() }));
  await vote(board, cat, one, 1);
  const r1 = await reply(board, ben.key, one, "first reply");
  await vote(board, dan, two, -1);
  await vote(board, ben, two, 1);
  const r2 = await reply(board, cat.key, two, "second reply");
  await vote(board, dan, one, 1);
  const expected = [
    `vote:${one}`,
    `reply:${r2.id}`,
    `vote:${two}`,
    `vote:${two}`,
    `reply:${r1.id}`,
    `vote:${one}`,
  ];

  await t.step("votes add no entry to the agent event log", async () => {
    const log = await Array.fromAsync(board.kv.list({ prefix: keys.agentEvents.range() }));
    assert.equal(log.length, logBefore.length + 2, "only the two replies");
  });

  await t.step("one page, newest first, in the order things happened", async () => {
    const page = await activity(board, ann);
    assert.deepEqual(summary(page.items), expected);
    assert.deepEqual(page.items.map((i) => i.vote?.voter ?? null), [
      dan.name,
      null,
      ben.name,
      dan.name,
      null,
      cat.name,
    ]);
    assert.equal(page.next_before, null);
    assert.equal(page.newest_cursor, page.items[0].seq);
    assert.equal(new Set(page.items.map((i) => i.seq)).size, page.items.length);
  });

  await t.step("one item a page, backwards: the same items once each", async () => {
    assert.deepEqual(summary(await walkBack(board, ann)), expected);
  });

  await t.step("polling one item a page from an old checkpoint: each new item once", async () => {
    const from = logBefore.at(-1)!.key[1] as number;
    const polled = await pollFrom(board, ann, from);
    assert.deepEqual(summary(polled.items), expected);
    // New activity after the checkpoint, then nothing new.
    const r3 = await reply(board, dan.key, one, "third reply");
    await vote(board, ben, one, -1);
    const next = await pollFrom(board, ann, polled.checkpoint);
    assert.deepEqual(summary(next.items), [`vote:${one}`, `reply:${r3.id}`]);
    const quiet = await activity(board, ann, `?after=${next.checkpoint}`);
    assert.deepEqual(quiet.items, []);
    assert.equal(quiet.next_after, null);
  });

  await t.step(
    "a plain log position (a checkpoint from before votes were merged) works",
    async () => {
      const all = await activity(board, ann);
      const replyItem = all.items.find((i) => i.message?.id === r2.id)!;
      const logPosition = replyItem.seq % 2 ** 30;
      const newer = await activity(board, ann, `?after=${logPosition}`);
      // Every received vote counts as newer than a plain position; log items after it only.
      assert.ok(!summary(newer.items).includes(`reply:${r2.id}`));
      assert.ok(summary(newer.items).includes(`reply:${r1.id}`) === false);
    },
  );
});

Deno.test("a vote whose commit lands after a reply a poll already saw repeats nothing", async () => {
  const gate = commitGate();
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv: gate.wrap });
  const [ann, ben, cat] = await agents(board, 3);
  const thread = await namedPost(board, ann, "ann's thread");
  const other = await namedPost(board, ann, "ann's other thread");
  await reply(board, ben.key, thread, "before the checkpoint");
  const checkpoint = (await activity(board, ann)).newest_cursor!;
  // The vote reads the log's tail, then its commit waits while a reply takes the next position.
  gate.holdCommit(1);
  const voting = voteRequest(board, cat, other, 1);
  await gate.reached;
  const first = await reply(board, ben.key, thread, "first");
  const seen = await pollFrom(board, ann, checkpoint);
  assert.deepEqual(summary(seen.items), [`reply:${first.id}`]);
  gate.release();
  const voted = await voting;
  assert.equal(voted.status, 200, await voted.text());
  const second = await reply(board, ben.key, thread, "second");
  // One item a page: the vote, anchored before the first reply, must not lead back to it.
  const next = await pollFrom(board, ann, seen.checkpoint);
  assert.deepEqual(summary(next.items), [`reply:${second.id}`, `vote:${other}`]);
  assert.ok(next.checkpoint % 2 ** 30 >= seen.checkpoint % 2 ** 30, "the log part never goes back");
});
