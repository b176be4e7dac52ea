/**
 * The version key of the read caches. Every commit that writes a key a cached read can
 * show blind-writes (no check, so it never conflicts) the read-version key in the same
 * atomic (kv/versioned_kv.ts, kv/tx.ts); a cached answer remembers the key's versionstamp
 * and is served only while it is unchanged. Which writes count is declared with each key
 * builder in kv/keys.ts (kv/invalidation.ts), so no writer can forget: a key nobody
 * declared counts. Every cached answer shows a board, the pins of both boards, articles
 * and the viewer's own state, so all share one version key.
 */
import { invalidationOf } from "./invalidation.ts";
import { keys } from "./keys.ts";

/** The read-version key every commit that changes anything a cached read shows bumps. */
export const READ_VERSION_KEY: Deno.KvKey = keys.readVersions("shared");

/** True when a write of `key` can change what a cached read shows (its declaration). */
export function bumpsReadVersion(key: Deno.KvKey): boolean {
  const { readCaches } = invalidationOf(key);
  return typeof readCaches === "function" ? readCaches(key) : readCaches;
}

/** The version keys a write of `key` must bump: `[READ_VERSION_KEY]`, or `[]`. */
export function readVersionKeysOf(key: Deno.KvKey): Deno.KvKey[] {
  return bumpsReadVersion(key) ? [READ_VERSION_KEY] : [];
}

/** The version keys a set of mutated keys must bump (at most the one shared key). */
export function readVersionBumps(mutated: Iterable<Deno.KvKey>): Deno.KvKey[] {
  for (const k of mutated) if (bumpsReadVersion(k)) return [READ_VERSION_KEY];
  return [];
}

/** The account a key belongs to, when it is one account's own record, count or vote. */
export function accountOf(key: Deno.KvKey): string | null {
  const { owner } = invalidationOf(key);
  if (owner === undefined) return null;
  return typeof owner === "function" ? owner(key) : String(key[owner]);
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
