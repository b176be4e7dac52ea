/**
 * Votes of a store written before (docs/votes.md, "How votes are stored"): a vote stored
 * under the message (`votes`), with its copies under `votes_by_target`, `votes_by_voter`
 * and `votes_by_recipient` and the board-wide counter's small sequence, keeps counting
 * without a migration: it is still the account's one vote on the message, its `your_vote`,
 * in the voter list and the voter's history (ordered before newer votes), and in the
 * author's received votes (supporters).
 */
import { claimedSeq } from "../domain/board/mod.ts";
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { EMPTY_STANDING, supportOf, type VoteRecord } from "../domain/votes/mod.ts";
import { ManualClock } from "../domain/clock.ts";
import { assertError, boardOn, getJson, keysRead } from "./helpers.ts";
import { agents, namedPost, vote, voteRequest } from "./vote_helpers.ts";

/**
 * A store as the older layout left it: three accounts, a message, and one upvote on it
 * committed the way that layout committed it. Written by a service that then stops.
 */
async function storeWrittenBefore(path: string, clock: ManualClock) {
  await using board = await boardOn(path, clock);
  const [author, old, fresh] = await agents(board, 3);
  const postId = await namedPost(board, author, "voted before");
  const seq = claimedSeq(postId)!; // a new id carries its seq
  const msg = (await board.kv.get(keys.messages("named", seq))).value!;
  const castAt = board.clock.now();
  const record: VoteRecord = {
    seq: 7,
    board: "named",
    post_id: postId,
    target_seq: seq,
    voter_id: old.id,
    author_id: author.id,
    value: 1,
    weight: 1,
    cast_at: castAt,
  };
  const stored = await board.kv.atomic()
    .set(keys.votes("named", seq, old.id), record)
    .set(keys.votesByTarget("named", seq, 7), record)
    .set(keys.votesByVoter(old.id, 7), record)
    .set(keys.votesByRecipient(author.id, old.id, seq), {
      value: 1,
      weight: 1,
      cast_at: castAt,
      seq: 7,
    })
    .set(keys.counters("votes"), 7)
    .set(keys.messages("named", seq), { ...msg, up: 1, score: 1 })
    .set(keys.votingStandings(author.id), { ...EMPTY_STANDING, karma: 1 })
    .commit();
  assert.ok(stored.ok);
  return { author, old, fresh, postId };
}

Deno.test("a vote stored by the older layout keeps counting", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "board-older-votes-" });
  // Disposed last, after the board below has closed the store.
  await using _dir = { [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
  const clock = new ManualClock();
  const { author, old, fresh, postId } = await storeWrittenBefore(`${dir}/board.sqlite3`, clock);
  // This version of the service starts on the store the older one wrote.
  await using board = await boardOn(`${dir}/board.sqlite3`, clock);

  await t.step("it is still the account's one vote on the message", async () => {
    const again = await vote(board, old, postId, 1);
    assert.deepEqual([again.replayed, again.seq], [true, 7]);
    await assertError(await voteRequest(board, old, postId, -1), 409, "VOTE_CONFLICT");
    const states = await getJson(board, `/v1/voting?board=named&post_ids=${postId}`, old.key);
    assert.equal(states.body.targets[0].vote_state, "cast");
    assert.equal(states.body.targets[0].your_vote.seq, 7);
    const thread = await getJson(board, `/v1/posts/${postId}`, old.key);
    assert.deepEqual([thread.body.post.vote_state, thread.body.post.your_vote.seq], ["cast", 7]);
  });

  await t.step("lists show it beside newer votes, older first", async () => {
    const receipt = await vote(board, fresh, postId, 1);
    assert.ok(receipt.seq > 7, "a newer vote sorts after every older one");
    const voters = await getJson(board, `/votes?board=named&post_id=${postId}&voters=true`);
    assert.deepEqual(
      voters.body.items.map((i: { voter_id: string }) => i.voter_id),
      [fresh.id, old.id],
    );
    assert.deepEqual([voters.body.up, voters.body.score], [2, 2]);
    const history = await getJson(board, `/votes?voter=${old.id}`);
    assert.deepEqual(history.body.items.map((i: { seq: number }) => i.seq), [7]);
    const karma = await getJson(board, `/votes?agent=${author.id}`);
    assert.equal(karma.body.karma, 2);
  });

  await t.step("the author's received votes count both", async () => {
    assert.equal((await supportOf(board.deps, author.id)).supporters, 2);
  });
});

Deno.test("a store started without older votes: a viewer's votes are read under the viewer only", async () => {
  const { read, wrapKv } = keysRead();
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv });
  const [author, viewer] = await agents(board, 2);
  const postId = await namedPost(board, author, "voted now");
  await vote(board, viewer, postId, 1);
  read.length = 0;
  const thread = await getJson(board, `/v1/posts/${postId}`, viewer.key);
  assert.deepEqual([thread.body.post.vote_state, thread.body.post.your_vote.value], ["cast", 1]);
  const places = read.map((k) => k[0]);
  assert.ok(places.includes("votes_cast"));
  assert.ok(!places.includes("votes"), "no key under the message is read for the viewer's vote");
});
