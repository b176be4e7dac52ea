/**
 * Veteran status earned on a pin from the support summary of the voting standing
 * (domain/votes/support.ts): POST /pins reads it with its one read batch (three round
 * trips with authentication and the commit), the summary follows removals and purges
 * exactly, and a standing without one (written before summaries, or past the cap) is
 * counted from the received votes as before, with the same answer.
 */
import assert from "node:assert/strict";
import { KvMeter, setMeterSource } from "../kv/meter.ts";
import { keys } from "../kv/keys.ts";
import { SUPPORT_CAP, supportOf } from "../domain/votes/mod.ts";
import { claimedSeq, EMPTY_HEAD } from "../domain/board/mod.ts";
import { reply, type TestBoard, testBoard } from "./helpers.ts";
import { candidates, DAY, deleteOwn, oauthToken, postPin } from "./pin_helpers.ts";
import { agent, agents, namedPost, type TestAgent, vote } from "./vote_helpers.ts";

/** POST /pins of `thread` by `who` under a lockstep meter: status, body, round trips. */
async function measuredPin(board: TestBoard, who: TestAgent, thread: string) {
  const token = await oauthToken(board, who);
  const meter = new KvMeter({ lockstep: true });
  setMeterSource(() => meter);
  try {
    const res = await postPin(board, token, { board: "named", thread_id: thread, pinned: true });
    return { status: res.status, body: await res.json(), depth: meter.roundTrips };
  } finally {
    setMeterSource(() => undefined);
  }
}

/** Drops the support summary from `id`'s stored standing (a standing written before it). */
async function asOlderStanding(board: TestBoard, id: string) {
  const entry = await board.deps.kv.get(keys.votingStandings(id));
  assert.ok(entry.value?.support, "the standing keeps a summary");
  const { support: _dropped, ...older } = entry.value;
  await board.deps.kv.set(keys.votingStandings(id), older);
}

/** A candidate with karma `upvoters.length * threads` from upvotes of `upvoters` on `threads` threads. */
async function upvotedCandidate(board: TestBoard, upvoters: TestAgent[], threads: number) {
  const cand = await agent(board);
  const ids: string[] = [];
  for (let i = 0; i < threads; i++) ids.push(await namedPost(board, cand, `thread ${i}`));
  for (const id of ids) for (const v of upvoters) await vote(board, v, id, 1);
  return { cand, ids };
}

Deno.test("veteran status earned exactly at the threshold on a pin: three round trips", async () => {
  await using board = await testBoard();
  const { cands } = await candidates(board, 1); // karma 5, 3 supporters, no record
  const cand = cands[0];
  const createdAt = (await board.deps.kv.get(keys.agents(cand.id))).value!.created_at;
  board.clock.advance(7 * DAY - 1);
  const early = await measuredPin(board, cand, cand.threads[0]);
  assert.equal(early.status, 403);
  assert.equal(early.body.error.code, "NOT_VETERAN");
  assert.equal(await board.deps.kv.get(keys.veterans(cand.id)).then((e) => e.value), null);

  board.clock.advance(1); // exactly 7 days old: every condition holds from now
  const pin = await measuredPin(board, cand, cand.threads[0]);
  assert.equal(pin.status, 200, JSON.stringify(pin.body));
  assert.equal(pin.body.pinned, true);
  assert.equal(pin.depth, 3, "authentication, the one read batch, the commit");
  const rec = (await board.deps.kv.get(keys.veterans(cand.id))).value;
  assert.equal(rec?.earned_at, createdAt + 7 * DAY);
});

Deno.test("two supporters are not enough: the summary's count is the list's", async () => {
  await using board = await testBoard();
  const { cand, ids } = await upvotedCandidate(board, await agents(board, 2), 3); // karma 6
  board.clock.advance(7 * DAY + 1);
  const refused = await measuredPin(board, cand, ids[0]);
  assert.equal(refused.status, 403);
  assert.equal(refused.body.error.details.supporters, 2);
  assert.equal((await supportOf(board.deps, cand.id)).supporters, 2);
});

Deno.test("a removed message takes its upvotes out of the summary, also at score 0", async () => {
  await using board = await testBoard();
  const [a, b, c, d] = await agents(board, 4);
  const { cand, ids } = await upvotedCandidate(board, [a, b], 2); // karma 4: a and b
  const extra = await namedPost(board, cand, "extra");
  await vote(board, a, extra, 1); // karma 5
  // c's only upvote is on a message whose score is 0 (d downvoted it): no karma moves when
  // it is deleted, yet c stops being a supporter.
  const zero = await namedPost(board, cand, "score zero");
  await vote(board, c, zero, 1);
  await vote(board, d, zero, -1);
  await deleteOwn(board, cand, zero);
  board.clock.advance(7 * DAY + 1);
  assert.equal((await supportOf(board.deps, cand.id)).supporters, 2);
  const refused = await measuredPin(board, cand, ids[0]);
  assert.equal(refused.status, 403, JSON.stringify(refused.body));
  assert.equal(refused.body.error.details.supporters, 2);
  assert.equal(refused.body.error.details.karma, 5);
});

Deno.test("an upvoted reply in a thread being purged does not count while it is hidden", async () => {
  await using board = await testBoard();
  const [a, b, c] = await agents(board, 3);
  const { cand, ids } = await upvotedCandidate(board, [a, b], 2); // karma 4
  const other = await agent(board);
  const root = await namedPost(board, other, "someone else's thread");
  const r = await reply(board, cand.key, root, "The candidate's reply");
  await vote(board, c, r.id, 1); // karma 5, c's only upvote
  board.clock.advance(7 * DAY + 1);
  // The thread's purge has started (its root removed, the replies not yet): hidden.
  const headKey = keys.boardHeads("named");
  const head = (await board.deps.kv.get(headKey)).value ?? EMPTY_HEAD;
  await board.deps.kv.set(headKey, { ...head, purging: [claimedSeq(root)!] });
  assert.equal((await supportOf(board.deps, cand.id)).supporters, 2);
  const refused = await measuredPin(board, cand, ids[0]);
  assert.equal(refused.status, 403, JSON.stringify(refused.body));
  assert.equal(refused.body.error.details.supporters, 2);
  await board.deps.kv.set(headKey, head);
  const pin = await measuredPin(board, cand, ids[0]);
  assert.equal(pin.status, 200, JSON.stringify(pin.body));
  assert.equal(pin.depth, 3);
});

Deno.test("a standing written before summaries is counted from the received votes", async (t) => {
  await using board = await testBoard();
  const [a, b, c] = await agents(board, 3);
  const two = await upvotedCandidate(board, [a, b], 3);
  const three = await upvotedCandidate(board, [a, b, c], 2); // karma 6, 3 supporters
  await asOlderStanding(board, two.cand.id);
  await asOlderStanding(board, three.cand.id);
  // A vote on an older standing keeps it without a summary (it would miss earlier votes).
  await vote(board, c, two.ids[0], -1); // karma 5, still a and b
  const st = (await board.deps.kv.get(keys.votingStandings(two.cand.id))).value;
  assert.equal(st?.support, undefined);
  board.clock.advance(7 * DAY + 1);
  await t.step("refused with the exact count", async () => {
    const refused = await measuredPin(board, two.cand, two.ids[0]);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.error.details.supporters, 2);
  });
  await t.step("earned, through the received votes (more round trips)", async () => {
    const pin = await measuredPin(board, three.cand, three.ids[0]);
    assert.equal(pin.status, 200, JSON.stringify(pin.body));
    assert.ok(pin.depth > 3, `listed the received votes (${pin.depth} round trips)`);
    assert.ok((await board.deps.kv.get(keys.veterans(three.cand.id))).value);
  });
});

Deno.test("past its cap the summary gives way to the received votes, with the same answer", async () => {
  await using board = await testBoard();
  const voters = await agents(board, 3);
  const threads = Math.ceil((SUPPORT_CAP + 1) / voters.length);
  const { cand, ids } = await upvotedCandidate(board, voters, threads);
  const st = (await board.deps.kv.get(keys.votingStandings(cand.id))).value;
  assert.equal(st?.support?.upvotes, null, "the summary no longer holds the upvotes");
  board.clock.advance(7 * DAY + 1);
  const pin = await measuredPin(board, cand, ids[0]);
  assert.equal(pin.status, 200, JSON.stringify(pin.body));
  assert.ok((await board.deps.kv.get(keys.veterans(cand.id))).value);
});

Deno.test("a vote stores veteran status the summary shows earned, within the vote's two round trips", async () => {
  await using board = await testBoard();
  const { cands } = await candidates(board, 2); // karma 5, 3 supporters each
  const [fresh, older] = cands;
  await asOlderStanding(board, older.id);
  board.clock.advance(7 * DAY + 1);
  const late = await agent(board);
  for (const cand of [fresh, older]) {
    const meter = new KvMeter({ lockstep: true });
    setMeterSource(() => meter);
    try {
      await vote(board, late, cand.threads[1], 1);
    } finally {
      setMeterSource(() => undefined);
    }
    assert.ok((await board.deps.kv.get(keys.veterans(cand.id))).value, "earned by the vote");
    // This instance wrote the thread: the author's keys ride in the vote's first batch.
    if (cand === fresh) assert.equal(meter.roundTrips, 2);
    else assert.ok(meter.roundTrips > 2, "an older standing lists the received votes");
  }
});

Deno.test("a removal stores veteran status earned before it, counted from the summary", async () => {
  await using board = await testBoard();
  const [a, b, c, d] = await agents(board, 4);
  const { cand } = await upvotedCandidate(board, [a, b, c], 2); // karma 6, 3 supporters
  const extra = await namedPost(board, cand, "extra");
  await vote(board, d, extra, 1); // karma 7, 4 supporters
  board.clock.advance(7 * DAY + 1);
  assert.equal(await board.deps.kv.get(keys.veterans(cand.id)).then((e) => e.value), null);
  await deleteOwn(board, cand, extra); // karma 6: earned before the removal, stored by it
  const rec = (await board.deps.kv.get(keys.veterans(cand.id))).value;
  assert.ok(rec, "stored by the removal's commit");
  const st = (await board.deps.kv.get(keys.votingStandings(cand.id))).value;
  assert.equal(Object.keys(st?.support?.upvotes ?? {}).length, 3, "d's upvote left with it");
});
