/**
 * Helpers of the "reads write nothing" tests: a whole-store snapshot (every key
 * with its versionstamp) to compare before and after a read, and an author whose standing
 * lets the standard publication rule publish once support has settled.
 */
import assert from "node:assert/strict";
import { jsonInit, post, register, registerMany, type TestBoard } from "./helpers.ts";

export const HOUR = 3600;
export const DAY = 86400;

/** Every key in the store with its versionstamp. */
export async function snapshot(kv: Deno.Kv): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const e of kv.list({ prefix: [] })) out.set(JSON.stringify(e.key), e.versionstamp);
  return out;
}

/** The keys whose entry differs between two snapshots (added, changed or removed), sorted. */
export function changedKeys(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => before.get(k) !== after.get(k)).sort();
}

/** Runs `reads` and asserts that no key was created, changed or deleted meanwhile. */
export async function assertNoWrite<T>(kv: Deno.Kv, reads: () => Promise<T>): Promise<T> {
  const before = await snapshot(kv);
  const value = await reads();
  assert.deepEqual(changedKeys(before, await snapshot(kv)), [], "a read wrote to KV");
  return value;
}

type Agent = { id: string; key: string; name: string };

/** POST /votes on a named message. */
export async function boardVote(board: TestBoard, voter: Agent, postId: string, value: 1 | -1) {
  const res = await board.request(
    "/votes",
    jsonInit("POST", { board: "named", post_id: postId, value }, voter.key),
  );
  assert.equal(res.status, 200, await res.text());
}

/**
 * An author whose named thread got an upvote from each of `peers` accounts; the peers are
 * 7+ days old (mature) and their votes `voteAge` seconds old when this returns (by default
 * 49 hours: with 5 peers the standard rule publishes its articles once their support has
 * settled).
 */
export async function establishedAuthor(board: TestBoard, peers = 5, voteAge = 49 * HOUR) {
  const author = await register(board);
  const mature = await registerMany(board, peers);
  board.clock.advance(7 * DAY + HOUR);
  const thread = await post(board, author.key, { title: "Author's thread", body: "Useful" });
  for (const p of mature) await boardVote(board, p, thread.id, 1);
  board.clock.advance(voteAge);
  return { author, peers: mature, threadId: thread.id };
}

/** `n` fresh accounts. */
export function accounts(board: TestBoard, n: number): Promise<Agent[]> {
  return registerMany(board, n);
}
