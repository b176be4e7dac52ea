/**
 * Message ids that carry their sequence number. A new message's id is a UUID version 7
 * (domain/ids.ts) whose last group (48 bits) holds the message's seq on its board, so the
 * key of its record (`["messages", board, seq]`) can be computed from the id alone and read
 * in an operation's first batch, instead of after a lookup of `message_seq_by_id`. The seq
 * an id claims is never trusted: the record read there must carry that very id, and an id
 * made before (its last group random) or one naming another message falls back to the
 * index, which holds only ids made before (a new message writes no entry there). A seq is
 * public anyway (every receipt and feed item shows it); the id keeps its
 * time prefix and 26 random bits.
 */
import type { Deps } from "../deps.ts";

/** The largest seq an id can carry: 48 bits. */
const MAX_CARRIED = 2 ** 48 - 1;

/** A new message's id for sequence number `seq`: `deps.newId()` with `seq` in its last group. */
export function messageId(deps: Deps, seq: number): string {
  const id = deps.newId();
  if (!Number.isSafeInteger(seq) || seq < 1 || seq > MAX_CARRIED) return id;
  return id.slice(0, 24) + seq.toString(16).padStart(12, "0");
}

/**
 * The seq message id `id` claims to carry (unverified: the caller reads the record there and
 * compares its id), or null when it claims none.
 */
export function claimedSeq(id: string): number | null {
  const tail = id.slice(24);
  if (id.length !== 36 || !/^[0-9a-f]{12}$/i.test(tail)) return null;
  const seq = parseInt(tail, 16);
  return seq >= 1 ? seq : null;
}
