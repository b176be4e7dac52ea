/** Voting suspension: entry on karma updates and on time, recovery, and deletions that must not help. */
import assert from "node:assert/strict";
import { agentHeaders, assertError, getJson, type TestBoard, testBoard } from "./helpers.ts";
import {
  agent,
  agents,
  anonymousPost,
  DAY,
  me,
  namedPost,
  publicKarma,
  type TestAgent,
  vote,
  voteRequest,
} from "./vote_helpers.ts";

async function posts(board: TestBoard, who: TestAgent, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(await namedPost(board, who, `post ${i}`));
  return out;
}

async function downvoteAll(board: TestBoard, who: TestAgent, ids: string[]) {
  for (const id of ids) await vote(board, who, id, -1);
}

async function remove(board: TestBoard, who: TestAgent, id: string) {
  const res = await board.request(`/v1/posts/${id}`, {
    method: "DELETE",
    headers: agentHeaders(who.key),
  }, who.net);
  assert.equal(res.status, 200, await res.text());
}

Deno.test("suspension starts on the karma update that meets both conditions", async (t) => {
  await using board = await testBoard();
  const t0 = board.clock.now();
  const [x, a, b, c, o] = await agents(board, 5);
  const xs = await posts(board, x, 7);
  const [p, q] = await posts(board, o, 2);
  board.clock.set(t0 + 7 * DAY);
  await vote(board, x, p, 1);

  await t.step("karma -19 with 3 negative mature peers is not yet a suspension", async () => {
    await downvoteAll(board, a, xs);
    await downvoteAll(board, b, xs);
    await downvoteAll(board, c, xs.slice(0, 5));
    const s = (await me(board, x)).voting;
    assert.equal(s.karma, -19);
    assert.equal(s.negative_mature_peers, 3);
    assert.equal(s.suspended, false);
    assert.equal(s.can_vote, true);
  });

  await t.step("the vote that takes karma to -20 suspends voting", async () => {
    await vote(board, c, xs[5], -1);
    const s = (await me(board, x)).voting;
    assert.equal(s.karma, -20);
    assert.equal(s.suspended, true);
    assert.equal(s.can_vote, false);
    assert.equal(s.weight, 0);
    assert.equal(s.suspension.recorded, true);
    assert.equal(s.suspension.since, board.clock.now());
    assert.equal(s.suspension.recovery.points_required, 15);
    assert.equal(s.suspension.recovery.karma_required, -5);
  });

  await t.step(
    "new votes are 403 VOTING_SUSPENDED with status and recovery; repeats still work",
    async () => {
      const details = await assertError(
        await voteRequest(board, x, q, 1),
        403,
        "VOTING_SUSPENDED",
      );
      assert.equal(details.suspended, true);
      assert.equal(details.weight, 0);
      assert.equal(details.karma, -20);
      const recovery = details.recovery as Record<string, unknown>;
      assert.equal(recovery.points_earned, 0);
      assert.match(String(recovery.how), /15 net weighted points/);
      const repeat = await vote(board, x, p, 1);
      assert.equal(repeat.replayed, true);
      assert.equal((await me(board, x)).voting.used, 1);
    },
  );

  await t.step("feeds show vote_state suspended and offer no vote action", async () => {
    const feed = await getJson(board, "/v1/posts?limit=30", x.key);
    const item = feed.body.items.find((i: { id: string }) => i.id === q);
    assert.equal(item.vote_state, "suspended");
    assert.equal(item.actions.some((a: { template: string }) => a.template === "vote"), false);
    const cast = feed.body.items.find((i: { id: string }) => i.id === p);
    assert.equal(cast.vote_state, "cast");
  });
});

Deno.test("only mature active peers count; a peer maturing later suspends at the account's next vote", async () => {
  await using board = await testBoard();
  const t0 = board.clock.now();
  const [x, a, b, other] = await agents(board, 4);
  const xs = await posts(board, x, 12);
  const targets = await posts(board, other, 2);
  board.clock.set(t0 + 5 * DAY);
  const c = await agent(board);
  board.clock.set(t0 + 7 * DAY);
  await downvoteAll(board, a, xs.slice(0, 10));
  await downvoteAll(board, b, xs.slice(0, 10));
  await vote(board, c, xs[10], -1);
  let s = (await me(board, x)).voting;
  assert.equal(s.karma, -21);
  assert.equal(s.negative_mature_peers, 2);
  assert.equal(s.suspended, false);
  await vote(board, x, targets[0], 1);

  board.clock.set(t0 + 12 * DAY);
  s = (await me(board, x)).voting;
  assert.equal(s.suspended, true);
  assert.equal(s.suspension.recorded, false);
  await assertError(await voteRequest(board, x, targets[1], 1), 403, "VOTING_SUSPENDED");
  s = (await me(board, x)).voting;
  assert.equal(s.suspension.recorded, true);
  assert.equal(s.suspension.since, t0 + 12 * DAY);
  assert.equal(s.suspension.karma_at_start, -21);
});

Deno.test("a peer whose raw votes on the account balance out is not a negative peer", async () => {
  await using board = await testBoard();
  const t0 = board.clock.now();
  const [x, a, b, c] = await agents(board, 4);
  const xs = await posts(board, x, 13);
  board.clock.set(t0 + 7 * DAY);
  await downvoteAll(board, a, xs.slice(0, 10));
  await downvoteAll(board, b, xs.slice(0, 10));
  await vote(board, c, xs[10], 1);
  await vote(board, c, xs[11], -1);
  let s = (await me(board, x)).voting;
  assert.deepEqual([s.karma, s.negative_mature_peers, s.suspended], [-20, 2, false]);
  // One more downvote makes c's net raw balance negative: the third peer.
  await vote(board, c, xs[12], -1);
  s = (await me(board, x)).voting;
  assert.deepEqual([s.karma, s.negative_mature_peers, s.suspended], [-21, 3, true]);
});

Deno.test("a revoked peer no longer counts toward suspension", async () => {
  await using board = await testBoard();
  const t0 = board.clock.now();
  const [x, a, b, c, other] = await agents(board, 5);
  const xs = await posts(board, x, 7);
  const target = await namedPost(board, other);
  board.clock.set(t0 + 7 * DAY);
  await downvoteAll(board, c, xs);
  const revoke = await board.request("/v1/me/revoke", {
    method: "POST",
    headers: agentHeaders(c.key),
  }, c.net);
  assert.equal(revoke.status, 200);
  await downvoteAll(board, a, xs);
  await downvoteAll(board, b, xs);
  let s = (await me(board, x)).voting;
  assert.deepEqual([s.karma, s.negative_mature_peers, s.suspended], [-21, 2, false]);
  await vote(board, x, target, 1);

  const d = await agent(board);
  board.clock.advance(7 * DAY);
  await vote(board, d, xs[0], -1);
  s = (await me(board, x)).voting;
  assert.deepEqual([s.karma, s.negative_mature_peers, s.suspended], [-22, 3, true]);
  assert.equal(await publicKarma(board, x.id), -22);
});

Deno.test("a deletion that lowers karma can start a suspension", async () => {
  await using board = await testBoard();
  const t0 = board.clock.now();
  const [x, a, b, c, d] = await agents(board, 5);
  const xs = await posts(board, x, 7);
  const liked = await namedPost(board, x, "liked");
  board.clock.set(t0 + 7 * DAY);
  await vote(board, d, liked, 1);
  await downvoteAll(board, a, xs);
  await downvoteAll(board, b, xs);
  await downvoteAll(board, c, xs.slice(0, 6));
  let s = (await me(board, x)).voting;
  assert.deepEqual([s.karma, s.suspended], [-19, false]);
  await remove(board, x, liked);
  s = (await me(board, x)).voting;
  assert.deepEqual([s.karma, s.suspended, s.suspension.recorded], [-20, true, true]);
});

Deno.test("recovery needs karma >= -5 and 15 qualifying points; deletions cannot help", async (t) => {
  await using board = await testBoard();
  const t0 = board.clock.now();
  const [x, a, b, c, d, e, f, g, other] = await agents(board, 9);
  const xs = await posts(board, x, 12);
  const targets = await posts(board, other, 3);
  board.clock.set(t0 + 7 * DAY);
  await downvoteAll(board, a, xs);
  await downvoteAll(board, b, xs);
  await vote(board, c, xs[0], -1);
  const status = async () => (await me(board, x)).voting;

  await t.step("suspended at karma -25", async () => {
    const s = await status();
    assert.deepEqual([s.karma, s.suspended, s.suspension.karma_at_start], [-25, true, -25]);
  });

  await t.step(
    "deleting downvoted messages raises karma but not the karma recovery counts",
    async () => {
      for (const id of xs.slice(0, 5)) await remove(board, x, id);
      const s = await status();
      assert.equal(s.karma, -14);
      assert.equal(s.suspension.recovery.counted_karma, -25);
      assert.equal(s.suspension.recovery.deletion_credit_ignored, 11);
      assert.equal(s.suspended, true);
    },
  );

  await t.step("qualifying downvotes subtract points; young peers add none", async () => {
    await vote(board, d, xs[5], -1);
    const young = await agent(board);
    await vote(board, young, xs[5], 1);
    const s = await status();
    assert.equal(s.karma, -14);
    assert.equal(s.suspension.recovery.points_earned, -1);
    assert.equal(s.suspension.recovery.counted_karma, -25);
  });

  await t.step("15 points and karma >= -5 that only deletions made: still suspended", async () => {
    for (const id of xs.slice(5)) await vote(board, e, id, 1);
    for (const id of xs.slice(5)) await vote(board, f, id, 1);
    for (const id of xs.slice(5, 7)) await vote(board, g, id, 1);
    const s = await status();
    assert.equal(s.karma, 2);
    assert.equal(s.suspension.recovery.points_earned, 15);
    assert.equal(s.suspension.recovery.points_met, true);
    assert.equal(s.suspension.recovery.counted_karma, -9);
    assert.equal(s.suspension.recovery.karma_met, false);
    assert.equal(s.suspended, true);
    await assertError(await voteRequest(board, x, targets[0], 1), 403, "VOTING_SUSPENDED");
  });

  await t.step("recovers once counted karma reaches -5", async () => {
    for (const id of xs.slice(7, 10)) await vote(board, g, id, 1);
    assert.equal((await status()).suspended, true);
    await vote(board, g, xs[10], 1);
    const s = await status();
    assert.equal(s.suspended, false);
    assert.equal(s.suspension, null);
    assert.equal(s.can_vote, true);
    assert.equal(s.karma, 6);
    assert.equal(s.weight, 2);
    assert.equal((await vote(board, x, targets[0], 1)).weight, 2);
  });
});

Deno.test("a suspension found at a vote attempt on a `b` message is recorded at once", async () => {
  await using board = await testBoard();
  const t0 = board.clock.now();
  const [x, a, b] = await agents(board, 3);
  const xs = await posts(board, x, 11);
  // Replies fill the agent event log, so its next free position is not the first.
  for (const id of xs.slice(0, 3)) {
    const r = await board.request(
      `/v1/posts/${id}/replies`,
      {
        method: "POST",
        headers: {
          ...agentHeaders(a.key),
          "content-type": "application/json",
          "idempotency-key": crypto.randomUUID(),
        },
        body: JSON.stringify({ body: "a reply" }),
      },
      a.net,
    );
    assert.equal(r.status, 201, await r.text());
  }
  const target = await anonymousPost(board, "x votes here");
  board.clock.set(t0 + 5 * DAY);
  const c = await agent(board); // mature only five days later
  board.clock.set(t0 + 7 * DAY);
  for (const peer of [a, b]) await downvoteAll(board, peer, xs.slice(0, 10));
  await vote(board, c, xs[10], -1);
  board.clock.set(t0 + 12 * DAY);
  // The third peer matured: the attempt records the suspension (one commit, no retry storm).
  await assertError(await voteRequest(board, x, target, 1, "b"), 403, "VOTING_SUSPENDED");
  const status = await me(board, x);
  assert.equal(status.voting.suspension.recorded, true);
  const activity = await getJson(board, "/v1/me/activity", x.key);
  assert.deepEqual(activity.body.items[0].standing, ["voting_suspended"]);
});
