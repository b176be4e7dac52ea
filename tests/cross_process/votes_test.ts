/**
 * Votes across processes: one process's vote commit is held just before the store while the
 * other process votes; every rule still holds once it is released.
 */
import { claimedSeq } from "../../domain/board/mod.ts";
import assert from "node:assert/strict";
import { readStanding, type ReceivedRecord } from "../../domain/votes/mod.ts";
import { keys } from "../../kv/keys.ts";
import { assertError } from "../helpers.ts";
import {
  agent,
  agents,
  DAY,
  me,
  namedPost,
  publicKarma,
  type TestAgent,
  totals,
  vote,
  voteRequest,
} from "../vote_helpers.ts";
import { cluster, type Instance, whileHeld } from "./instances.ts";

/** `who`'s vote through `on`, asserted 200; returns the receipt. */
async function cast(on: Instance, who: TestAgent, postId: string, value: 1 | -1) {
  return await vote(on, who, postId, value);
}

/** Votes stored for a named target of an account (under its author, `votes_received`). */
async function storedVotes(kv: Deno.Kv, postId: string): Promise<number> {
  const seq = claimedSeq(postId)!; // a new id carries its seq
  const msg = (await kv.get(keys.messages("named", seq))).value!;
  let n = 0;
  for await (
    const e of kv.list<ReceivedRecord>({ prefix: keys.votesReceived.range(msg.agent_id!) })
  ) {
    if (e.value.target_seq === seq) n++;
  }
  return n;
}

Deno.test("cross-process: votes", async (t) => {
  await using c = await cluster(2, { limitScale: 100 });
  const [a, b] = c.instances;
  const t0 = c.clock.now();
  const author = await agent(a);
  const target = await namedPost(a, author, "target");

  await t.step(
    "one vote per account and target: the held vote replays the one that landed",
    async () => {
      const v = await agent(a);
      const res = await whileHeld(
        a,
        ["votes_cast"],
        () => voteRequest(a, v, target, 1),
        async () => {
          assert.equal((await cast(b, v, target, 1)).replayed, false);
        },
      );
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.replayed, true);
      // The opposite value, committed elsewhere first, makes the held one a conflict.
      const w = await agent(b);
      const conflict = await whileHeld(
        a,
        ["votes_cast"],
        () => voteRequest(a, w, target, -1),
        () => cast(b, w, target, 1),
      );
      await assertError(conflict, 409, "VOTE_CONFLICT");
      assert.deepEqual(await totals(a, target), { ...await totals(a, target), up: 2, down: 0 });
      assert.equal((await totals(b, target)).score, 2);
      assert.equal(await storedVotes(c.kv, target), 2);
      assert.equal(await publicKarma(b, author.id), 2);
    },
  );

  await t.step("score and karma count every vote of both processes once", async () => {
    const voters = await agents(a, 8);
    const other = await namedPost(b, author, "second");
    const res = await whileHeld(
      a,
      ["votes_cast"],
      () => voteRequest(a, voters[0], other, -1),
      () => Promise.all(voters.slice(1, 5).map((v) => cast(b, v, other, 1))),
    );
    assert.equal(res.status, 200, await res.text());
    await Promise.all(voters.slice(5).map((v, i) => cast(i % 2 ? a : b, v, other, 1)));
    const tot = await totals(a, other);
    assert.deepEqual([tot.up, tot.down, tot.score], [7, 1, 6]);
    assert.equal(await storedVotes(c.kv, other), 8);
    assert.equal(await publicKarma(a, author.id), 2 + 6);
  });

  await t.step("a weight follows the voter's karma as the commit finds it", async () => {
    const m = await agent(a);
    const mPost = await namedPost(a, m, "m's");
    const fan = await agent(b);
    const third = await namedPost(a, author, "third");
    c.clock.set(t0 + 7 * DAY + 1); // m is 7 days old: weight 2 once its karma is above 0
    // m's vote is weighed with karma 0 (weight 1); meanwhile m's karma becomes 1 elsewhere.
    const res = await whileHeld(
      a,
      ["votes_cast"],
      () => voteRequest(a, m, third, 1),
      () => cast(b, fan, mPost, 1),
    );
    const receipt = await res.json();
    assert.equal(res.status, 200, JSON.stringify(receipt));
    assert.equal(receipt.weight, 2);
    assert.equal((await totals(b, third)).score, 2);
  });
});

Deno.test("cross-process: voting suspension and recovery", async (t) => {
  await using c = await cluster(2, { limitScale: 100 });
  const [a, b] = c.instances;
  const t0 = c.clock.now();
  const s = await agent(a);
  const peers = await agents(a, 4);
  const recoverers = await agents(b, 8);
  const other = await namedPost(a, peers[0], "someone else's");
  const xs: string[] = [];
  for (let i = 0; i < 7; i++) xs.push(await namedPost(a, s, `s ${i}`));
  c.clock.set(t0 + 7 * DAY + 1); // every peer is mature

  await t.step(
    "two processes' downvotes that each meet the entry condition suspend once",
    async () => {
      for (const id of xs) await cast(a, peers[0], id, -1);
      for (const id of xs) await cast(b, peers[1], id, -1);
      for (const id of xs.slice(0, 5)) await cast(a, peers[2], id, -1); // karma -19
      const res = await whileHeld(
        a,
        ["votes_cast"],
        () => voteRequest(a, peers[2], xs[5], -1),
        () => cast(b, peers[3], xs[6], -1),
      );
      assert.equal(res.status, 200, await res.text());
      const standing = await readStanding(c.kv, s.id);
      assert.equal(standing.karma, -21);
      assert.ok(standing.suspension, "suspended");
      assert.equal(standing.suspensions, 1, "one suspension, not two");
      for (const on of [a, b]) {
        await assertError(await voteRequest(on, s, other, 1), 403, "VOTING_SUSPENDED");
      }
    },
  );

  await t.step("recovery is decided on every point of both processes", async () => {
    const fresh = [await namedPost(a, s, "new 1"), await namedPost(b, s, "new 2")];
    const upvotes = recoverers.flatMap((r) => fresh.map((id) => ({ r, id })));
    for (const { r, id } of upvotes.slice(0, 14)) await cast(r === recoverers[0] ? a : b, r, id, 1);
    // karma -7 with 14 points; the 15th and 16th land on two processes at once.
    const res = await whileHeld(
      a,
      ["votes_cast"],
      () => voteRequest(a, upvotes[14].r, upvotes[14].id, 1),
      () => cast(b, upvotes[15].r, upvotes[15].id, 1),
    );
    assert.equal(res.status, 200, await res.text());
    const standing = await readStanding(c.kv, s.id);
    assert.equal(standing.karma, -5);
    assert.equal(standing.suspension, null, "recovered");
    assert.equal((await me(b, s)).voting.can_vote, true);
    assert.equal((await cast(b, s, other, 1)).replayed, false);
  });
});
