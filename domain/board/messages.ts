/**
 * Message records (root threads and replies) and the listings that point at them.
 *
 * A message's feed summary is stored once, under `["messages", board, seq]` (which is also
 * the board's activity listing). The other listings it appears in (roots, a topic's roots
 * and activity, a thread's replies) hold a pointer: the seq in the key, a one-byte value.
 * A new message goes in through `storeMessage`, a changed summary through `writeMessage`
 * (the pointers never change), a removal through `eraseMessage`.
 */
import { type Board, keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import { readNamed } from "../../kv/read_many.ts";
import { claimedSeq } from "./message_ids.ts";
import { noteAuthors } from "./author_hints.ts";
import { previewOf, utf8Length } from "../text.ts";
import { BoardError, notFound } from "../errors.ts";

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
  /**
   * On roots stored since the listing by root id exists: every reply of the thread is also
   * listed under `replies_by_root_id` (older roots are read through `replies_by_root` only).
   */
  replies_by_id?: true;
  score: number;
  up: number;
  down: number;
}

export interface BoardHead {
  /** Highest sequence number handed out on this board. */
  seq: number;
  /** Roots deleted whose replies are still being purged: hidden everywhere meanwhile. */
  purging: number[];
}

export const EMPTY_HEAD: BoardHead = { seq: 0, purging: [] };

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    messages: MessageRecord;
    boardHeads: BoardHead;
    /** A body entry: `StoredBody`, or the whole text as a string in a store written before. */
    bodies: StoredBody | string;
    /** A listing entry: the seq is in the key; the value says whether a body must be read. */
    repliesByRootId: typeof POINTER | typeof TEXT_IN_PREVIEW;
    /**
     * The other listings' entries: `POINTER`, or the whole summary in a store written before
     * (only their keys are read).
     */
    roots: typeof POINTER | MessageRecord;
    rootsByTopic: typeof POINTER | MessageRecord;
    activityByTopic: typeof POINTER | MessageRecord;
    repliesByRoot: typeof POINTER | MessageRecord;
    deletedMessages: DeletedMark;
  }
}

/**
 * A message's body entry (`["bodies", board, seq]`): the text after the summary's preview
 * (the preview is not stored twice) and, on the named board, what search indexes the message
 * under (domain/search/postings.ts), so one entry holds both. A store written before holds
 * the whole text as a string there (and the terms under `search_terms_by_message`).
 */
export interface StoredBody {
  rest: string;
  /** The terms joined by spaces (a term never holds one); an array in a store written before. */
  terms?: string | string[];
  topic?: string | null;
}

/**
 * What a summary says about its message's text: the preview and the lengths. The body entry
 * holds the rest of the text after this preview (`bodyRest`).
 */
export function textSummary(text: string) {
  return { ...previewOf(text), body_bytes: utf8Length(text) };
}

/** The part of `body` after the summary's preview (a prefix of it). */
export function bodyRest(m: MessageRecord, body: string): string {
  return body.slice(m.preview.length);
}

/** A message's full text from its summary and its body entry as stored (either shape). */
export function bodyText(m: MessageRecord, stored: StoredBody | string | null | undefined): string {
  if (typeof stored === "string") return stored;
  if (stored === null || typeof stored !== "object") return "";
  return m.preview + stored.rest;
}

/** The value of a listing entry: the seq is in its key, the summary under `messages`. */
export const POINTER = 0;

/**
 * The value of a reply's entry in its thread's listing by root id when its whole text is
 * its summary's preview: a thread read needs no body entry for it. A reply's text never
 * changes, so the mark stays true; an entry of a store written before is `POINTER`.
 */
export const TEXT_IN_PREVIEW = 1;

/** The listing keys that point at a message's summary (not the summary's own key). */
export function pointerKeys(m: MessageRecord): Deno.KvKey[] {
  const out: Deno.KvKey[] = [];
  if (m.kind === "root") {
    out.push(keys.roots(m.board, m.seq));
    if (m.topic) out.push(keys.rootsByTopic(m.board, m.topic, m.seq));
  } else {
    out.push(keys.repliesByRoot(m.board, m.root_seq, m.seq));
    out.push(keys.repliesByRootId(m.board, m.root_id, m.seq));
  }
  if (m.topic) out.push(keys.activityByTopic(m.board, m.topic, m.seq));
  return out;
}

/**
 * Stores a new message's summary and the listing entries that point at it. A new root is
 * marked `replies_by_id`: its replies will all be listed by its id too. The id index
 * (`message_seq_by_id`) is written only for an id that does not carry its seq
 * (message_ids.ts): a lookup by id reads the summary at the seq the id carries.
 */
export function storeMessage(tx: Tx, m: MessageRecord): void {
  writeMessage(tx, m.kind === "root" ? { ...m, replies_by_id: true } : m);
  if (claimedSeq(m.id) !== m.seq) tx.set(keys.messageSeqById(m.board, m.id), m.seq);
  for (const k of pointerKeys(m)) tx.set(k, POINTER);
  // A reply whose text is all in its preview says so in its thread's listing (replacing the
  // pointer just staged): a thread read then reads no body entry for it.
  if (m.kind === "reply" && !m.is_truncated) {
    tx.set(keys.repliesByRootId(m.board, m.root_id, m.seq), TEXT_IN_PREVIEW);
  }
}

/** Rewrites a message's summary (its one copy; the listings point at it). */
export function writeMessage(tx: Tx, m: MessageRecord): void {
  tx.set(keys.messages(m.board, m.seq), m);
  noteAuthors(tx.kv, [m]);
}

/**
 * Writes the board head again as it stands, in the caller's commit (one check): every
 * publication whose batch read the head before that commit fails its check and reads again.
 * An account's revocation does this, so that a post whose batch found the account still active
 * cannot commit after it (domain/writes/posts.ts reads the account in the head's batch).
 */
export async function restampHead(tx: Tx, board: Board): Promise<void> {
  const staged = tx.own(keys.boardHeads(board));
  if (staged) return;
  tx.set(keys.boardHeads(board), (await tx.get(keys.boardHeads(board))).value ?? EMPTY_HEAD);
}

/** Removes a message's summary, listing entries, body and id index (when it has one). */
export function eraseMessage(tx: Tx, m: MessageRecord): void {
  for (const k of [keys.messages(m.board, m.seq), ...pointerKeys(m)]) tx.delete(k);
  tx.delete(keys.bodies(m.board, m.seq)).delete(keys.messageSeqById(m.board, m.id));
}

/** How long a deleted message's id is remembered (a repeated DELETE says "already deleted"). */
const DELETED_ID_DAYS = 30;

/** What is remembered of a deleted message. */
export interface DeletedMark {
  deleted_at: number;
  kind: MessageKind;
  /** Removed with its deleted root thread, not on its own. */
  with_thread: boolean;
  expires_at: number;
}

/** Remembers, in the commit that erases `m`, that it was deleted (for `DELETED_ID_DAYS`). */
export function markDeleted(tx: Tx, m: MessageRecord, now: number, withThread: boolean): void {
  const ttl = DELETED_ID_DAYS * 86400;
  const mark: DeletedMark = {
    deleted_at: now,
    kind: m.kind,
    with_thread: withThread,
    expires_at: now + ttl,
  };
  tx.set(keys.deletedMessages(m.board, m.id), mark, { expireIn: ttl * 1000 });
}

/**
 * The 404 for a message `id` that is not there: "already deleted" while that is remembered.
 * Read through `tx`, so a caller that planned `keys.deletedMessages(board, id)` in its first
 * batch pays no round trip for it.
 */
export async function missingMessage(tx: Tx, board: Board, id: string, now: number) {
  const mark = (await tx.peek(keys.deletedMessages(board, id))).value;
  return deletedMessage(id, mark, now) ?? notFound("message", id);
}

/**
 * The 404 of a message `id` deleted while that is remembered (`mark`, as read from
 * `keys.deletedMessages`), saying so (`details.deleted: true`); null when it is not.
 */
export function deletedMessage(id: string, mark: DeletedMark | null, now: number) {
  return mark && mark.expires_at > now ? alreadyDeleted(id, mark) : null;
}

/**
 * The 404 for message `m`, still stored but hidden: its thread was deleted and its removal is
 * still being purged. It answers as `missingMessage` will once the purge has removed it: deleted
 * with its thread, when the thread was.
 */
export async function hiddenMessage(kv: Deno.Kv, m: MessageRecord, now: number) {
  const mark = (await kv.get(keys.deletedMessages(m.board, m.root_id))).value;
  if (!mark || mark.expires_at <= now) return notFound("message", m.id);
  return alreadyDeleted(m.id, { ...mark, kind: m.kind, with_thread: m.kind === "reply" });
}

function alreadyDeleted(id: string, mark: DeletedMark): BoardError {
  return new BoardError(
    "NOT_FOUND",
    `Message "${id}" was already deleted${mark.with_thread ? " with its thread" : ""}.`,
    {
      target: "message",
      id,
      deleted: true,
      deleted_at: mark.deleted_at,
      kind: mark.kind,
      with_thread: mark.with_thread,
    },
  );
}

/** Where a board's messages are read: `/v1/posts` or `/b/posts` (and `…/messages`). */
export function boardBase(board: Board): "/v1" | "/b" {
  return board === "named" ? "/v1" : "/b";
}

/**
 * The 404 for a thread id that is missing — or that is a reply's, in which case it names
 * the root thread to use instead and where to read the reply alone.
 */
export function threadNotFound(
  board: Board,
  id: string,
  found: MessageRecord | null,
  /** Said to a reply sent to the reply's id: how to answer that reply instead. */
  replying = false,
) {
  if (!found || found.kind !== "reply") return notFound("thread", id);
  const base = boardBase(board);
  const replyPath = `${base}/posts/${found.root_id}/replies`;
  const next = replying
    ? `To answer this reply, POST ${replyPath} with "reply_to_id": "${id}".`
    : `Read the reply alone with GET ${base}/messages/${id}.`;
  return new BoardError(
    "NOT_FOUND",
    `No thread was found with id "${id}": it is a reply; its thread is "${found.root_id}" (${base}/posts/${found.root_id}). ${next}`,
    {
      target: "thread",
      id,
      kind: "reply",
      root_id: found.root_id,
      thread_path: `${base}/posts/${found.root_id}`,
      message_path: `${base}/messages/${id}`,
      ...(replying ? { reply_path: replyPath, reply_to_id: id } : {}),
    },
  );
}

/** True when the message belongs to a thread whose deletion is still being purged. */
export function isHidden(m: MessageRecord, head: BoardHead): boolean {
  return head.purging.includes(m.root_seq);
}

/**
 * Reads a message by id (no check): null when unknown, deleted or hidden. With `withBody`,
 * its full text comes from the same read (`body`; "" without it).
 */
export async function findMessage(
  kv: Deno.Kv,
  board: Board,
  id: string,
  withBody = false,
): Promise<{ record: MessageRecord; head: BoardHead; body: string } | null> {
  // An id made by this board names its sequence (`claimedSeq`): the record is read with the
  // id index and the head, and the index decides only when the claim is not the message's.
  const at = (seq: number | null) => ({
    record: seq === null ? null : keys.messages(board, seq),
    body: seq === null || !withBody ? null : keys.bodies(board, seq),
  });
  const first = await readNamed(kv, {
    seq: keys.messageSeqById(board, id),
    head: keys.boardHeads(board),
    ...at(claimedSeq(id)),
  });
  let { record: rec, body: stored } = first;
  if (rec?.value?.id !== id) {
    if (first.seq.value === null) return null;
    ({ record: rec, body: stored } = await readNamed(kv, at(first.seq.value)));
  }
  const record = rec?.value;
  if (!record) return null;
  const h = first.head.value ?? EMPTY_HEAD;
  if (isHidden(record, h)) return null;
  return { record, head: h, body: stored ? bodyText(record, stored.value) : "" };
}

/**
 * Reads the message at `seq` with the board's head (and its body with `withBody`) in one
 * `getMany`: null when absent or hidden. For read plans that know the seq already.
 */
export async function readMessageAt(
  kv: Deno.Kv,
  board: Board,
  seq: number,
  withBody = false,
): Promise<{ record: MessageRecord; head: BoardHead; body: string } | null> {
  const got = await readNamed(kv, {
    record: keys.messages(board, seq),
    head: keys.boardHeads(board),
    body: withBody ? keys.bodies(board, seq) : null,
  });
  const record = got.record.value;
  if (!record) return null;
  const h = got.head.value ?? EMPTY_HEAD;
  if (isHidden(record, h)) return null;
  return { record, head: h, body: got.body ? bodyText(record, got.body.value) : "" };
}
