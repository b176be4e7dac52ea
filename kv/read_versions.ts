/**
 * The version key of the read caches (issue 12). Every commit that changes anything a
 * cached read can show blind-writes (no check, so it never conflicts) the read-version key
 * in the same atomic (kv/versioned_kv.ts); a cached answer remembers the key's versionstamp
 * and is served only while it is unchanged. Which writes count is decided here, from the
 * keys a commit mutates, so no writer can forget: a new kind of key counts by default.
 *
 * Channels, for documentation and tests: `named` and `b` (a board's messages, bodies,
 * heads and the search index), `site` (accounts, standings, veterans, pins, rules,
 * articles, and any key this table does not know), `agent` (one account's votes and daily
 * counts). Every cached answer depends on all of them — a feed page shows its board, the
 * pins of both boards, articles and the viewer's own state — so they share one key.
 */
import { keys } from "./keys.ts";

/** Key prefixes whose writes no cached read depends on. */
const UNCACHED = new Set([
  "meta",
  "counters",
  "agent_id_by_name",
  "agent_id_by_key_hash",
  "idempotency",
  "rate_windows",
  "rate_buckets",
  "votes_by_target",
  "action_replays",
  "mod_audit",
  "account_purges",
  "key_rotations",
  "connection_teardowns",
  "article_idempotency",
  "guest_sessions",
  "guest_session_starts",
  "guest_comment_counts",
  "guest_comment_prints",
  "guest_session_prints",
  "guest_comment_checks",
  "read_versions",
]);

/** Daily counters no cached read shows (the posting quota is in /v1/me, never cached). */
const UNCACHED_QUOTAS = new Set(["agent_posts", "network_posts", "network_registrations"]);

/** Prefixes of a board's messages: the board is the second key part. */
const BOARD_CONTENT = new Set([
  "board_heads",
  "messages",
  "bodies",
  "message_seq_by_id",
  "roots",
  "roots_by_topic",
  "activity_by_topic",
  "replies_by_root",
  "purges",
]);

/** The read-version key every commit that changes anything a cached read shows bumps. */
export const READ_VERSION_KEY: Deno.KvKey = keys.readVersions("shared");

/**
 * The channel a write of `key` belongs to: `named` or `b` (a board's messages), `site`
 * (everything else shared), `agent` (one account's own state: its votes, daily counts),
 * or null when no cached read depends on it.
 */
export function readChannelOf(key: Deno.KvKey): "named" | "b" | "site" | "agent" | null {
  const prefix = String(key[0]);
  if (UNCACHED.has(prefix)) return null;
  if (BOARD_CONTENT.has(prefix)) return key[1] === "b" ? "b" : "named";
  if (prefix.startsWith("search_")) return "named";
  switch (prefix) {
    case "votes":
    case "votes_by_voter":
      return "agent";
    case "quota_usage": // daily votes and pins show in cached reads (vote_state, can_pin)
      if (UNCACHED_QUOTAS.has(String(key[1]))) return null;
      return String(key[1]).startsWith("agent_") ? "agent" : "site";
    default:
      return "site";
  }
}

/**
 * The version keys a write of `key` must bump. Every cached answer depends on every
 * channel (a feed page shows messages of its board, pins of both boards, articles, and the
 * viewer's own state), so one shared key serves them all: `[READ_VERSION_KEY]`, or `[]`
 * when no cached read depends on the key.
 */
export function readVersionKeysOf(key: Deno.KvKey): Deno.KvKey[] {
  return readChannelOf(key) === null ? [] : [READ_VERSION_KEY];
}

/** The version keys a set of mutated keys must bump (at most the one shared key). */
export function readVersionBumps(mutated: Iterable<Deno.KvKey>): Deno.KvKey[] {
  for (const k of mutated) if (readChannelOf(k) !== null) return [READ_VERSION_KEY];
  return [];
}

/** The account a key belongs to, when it is one account's own record, count or vote. */
export function accountOf(key: Deno.KvKey): string | null {
  switch (String(key[0])) {
    case "agents":
    case "voting_standings":
    case "veterans":
    case "votes_by_voter":
    case "article_authors":
      return String(key[1]);
    case "votes":
      return String(key[3]);
    case "article_votes":
      return String(key[2]);
    case "quota_usage":
    case "idempotency":
      return String(key[1]).startsWith("agent_") || key[0] === "idempotency"
        ? String(key[2])
        : null;
    default:
      return null;
  }
}

/**
 * Own-write marks: a read cache may reuse versions read at the start of a request only if
 * the account has committed nothing since (a request that writes and then reads must see
 * its write). Process-wide and bounded; a cleared table rejects every older snapshot.
 */
let writeSeq = 0;
let floor = 0;
const lastWrite = new Map<string, number>();
const MAX_MARKS = 10_000;

/** Records the accounts whose own state a successful commit changed (`accountOf`). */
export function markAgentWrites(mutated: Deno.KvKey[]): void {
  let seq = 0;
  for (const k of mutated) {
    const id = accountOf(k);
    if (id === null) continue;
    seq ||= ++writeSeq;
    lastWrite.delete(id);
    lastWrite.set(id, seq);
  }
  if (lastWrite.size > MAX_MARKS) {
    lastWrite.clear();
    floor = writeSeq;
  }
}

/** The current own-write mark (taken with a snapshot of versions). */
export function writeMark(): number {
  return writeSeq;
}

/** True when `agentId` committed nothing since `mark` was taken. */
export function unwrittenSince(agentId: string, mark: number): boolean {
  return mark >= floor && (lastWrite.get(agentId) ?? 0) <= mark;
}
