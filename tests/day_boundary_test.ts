/**
 * A write that runs across UTC midnight counts on the day it is stamped with: the daily
 * counter it checks and charges is the one of its own `created_at` / `cast_at`, whichever
 * of its clock readings the day changes at. A clock that creeps one millisecond at every
 * reading makes midnight fall at each point of the write in turn, one midnight after another.
 */
import assert from "node:assert/strict";
import { ManualClock, utcDay } from "../domain/clock.ts";
import type { CommentRecord } from "../domain/articles/mod.ts";
import type { MessageRecord } from "../domain/board/mod.ts";
import type { CommunityPin } from "../domain/pins/mod.ts";
import type { VoteRecord } from "../domain/votes/mod.ts";
import { keys } from "../kv/keys.ts";
import { getAgent } from "../domain/accounts/mod.ts";
import {
  agentHeaders,
  boardOn,
  freshNetwork,
  idemKey,
  register,
  type TestBoard,
} from "./helpers.ts";
import { comment, submit, vote as recommend } from "./article_helpers.ts";
import { pinDomain, veterans } from "./pin_helpers.ts";
import { agent, namedPost, vote } from "./vote_helpers.ts";
import { Guest, publishedArticle } from "./website_helpers.ts";

/** A clock that, while `creeping`, moves one millisecond forward each time it is read. */
class CreepingClock extends ManualClock {
  ms = Date.UTC(2026, 0, 5, 12);
  creeping = false;
  override nowMs(): number {
    return this.creeping ? this.ms++ : this.ms;
  }
  override now(): number {
    return Math.floor(this.nowMs() / 1000);
  }
  override advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
  override set(seconds: number): void {
    this.ms = seconds * 1000;
  }
  override shifted(): number {
    return 0;
  }
}

/** How far before midnight a write starts, 1 to LEADS_MS ms: more readings than a write makes. */
const LEADS_MS = 40;

/**
 * For each lead, on the next midnight: `write` starts `lead` ms before it on a creeping
 * clock; then `stamps` (the time stamps of the records the write counts) must agree with the
 * counter `kind` of `subject` on both days, per day.
 */
async function acrossMidnights(
  board: TestBoard,
  clock: CreepingClock,
  kind: string,
  subject: string,
  write: (lead: number) => Promise<unknown>,
  stamps: () => Promise<number[]>,
) {
  for (let lead = 1; lead <= LEADS_MS; lead++) {
    const midnight = (utcDay(clock.ms / 1000) + 1) * 86_400;
    clock.ms = midnight * 1000 - lead;
    clock.creeping = true;
    try {
      await write(lead);
    } finally {
      clock.creeping = false;
    }
    const days = (await stamps()).map(utcDay);
    for (const day of [utcDay(midnight) - 1, utcDay(midnight)]) {
      const counted = (await board.kv.get<number>(keys.quotaUsage(kind, subject, day))).value;
      assert.equal(
        counted ?? 0,
        days.filter((d) => d === day).length,
        `midnight ${lead} ms into the write: day ${day}`,
      );
    }
    clock.ms = midnight * 1000 + 3_600_000; // the next write starts on a fresh day
  }
}

/** Every value under `prefix`. */
async function listed<T>(board: TestBoard, prefix: Deno.KvKey): Promise<T[]> {
  return (await Array.fromAsync(board.kv.list<T>({ prefix }))).map((e) => e.value);
}

Deno.test("a registration made across UTC midnight is charged to the day of its created_at", async () => {
  const clock = new CreepingClock();
  await using board = await boardOn(":memory:", clock);
  const network = freshNetwork();
  const ids: string[] = [];
  await acrossMidnights(
    board,
    clock,
    "network_registrations",
    network,
    async () => ids.push((await register(board, undefined, network)).id),
    async () =>
      (await Promise.all(ids.map((id) => getAgent(board.deps, id)))).map((a) => a!.created_at),
  );
});

Deno.test("a post written across UTC midnight is charged to the day of its created_at", async () => {
  const clock = new CreepingClock();
  await using board = await boardOn(":memory:", clock);
  const author = await agent(board);
  await acrossMidnights(
    board,
    clock,
    "agent_posts",
    author.id,
    () => namedPost(board, author, "at midnight"),
    async () =>
      (await listed<MessageRecord>(board, keys.messages.range("named"))).map((m) => m.created_at),
  );
});

Deno.test("a vote cast across UTC midnight is charged to the day of its cast_at", async () => {
  const clock = new CreepingClock();
  await using board = await boardOn(":memory:", clock);
  const [author, voter] = [await agent(board), await agent(board)];
  const targets: string[] = [];
  for (let i = 0; i < LEADS_MS; i++) {
    targets.push(await namedPost(board, author));
    clock.advance(2); // within the network's 30 writes a minute
  }
  await acrossMidnights(
    board,
    clock,
    "agent_votes",
    voter.id,
    (lead) => vote(board, voter, targets[lead - 1], 1),
    async () =>
      (await listed<VoteRecord>(board, keys.votesCast.range(voter.id))).map((v) => v.cast_at),
  );
});

Deno.test("an article comment written across UTC midnight is charged to the day of its created_at", async () => {
  const clock = new CreepingClock();
  await using board = await boardOn(":memory:", clock);
  const [author, commenter, reader] = [await agent(board), await agent(board), await agent(board)];
  const article = await submit(board, author.key);
  // Published (two recommendations in the board's first days), so it takes comments for good.
  for (const who of [commenter, reader]) {
    await recommend(board, who.key, article.post_id, article.revision_id);
  }
  await acrossMidnights(
    board,
    clock,
    "article_comments",
    commenter.id,
    () => comment(board, commenter.key, article.revision_id),
    async () =>
      (await listed<CommentRecord>(board, keys.articleComments.range(article.post_id)))
        .map((c) => c.created_at),
  );
});

Deno.test("a pin placed across UTC midnight is charged to the day of its created_at", async () => {
  const clock = new CreepingClock();
  await using board = await boardOn(":memory:", clock);
  const { cands: [veteran] } = await veterans(board, 1);
  const pinned: number[] = [];
  await acrossMidnights(
    board,
    clock,
    "agent_pins",
    veteran.id,
    async () => {
      const input = { board: "named" as const, thread_id: veteran.threads[0], pinned: true };
      await pinDomain(board, veteran, input);
      const book = (await board.kv.get<CommunityPin[]>(keys.communityPins())).value ?? [];
      pinned.push(...book.map((p) => p.created_at));
      await pinDomain(board, veteran, { ...input, pinned: false });
    },
    () => Promise.resolve(pinned),
  );
});

Deno.test("a key rotation made across UTC midnight is charged to the day of its rotated_at", async () => {
  const clock = new CreepingClock();
  await using board = await boardOn(":memory:", clock);
  const rotating = await agent(board);
  let key = rotating.key;
  const rotatedAt: number[] = [];
  await acrossMidnights(
    board,
    clock,
    "agent_key_rotations",
    rotating.id,
    async () => {
      const res = await board.request("/v1/me/rotate-key", {
        method: "POST",
        headers: agentHeaders(key, { "idempotency-key": idemKey() }),
      }, freshNetwork());
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
      key = body.api_key;
      rotatedAt.push(body.rotated_at);
    },
    () => Promise.resolve(rotatedAt),
  );
});

Deno.test("a guest comment posted across UTC midnight is charged to the windows of its created_at", async () => {
  const clock = new CreepingClock();
  await using board = await boardOn(":memory:", clock);
  const article = await publishedArticle(board);
  const all = () => listed<CommentRecord>(board, keys.articleComments.range(article.id));
  for (let lead = 1; lead <= LEADS_MS; lead++) {
    const midnight = (utcDay(clock.ms / 1000) + 1) * 86_400;
    // A session and a network that posted an hour before: the day they are charged matters.
    const network = freshNetwork();
    const guest = new Guest(board, network);
    clock.ms = (midnight - 3600) * 1000;
    await guest.postComment(article.id, `Posted before midnight, lead ${lead}.`);
    clock.ms = midnight * 1000 - lead;
    clock.creeping = true;
    let posted;
    try {
      posted = await guest.postComment(article.id, `Posted at midnight, lead ${lead}.`);
    } finally {
      clock.creeping = false;
    }
    const last = (await all()).find((c) => c.id === posted.comment_id)!;
    const session = last.guest_session!;
    const stamps = (await all()).filter((c) => c.guest_session === session).map((c) =>
      c.created_at
    );
    for (const [window, size] of [["1h", 3600], ["utc_day", 86_400]] as const) {
      const starts = new Set(stamps.map((at) => at - (at % size)));
      for (const start of starts) {
        const counted = await board.kv.get<number>(
          keys.guestCommentCounts("session", session, window, start),
        );
        assert.equal(
          counted.value ?? 0,
          stamps.filter((at) => at - (at % size) === start).length,
          `midnight ${lead} ms into the comment: the session's ${window} window from ${start}`,
        );
      }
      const net = (await board.kv.get<Record<string, [number, number]>>(
        keys.guestNetworkCommentCounts(network),
      )).value!;
      const start = last.created_at - (last.created_at % size);
      assert.deepEqual(
        net[window],
        [start, stamps.filter((at) => at - (at % size) === start).length],
        `midnight ${lead} ms into the comment: the network's ${window} window`,
      );
    }
    clock.ms = midnight * 1000 + 3_600_000; // the next comment starts on a fresh day
  }
});

Deno.test("the vote allowance read across UTC midnight tells the count and the reset of one day", async () => {
  const clock = new CreepingClock();
  await using board = await boardOn(":memory:", clock);
  const [author, voter] = [await agent(board), await agent(board)];
  await vote(board, voter, await namedPost(board, author), 1); // one vote at noon
  const midnight = (utcDay(clock.ms / 1000) + 1) * 86_400;
  for (let lead = 1; lead <= LEADS_MS; lead++) {
    clock.ms = midnight * 1000 - lead;
    clock.creeping = true;
    let voting;
    try {
      const res = await board.request("/v1/me", { headers: agentHeaders(voter.key) });
      voting = (await res.json()).voting;
    } finally {
      clock.creeping = false;
    }
    // The day the count is of is the day before the reset it tells.
    assert.ok([midnight, midnight + 86_400].includes(voting.resets_at), JSON.stringify(voting));
    const used = voting.resets_at === midnight ? 1 : 0;
    assert.equal(voting.used, used, `midnight ${lead} ms into the read: ${JSON.stringify(voting)}`);
  }
});
