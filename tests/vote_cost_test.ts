/**
 * What a vote writes: at most 6 entries (besides the read caches' version key, a blind
 * write), none of them a key every vote shares: its voter's allowance and network window,
 * its record under the voter, the message's summary, and on a named message of an account
 * the author's standing and the vote under the author; on `b`, the vote under the message.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { READ_VERSION_KEY } from "../kv/keys.ts";
import { boardOn } from "./helpers.ts";
import { recordingKv } from "./kv_write_recorder.ts";
import { agents, anonymousPost, namedPost, vote } from "./vote_helpers.ts";

Deno.test("a vote writes at most 6 entries, none shared by every vote", async (t) => {
  let rec: ReturnType<typeof recordingKv> | undefined;
  await using board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: (raw) => (rec = recordingKv(raw)).kv,
  });
  const [author, voter] = await agents(board, 2);
  const named = await namedPost(board, author, "a named target");
  const anon = await anonymousPost(board, "a b target");
  const bumps = (keys: string[]) => keys.filter((k) => k === READ_VERSION_KEY[0]).length;
  const entries = (keys: string[]) => keys.filter((k) => k !== READ_VERSION_KEY[0]).sort();

  await t.step("on a named message of an account: 6", async () => {
    rec!.take();
    await vote(board, voter, named, 1);
    const [commit, ...rest] = rec!.take();
    assert.equal(rest.length, 0, "one commit");
    assert.deepEqual(entries(commit), [
      "messages",
      "quota_usage",
      "rate_windows",
      "votes_cast",
      "votes_received",
      "voting_standings",
    ]);
    assert.equal(bumps(commit), 1);
  });

  await t.step("on a `b` message: 5", async () => {
    rec!.take();
    await vote(board, voter, anon, -1, "b");
    const [commit] = rec!.take();
    assert.deepEqual(entries(commit), [
      "messages",
      "quota_usage",
      "rate_windows",
      "votes",
      "votes_cast",
    ]);
  });

  await t.step("an exact repeat writes nothing", async () => {
    rec!.take();
    assert.equal((await vote(board, voter, named, 1)).replayed, true);
    assert.deepEqual(rec!.take(), []);
  });
});
