/**
 * A message read by id inside a transaction, planned for one batch: the record at the seq
 * its id carries (`claimedSeq`) with the id index, which decides only when the claim is not
 * the message's (an id made before, or one naming another message: one round trip more).
 */
import { type Board, keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import { readNamed } from "../../kv/read_many.ts";
import { claimedSeq } from "./message_ids.ts";
import type { MessageRecord } from "./messages.ts";

/**
 * The keys `messageById` and `messageSeqById` read, for the caller's planned batch
 * (`tx.prefetch`): the record at the seq the id carries, and the id index.
 */
export function messageReadPlan(board: Board, id: string): Deno.KvKey[] {
  const seq = claimedSeq(id);
  return [...(seq === null ? [] : [keys.messages(board, seq)]), keys.messageSeqById(board, id)];
}

/**
 * The seq of message `id` (unchecked: an id's seq never changes): the one its id carries
 * when the record there is that message, else the one its index names. Null when unknown.
 * Plan `messageReadPlan` first.
 */
export async function messageSeqById(tx: Tx, board: Board, id: string): Promise<number | null> {
  const seq = claimedSeq(id);
  const atClaim = seq === null ? null : (await tx.peek(keys.messages(board, seq))).value;
  // The index is peeked only when the claim is not the message's (`seqFound`).
  return seqFound(id, atClaim, null) ?? (await tx.peek(keys.messageSeqById(board, id))).value;
}

/**
 * The record of message `id`, read with a check, at the seq `messageSeqById` finds. Null
 * when there is none. Plan `messageReadPlan` first.
 */
export async function messageById(tx: Tx, board: Board, id: string): Promise<MessageRecord | null> {
  const seq = await messageSeqById(tx, board, id);
  return seq === null ? null : (await tx.get(keys.messages(board, seq))).value;
}

/**
 * The seq of message `id` from what a read of `messageReadPlan(board, id)` found: the seq
 * its id carries when the record there is that message (`atClaim`), else the one the id
 * index names (an id made before, or one naming another message), or null.
 */
export function seqFound(
  id: string,
  atClaim: MessageRecord | null | undefined,
  index: number | null,
): number | null {
  const claimed = claimedSeq(id);
  return claimed !== null && atClaim?.id === id ? claimed : index;
}

/** The seq of message `id` of `board` in one read (null: no such message). */
export async function findMessageSeq(
  kv: Deno.Kv,
  board: Board,
  id: string,
): Promise<number | null> {
  const claimed = claimedSeq(id);
  const found = await readNamed(kv, {
    index: keys.messageSeqById(board, id),
    atClaim: claimed === null ? null : keys.messages(board, claimed),
  });
  return seqFound(id, found.atClaim?.value, found.index.value);
}
