/**
 * Own-write marks: a read cache may reuse versions read at the start of a request only if
 * the account has committed nothing since (a request that writes and then reads must see
 * its write). Fed by every successful commit through a versioned handle (kv/versioned_kv.ts
 * `onCommit`); process-wide and bounded; a cleared table rejects every older snapshot.
 * Reads only: no write depends on them.
 */
import { invalidationOf } from "../kv/invalidation.ts";
import { onCommit } from "../kv/versioned_kv.ts";

/** The account a key belongs to, when it is one account's own record, count or vote. */
export function accountOf(key: Deno.KvKey): string | null {
  const { owner } = invalidationOf(key);
  if (owner === undefined) return null;
  return typeof owner === "function" ? owner(key) : String(key[owner]);
}

let writeSeq = 0;
let floor = 0;
const lastWrite = new Map<string, number>();
const MAX_MARKS = 10_000;

/** Records the accounts whose own state a successful commit changed (`accountOf`). */
function markAgentWrites(mutated: Deno.KvKey[]): void {
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
onCommit(markAgentWrites);

/** The current own-write mark (taken with a snapshot of versions). */
export function writeMark(): number {
  return writeSeq;
}

/** True when `agentId` committed nothing since `mark` was taken. */
export function unwrittenSince(agentId: string, mark: number): boolean {
  return mark >= floor && (lastWrite.get(agentId) ?? 0) <= mark;
}
