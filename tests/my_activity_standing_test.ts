/**
 * GET /v1/me/activity: pins of the account's threads and changes of its own standing
 * (veteran status, voting suspension), as GET /v1/me reports them.
 */
import assert from "node:assert/strict";
import { idemKey, testBoard } from "./helpers.ts";
import { keys } from "../kv/keys.ts";
import {
  agent,
  agents,
  DAY,
  me,
  namedPost,
  type TestAgent,
  vote,
  voteRequest,
} from "./vote_helpers.ts";
import { candidates, dropKarma, MOD_KEY, modRequest, pinDomain, veterans } from "./pin_helpers.ts";
import { activity } from "./my_activity_helpers.ts";
import type { TestBoard } from "./helpers.ts";

/** The items of `who` that carry standing changes: `type:changes`. */
async function standing(board: TestBoard, who: TestAgent): Promise<string[]> {
  const items = (await activity(board, who, "?limit=30")).items;
  return items.filter((i) => i.standing.length).map((i) => `${i.type}:${i.standing.join(",")}`);
}

Deno.test("pins and unpins of my threads: community (by a veteran) and official", async (t) => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const { cands } = await veterans(board, 1);
  const [pinner] = cands;
  const [author] = await agents(board, 1);
  const thread = await namedPost(board, author, "worth pinning");

  await t.step("a veteran pins it, then unpins it", async () => {
    await pinDomain(board, pinner, { board: "named", thread_id: thread, pinned: true });
    await pinDomain(board, pinner, { board: "named", thread_id: thread, pinned: false });
    const items = (await activity(board, author)).items;
    assert.deepEqual(items.map((i) => [i.type, i.message?.id, i.pin]), [
      ["unpin", thread, { kind: "community", pinned_by: pinner.id }],
      ["pin", thread, { kind: "community", pinned_by: pinner.id }],
    ]);
  });

  await t.step("a repeated pin is free and no new item; a veteran's own thread none", async () => {
    const before = (await activity(board, author)).newest_cursor!;
    board.clock.advance(DAY);
    const own = pinner.threads[0];
    await pinDomain(board, pinner, { board: "named", thread_id: own, pinned: true });
    await pinDomain(board, pinner, { board: "named", thread_id: own, pinned: true });
    assert.deepEqual((await activity(board, author, `?after=${before}`)).items, []);
    assert.deepEqual(
      (await activity(board, pinner)).items.filter((i) => i.type === "pin"),
      [],
      "pinning one's own thread is one's own action",
    );
  });

  await t.step("a moderator's official notice", async () => {
    const res = await modRequest(board, "POST", "/mod/pins", {
      board: "named",
      thread_id: thread,
      pinned: true,
    }, idemKey());
    assert.equal(res.status, 200, await res.text());
    const [item] = (await activity(board, author)).items;
    assert.deepEqual([item.type, item.message?.id, item.pin], [
      "pin",
      thread,
      { kind: "official", pinned_by: null },
    ]);
  });

  await t.step("and its removal", async () => {
    const res = await modRequest(board, "POST", "/mod/pins", {
      board: "named",
      thread_id: thread,
      pinned: false,
    }, idemKey());
    assert.equal(res.status, 200, await res.text());
    const [item] = (await activity(board, author)).items;
    assert.deepEqual([item.type, item.pin], ["unpin", { kind: "official", pinned_by: null }]);
  });
});

Deno.test("the vote that makes an old enough account a veteran records it, in that vote", async () => {
  await using board = await testBoard();
  const [cand, ...voters] = await agents(board, 4);
  const threads = [await namedPost(board, cand, "first"), await namedPost(board, cand, "second")];
  // Karma 4 from two supporters: one short of the three veteran status needs.
  for (const v of voters.slice(0, 2)) for (const t of threads) await vote(board, v, t, 1);
  board.clock.advance(7 * DAY + 1);
  assert.equal((await board.kv.get(keys.veterans(cand.id))).value, null);
  assert.deepEqual(await standing(board, cand), []);
  // The third supporter's upvote: karma and supporters both reach the rule in this commit.
  await vote(board, voters[2], threads[0], 1);
  const stored = (await board.kv.get(keys.veterans(cand.id))).value;
  assert.ok(stored, "stored by the vote's own commit");
  assert.equal(stored.earned_at, board.clock.now());
  assert.deepEqual(await standing(board, cand), ["vote:veteran_gained"]);
  assert.equal((await me(board, cand)).pinning.veteran, true);
});

Deno.test("veteran status gained and lost reach the account's activity", async () => {
  await using board = await testBoard();
  const { cands, voters } = await candidates(board, 1);
  const [cand] = cands;
  assert.deepEqual(await standing(board, cand), [], "not yet 7 days old: nothing recorded");
  board.clock.advance(7 * DAY + 1);
  // The next commit that changes its karma records the status earned meanwhile.
  await vote(board, voters[2], cand.threads[1], 1);
  assert.equal((await me(board, cand)).pinning.veteran, true);
  assert.deepEqual(await standing(board, cand), ["vote:veteran_gained"]);
  await dropKarma(board, cand, 12);
  assert.equal((await me(board, cand)).pinning.suspended, true);
  assert.deepEqual(await standing(board, cand), ["vote:veteran_lost", "vote:veteran_gained"]);
});

Deno.test("a voting suspension and its recovery reach the account's activity", async () => {
  await using board = await testBoard();
  const t0 = board.clock.now();
  const [x, a, b, c] = await agents(board, 4);
  const recoverers = await agents(board, 8);
  const xs: string[] = [];
  for (let i = 0; i < 7; i++) xs.push(await namedPost(board, x, `post ${i}`));
  board.clock.set(t0 + 7 * DAY); // every peer is mature
  for (const peer of [a, b]) for (const id of xs) await vote(board, peer, id, -1);
  for (const id of xs.slice(0, 6)) await vote(board, c, id, -1);
  assert.equal((await me(board, x)).voting.suspended, true);
  const suspended = (await activity(board, x, "?limit=30")).items
    .filter((i) => i.standing.includes("voting_suspended"));
  assert.equal(suspended.length, 1);
  assert.equal(suspended[0].type, "vote", "recorded by the vote that suspended it");
  assert.equal(suspended[0].vote?.voter_id, c.id);

  // 15 points from mature peers with karma back at -5: recovered by the 15th upvote.
  const fresh = [await namedPost(board, x, "new 1"), await namedPost(board, x, "new 2")];
  const upvotes = recoverers.flatMap((r) => fresh.map((id) => ({ r, id }))).slice(0, 15);
  for (const { r, id } of upvotes) await vote(board, r, id, 1);
  assert.equal((await me(board, x)).voting.suspended, false);
  const items = (await activity(board, x, "?limit=30")).items;
  const restored = items.filter((i) => i.standing.includes("voting_restored"));
  assert.equal(restored.length, 1);
  assert.equal(restored[0].seq, items[0].seq, "the newest item: the 15th upvote");
  assert.deepEqual(restored[0].vote?.voter_id, upvotes[14].r.id);
});

Deno.test("a suspension found at the account's own vote attempt is a standing item", async () => {
  await using board = await testBoard();
  const t0 = board.clock.now();
  const [x, a, b, other] = await agents(board, 4);
  const xs: string[] = [];
  for (let i = 0; i < 12; i++) xs.push(await namedPost(board, x, `post ${i}`));
  const target = await namedPost(board, other, "x wants to vote on this");
  board.clock.set(t0 + 5 * DAY);
  const c = await agent(board); // mature only five days later
  board.clock.set(t0 + 7 * DAY);
  for (const peer of [a, b]) for (const id of xs.slice(0, 10)) await vote(board, peer, id, -1);
  await vote(board, c, xs[10], -1);
  assert.equal((await me(board, x)).voting.suspension, null, "two mature peers: not yet");
  board.clock.set(t0 + 12 * DAY);
  const res = await voteRequest(board, x, target, 1);
  assert.equal(res.status, 403, await res.text());
  const [item] = (await activity(board, x)).items;
  assert.deepEqual([item.type, item.standing, item.message], [
    "standing",
    ["voting_suspended"],
    null,
  ]);
});
