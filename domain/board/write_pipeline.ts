/**
 * The one group commit (kv/tx.ts) that publications and votes share. Both charge the
 * network's write window, a key every one of them reads and rewrites: in one pipeline its
 * writes follow each other in order, where two pipelines would keep failing each other's
 * commits on it (docs/benchmark_notes.md). Edits and deletions take the same in-process lock.
 */

/** The in-process lock (and group queue) of board writes. */
export const BOARD_WRITES_LOCK = "board-writes";

/**
 * Keys worth remembering between board-write commits: everything but write-once records
 * nobody reads again soon (Idempotency-Key records, vote records).
 */
export function rememberBoardWrite(key: Deno.KvKey): boolean {
  return key[0] !== "idempotency" && key[0] !== "votes";
}
