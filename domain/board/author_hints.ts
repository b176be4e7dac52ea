/**
 * Who wrote which named message, per store, as this instance last saw it: what a vote plans
 * its first read batch with (the author's standing beside the message, domain/votes/cast.ts).
 * A hint only chooses keys to read: the vote reads the message with a check in its commit and
 * acts on the author the message names. A hint that is missing (this instance has not served
 * the message) or wrong costs the vote one more read round, never a wrong write. A message's
 * author never changes, so a hint is wrong only when a message noted as it was staged did not
 * commit (another took its seq) or a store is replaced under a running instance.
 */
/**
 * Hints kept per store: as many as the board retains posts and replies. About 100 bytes each;
 * past the cap the oldest noted goes first.
 */
const MAX_HINTS = 25_000;

const hints = new WeakMap<Deno.Kv, Map<number, string>>();

/** What a hint is taken from: a message record (domain/board/messages.ts). */
interface Authored {
  board: string;
  seq: number;
  agent_id: string | null;
}

/** Notes the authors of the named-board `records` of `kv`, as just read or written. */
export function noteAuthors(kv: Deno.Kv, records: readonly Authored[]): void {
  let known = hints.get(kv);
  for (const r of records) {
    if (r.board !== "named" || !r.agent_id) continue;
    if (!known) hints.set(kv, known = new Map());
    if (known.get(r.seq) === r.agent_id) continue;
    known.set(r.seq, r.agent_id);
    if (known.size > MAX_HINTS) known.delete(known.keys().next().value!);
  }
}

/** The account that wrote named message `seq` of `kv` as last seen, or null when not seen. */
export function authorHint(kv: Deno.Kv, seq: number): string | null {
  return hints.get(kv)?.get(seq) ?? null;
}
