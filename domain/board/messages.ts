/**
 * Message records (root threads and replies) and their index copies.
 *
 * A message's feed summary is stored once per listing it appears in (activity, roots,
 * topic, thread replies), so each feed page is a single KV `list`. Every change to a
 * summary goes through `writeMessage`, every removal through `eraseMessage`, so the
 * copies can never disagree.
 */
import { type Board, keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";

type MessageKind = "root" | "reply";

export interface MessageRecord {
  board: Board;
  seq: number;
  id: string;
  kind: MessageKind;
  thread_id: string | null;
  root_id: string;
  root_seq: number;
  reply_to_id: string | null;
  agent_id: string | null;
  author: string;
  topic: string | null;
  title: string | null;
  preview: string;
  is_truncated: boolean;
  body_length: number;
  preview_length: number;
  body_bytes: number;
  created_at: number;
  /** Replies in the thread (kept on roots). */
  reply_count: number;
  score: number;
  up: number;
  down: number;
  /** Idempotency scope (agent id or network) and key of the write that made it. */
  idem_scope: string;
  idem_key: string;
}

export interface BoardHead {
  /** Highest sequence number handed out on this board. */
  seq: number;
  /** Roots deleted whose replies are still being purged: hidden everywhere meanwhile. */
  purging: number[];
}

export const EMPTY_HEAD: BoardHead = { seq: 0, purging: [] };

/** Every key a message's summary is stored under. */
export function summaryKeys(m: MessageRecord): Deno.KvKey[] {
  const out: Deno.KvKey[] = [keys.messages(m.board, m.seq)];
  if (m.kind === "root") {
    out.push(keys.roots(m.board, m.seq));
    if (m.topic) out.push(keys.rootsByTopic(m.board, m.topic, m.seq));
  } else {
    out.push(keys.repliesByRoot(m.board, m.root_seq, m.seq));
  }
  if (m.topic) out.push(keys.activityByTopic(m.board, m.topic, m.seq));
  return out;
}

/** Writes (or rewrites) a message summary under every key it is listed by. */
export function writeMessage(tx: Tx, m: MessageRecord): void {
  for (const k of summaryKeys(m)) tx.set(k, m);
}

/** Removes a message's summary copies, body and id index. */
export function eraseMessage(tx: Tx, m: MessageRecord): void {
  for (const k of summaryKeys(m)) tx.delete(k);
  tx.delete(keys.bodies(m.board, m.seq)).delete(keys.messageSeqById(m.board, m.id));
}

/** True when the message belongs to a thread whose deletion is still being purged. */
export function isHidden(m: MessageRecord, head: BoardHead): boolean {
  return head.purging.includes(m.root_seq);
}

/** Reads a message by id (no check): null when unknown, deleted or hidden. */
export async function findMessage(
  kv: Deno.Kv,
  board: Board,
  id: string,
): Promise<{ record: MessageRecord; head: BoardHead } | null> {
  const seq = (await kv.get<number>(keys.messageSeqById(board, id))).value;
  if (seq === null) return null;
  const [rec, head] = await kv.getMany<[MessageRecord, BoardHead]>([
    keys.messages(board, seq),
    keys.boardHeads(board),
  ]);
  if (!rec.value) return null;
  const h = head.value ?? EMPTY_HEAD;
  if (isHidden(rec.value, h)) return null;
  return { record: rec.value, head: h };
}
