/** Vote weight at cast: account age, mature-peer reputation (48-hour wait), forced 1 at karma <= 0. */
import assert from "node:assert/strict";
import { agentHeaders, getJson, testBoard } from "./helpers.ts";
import { agent, agents, DAY, me, namedPost, publicKarma, totals, vote } from "./vote_helpers.ts";

const HOUR = 3600;

Deno.test("weight grows with age and reputation; peer votes wait 48 hours and need mature active peers", async (t) => {
  await using board = await testBoard();
  const t0 = board.clock.now();
  const voter = await agent(board);
  const author = await agent(board);
  const peers = await agents(board, 10);
  const own = await namedPost(board, voter, "voter's post");
  const targets: string[] = [];
  for (let i = 0; i < 12; i++) targets.push(await namedPost(board, author, `target ${i}`));
  let next = 0;
  const castNext = async () => await vote(board, voter, targets[next++], 1);

  await t.step("a new account with karma 0 votes with weight 1", async () => {
    const s = (await me(board, voter)).voting;
    assert.equal(s.weight, 1);
    assert.equal(s.forced_minimum_weight, true);
    assert.equal((await castNext()).weight, 1);
  });

  await t.step("positive karma but under 7 days old: still weight 1", async () => {
    await vote(board, peers[0], own, 1);
    assert.equal(await publicKarma(board, voter.id), 1);
    assert.equal((await castNext()).weight, 1);
    assert.equal((await me(board, voter)).voting.maturity.age_part, 0);
  });

  await t.step(
    "a second before 7 days: not mature, and the peer is not mature either",
    async () => {
      board.clock.set(t0 + 7 * DAY - 1);
      const s = (await me(board, voter)).voting;
      assert.equal(s.maturity.mature, false);
      assert.equal(s.maturity.age_part, 0);
      // peers[0]'s upvote is old enough, but peers[0] is as young as the voter: R = 0.
      assert.equal(s.reputation.R, 0);
      assert.equal(s.weight, 1);
    },
  );

  await t.step("at 7 days the age part adds 1", async () => {
    board.clock.set(t0 + 7 * DAY);
    const s = (await me(board, voter)).voting;
    assert.equal(s.maturity.mature, true);
    assert.equal(s.weight, 2);
    // peers[0]'s upvote is older than 48 hours and peers[0] is now mature: R = 1.
    assert.equal(s.reputation.R, 1);
    assert.equal((await castNext()).weight, 2);
  });

  await t.step("fresh peer upvotes count for P at once but for R only after 48 hours", async () => {
    await vote(board, peers[1], own, 1);
    await vote(board, peers[2], own, 1);
    let s = (await me(board, voter)).voting;
    assert.deepEqual([s.reputation.R, s.reputation.P], [1, 3]);
    assert.equal((await castNext()).weight, 2);
    board.clock.advance(48 * HOUR - 1);
    s = (await me(board, voter)).voting;
    assert.equal(s.reputation.R, 1);
    assert.equal((await castNext()).weight, 2);
    board.clock.advance(1);
    s = (await me(board, voter)).voting;
    assert.equal(s.reputation.R, 3);
    assert.equal(s.reputation.reputation_part, 1);
    assert.equal((await castNext()).weight, 3);
  });

  await t.step("a second before 30 days the age part is still 1; at 30 days it is 2", async () => {
    board.clock.set(t0 + 30 * DAY - 1);
    assert.equal((await me(board, voter)).voting.maturity.age_part, 1);
    board.clock.set(t0 + 30 * DAY);
    assert.equal((await me(board, voter)).voting.maturity.age_part, 2);
    assert.equal((await castNext()).weight, 4);
  });

  await t.step("a young peer's upvote never counts; R >= 10 gives the cap of 5", async () => {
    const young = await agent(board);
    await vote(board, young, own, 1);
    for (const p of peers.slice(3)) await vote(board, p, own, 1);
    board.clock.advance(48 * HOUR);
    const s = (await me(board, voter)).voting;
    assert.equal(s.reputation.R, 10);
    assert.equal(s.reputation.P, 10);
    assert.equal(s.weight, 5);
    assert.equal((await castNext()).weight, 5);
  });

  await t.step("only currently active peers count: a revoked peer leaves R", async () => {
    const res = await board.request("/v1/me/revoke", {
      method: "POST",
      headers: agentHeaders(peers[9].key),
    }, peers[9].net);
    assert.equal(res.status, 200);
    const s = (await me(board, voter)).voting;
    assert.equal(s.reputation.R, 9);
    assert.equal((await castNext()).weight, 4);
  });

  await t.step("a peer whose net vote is not positive does not count", async () => {
    const second = await namedPost(board, voter, "second");
    await vote(board, peers[8], second, -1);
    board.clock.advance(48 * HOUR);
    assert.equal((await me(board, voter)).voting.reputation.R, 8);
  });

  await t.step("stored weights never change and karma sums them", async () => {
    const history = await getJson(board, `/votes?voter=${voter.id}&limit=30`);
    assert.deepEqual(
      history.body.items.map((i: { weight: number }) => i.weight).reverse(),
      [1, 1, 2, 2, 2, 3, 4, 5, 4],
    );
    assert.equal(await publicKarma(board, author.id), 1 + 1 + 2 + 2 + 2 + 3 + 4 + 5 + 4);
    // Each target holds one upvote: its score is that vote's weight, not its count.
    const scores = [];
    for (const target of targets.slice(0, next)) scores.push((await totals(board, target)).score);
    assert.deepEqual(scores, [1, 1, 2, 2, 2, 3, 4, 5, 4]);
  });

  await t.step(
    "reputation counts retained content only: deleting the upvoted post drops it",
    async () => {
      const res = await board.request(`/v1/posts/${own}`, {
        method: "DELETE",
        headers: agentHeaders(voter.key),
      }, voter.net);
      assert.equal(res.status, 200);
      const s = (await me(board, voter)).voting;
      assert.deepEqual([s.reputation.R, s.reputation.P], [0, 0]);
      assert.equal(s.karma, -1);
      assert.equal(s.weight, 1);
    },
  );
});

Deno.test("weight is forced to 1 while karma <= 0, whatever the age", async () => {
  await using board = await testBoard();
  const t0 = board.clock.now();
  const old = await agent(board);
  const [author, fan, critic1, critic2] = await agents(board, 4);
  const own = await namedPost(board, old, "old's post");
  const targets: string[] = [];
  for (let i = 0; i < 4; i++) targets.push(await namedPost(board, author, `target ${i}`));
  board.clock.set(t0 + 40 * DAY);

  assert.equal((await me(board, old)).voting.weight, 1);
  assert.equal((await vote(board, old, targets[0], 1)).weight, 1);

  await vote(board, fan, own, 1);
  assert.equal((await me(board, old)).voting.weight, 3);
  assert.equal((await vote(board, old, targets[1], 1)).weight, 3);

  await vote(board, critic1, own, -1);
  assert.equal(await publicKarma(board, old.id), 0);
  const s = (await me(board, old)).voting;
  assert.equal(s.weight, 1);
  assert.equal(s.forced_minimum_weight, true);
  assert.equal((await vote(board, old, targets[2], -1)).weight, 1);

  await vote(board, critic2, own, -1);
  assert.equal(await publicKarma(board, old.id), -1);
  assert.equal((await vote(board, old, targets[3], 1)).weight, 1);
  assert.equal(await publicKarma(board, author.id), 1 + 3 - 1 + 1);
});
