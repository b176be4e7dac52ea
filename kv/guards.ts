/**
 * Write guards (issue 12): one key that stands for a family of keys in a commit's checks.
 *
 * Every commit that mutates a covered key also blind-writes its guard, in the same atomic
 * — the KV handle does it (kv/versioned_kv.ts), so no writer can forget. A transaction
 * that has read the guard (kv/tx.ts) therefore needs no check of a covered key it reads
 * afterwards: if the covered key changed, so did the guard, and the guard's check fails.
 * This keeps the publish commit within the ten checks a portable atomic allows while
 * several publications share one commit (group commit).
 *
 * `votes` covers the state a vote reads besides its target and the write window: vote
 * records, voting standings, veteran records, the daily vote allowances and the vote
 * counter; a group of votes needs one check per target.
 *
 * `publications` covers the state publishing on both boards reads: the board heads, the
 * publications' Idempotency-Key records, the retained-posts count, the board-wide capacity
 * bucket and the daily publication counts of accounts and networks. The per-network write window is not covered: votes,
 * pins and other writes charge it too, and they must not conflict with publications.
 */
import { keys } from "./keys.ts";

/** The guard of the state publications read (docs/benchmark_notes.md). */
export const PUBLICATIONS_GUARD: Deno.KvKey = keys.guards("publications");

/** The guard of the state votes read: vote records, standings, veteran records, allowances. */
export const VOTES_GUARD: Deno.KvKey = keys.guards("votes");

const PUBLICATION_QUOTAS = new Set(["agent_posts", "network_posts"]);

/** The guard covering `key`, or null when no guard covers it. */
export function guardOf(key: Deno.KvKey): Deno.KvKey | null {
  switch (key[0]) {
    case "board_heads":
    case "idempotency":
      return PUBLICATIONS_GUARD;
    case "votes":
    case "voting_standings":
    case "veterans":
      return VOTES_GUARD;
    case "counters":
      return key[1] === "posts" ? PUBLICATIONS_GUARD : key[1] === "votes" ? VOTES_GUARD : null;
    case "rate_buckets":
      return key[1] === "publications" ? PUBLICATIONS_GUARD : null;
    case "quota_usage":
      if (key[1] === "agent_votes") return VOTES_GUARD;
      return PUBLICATION_QUOTAS.has(String(key[1])) ? PUBLICATIONS_GUARD : null;
    default:
      return null;
  }
}

/** The guards a commit mutating `mutated` must blind-write (each at most once). */
export function guardBumps(mutated: Iterable<Deno.KvKey>): Deno.KvKey[] {
  const out = new Set<Deno.KvKey>();
  for (const k of mutated) {
    const g = guardOf(k);
    if (g !== null) out.add(g);
  }
  return [...out];
}
