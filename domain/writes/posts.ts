/** Writing messages: root threads, replies, and deletion (with crash-safe purge of replies). */
import { type Board, keys } from "../../kv/keys.ts";
import { transact, transactPrepared, type Tx } from "../../kv/tx.ts";
import { unmetered } from "../../kv/meter.ts";
import type { CommitRider } from "../commit_rider.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import { stillActive } from "../accounts/mod.ts";
import {
  fingerprint,
  type IdempotencyRecord,
  idempotencyRecordOf,
  matchIdempotency,
  storedIdempotency,
} from "../idempotency.ts";
import {
  afterMessageStored,
  onMessageRemoved,
  onMessageStored,
  removalReadPlan,
} from "./message_effects.ts";
import {
  admissionKeys,
  admissionPlannedKeys,
  BOARD_WRITES_LOCK,
  chargePublication,
  checkText,
  checkTitle,
  checkTopic,
  claimedSeq,
  EMPTY_HEAD,
  eraseMessage,
  findMessageSeq,
  hiddenMessage,
  isHidden,
  markDeleted,
  messageById,
  messageId,
  messageReadPlan,
  type MessageRecord,
  messageSeqById,
  missingMessage,
  type Publisher,
  releaseRetained,
  storeMessage,
  textSummary,
  threadNotFound,
  threadUrl,
  writeMessage,
} from "../board/mod.ts";
import { agentEventsTail, noteAgentEvent, packIds, primeAgentEvents } from "../agent_events.ts";
import { mentionedNames } from "../mentions.ts";
import { flattenNamed } from "../../kv/read_many.ts";
import type { PendingVoter } from "../votes/mod.ts";
import { type IndexedTerms, retractPostings } from "../search/mod.ts";

/** Author identity of a write: an agent on the named board, anonymous on `b`. */
export interface Author {
  agentId: string | null;
  name: string;
  network: string;
}

/**
 * The author of a named write whose credential is still resolving (`PendingVoter`: the
 * account the credential claims, and the account once admitted) and the network it comes
 * from. The write's read batch is planned for the claimed account and goes out with the
 * credential's; nothing is decided or written before `ready` answered.
 */
export type PendingAuthor = PendingVoter & { network: string };

/**
 * An author, known or pending, as `publish` takes it: the account id its reads are planned
 * for (null: anonymous) and the author once known.
 */
interface AuthorToBe {
  plannedId: string | null;
  ready: Promise<Author>;
}

/**
 * `author` as `publish` takes it. A credential naming no account (an API key of the older
 * format) is waited for first: planning without the account's keys would save no round trip,
 * and the board lock would be held while the credential is looked up.
 */
async function authorToBe(author: Author | PendingAuthor): Promise<AuthorToBe> {
  if (!("ready" in author)) return { plannedId: author.agentId, ready: Promise.resolve(author) };
  const ready = author.ready.then((agent): Author => ({
    agentId: agent.id,
    name: agent.name,
    network: author.network,
  }));
  ready.catch(() => {}); // the refusal is answered by `publish`'s await, or by the credential checks
  return { plannedId: author.claimedId ?? (await ready).agentId, ready };
}

/**
 * The write receipt of a post or reply, the same through every edge: the spec's fields
 * (`id`, `seq`, `thread_id`, `url`) and `replayed: true` on an idempotent replay. When it
 * was stored is what `lookupPublication` adds.
 */
export interface Receipt {
  id: string;
  seq: number;
  thread_id: string | null;
  url: string;
  replayed?: true;
}

function receiptOf(deps: Deps, rec: IdempotencyRecord, replayed: boolean): Receipt {
  return {
    id: rec.id,
    seq: rec.seq,
    thread_id: rec.thread_id,
    url: threadUrl(deps, rec.board, rec.root_id, rec.id),
    ...(replayed ? { replayed: true as const } : {}),
  };
}

interface NewMessage {
  board: Board;
  author: Author | PendingAuthor;
  idempotencyKey: string;
  title: string | null;
  topic: string | null;
  body: string;
  rootId: string | null;
  replyToId: string | null;
}

async function publish(deps: Deps, m: NewMessage): Promise<Receipt> {
  if (m.title !== null) checkTitle(deps.config, m.title);
  if (m.topic !== null) checkTopic(deps.config, m.topic);
  checkText(deps.config, "body", m.body);
  const print = await fingerprint({
    board: m.board,
    title: m.title,
    topic: m.topic,
    body: m.body,
    root: m.rootId,
    reply_to: m.replyToId,
  });
  const network = m.author.network;
  const author = await authorToBe(m.author);
  // The keys read for author `agentId` (null: anonymous). Idempotency scope: the account on
  // the named board, the network on the anonymous one.
  const planOf = (agentId: string | null, now: number) => {
    const scope = agentId ?? `net:${network}`;
    const publisher: Publisher = { board: m.board, agentId, network };
    const idemKey = keys.idempotency(m.board, scope, m.idempotencyKey);
    const plan = {
      idem: idemKey,
      head: keys.boardHeads(m.board),
      ...admissionKeys(publisher, now),
    };
    return { agentId, publisher, idemKey, plan };
  };
  // Replies (their thread's author) and mentions may concern other accounts: the commit then
  // reads where the agent event log ends at the same time as its one batch.
  const names = m.board === "named" ? mentionedNames(m.title, m.body) : [];
  const mayConcern = m.board === "named" && (m.rootId !== null || names.length > 0);
  const claimed = (id: string | null) => (id === null ? [] : messageReadPlan(m.board, id));

  // One planned batch, sent with the credential's own read when the author is pending
  // (planned for the account the credential claims): the entries read with `getNamed` become
  // checks of the commit (with the thread and the message answered, at most 9 of its 10);
  // the admission key read only on a store written before, the thread and the message
  // answered at the seqs their ids claim and the mentioned names are planned too and checked
  // only when used (a mentioned name, once taken, always names the same account). Nothing is
  // decided before the author is known: another account than the claimed one reads its own
  // keys then (one round trip more). The in-process lock covers this batch and the commit.
  const { value } = await transact(deps.kv, async (tx) => {
    // One reading of the clock per attempt: the day charged is the day of `created_at`.
    const nowMs = deps.clock.nowMs();
    const now = Math.floor(nowMs / 1000);
    const guess = planOf(author.plannedId, now);
    const early = tx.prefetch([
      // First, in one read of the store: an account read active here was active when the
      // head was read, and a revocation rewrites the head (domain/writes/revocation.ts).
      keys.boardHeads(m.board),
      ...(guess.agentId === null ? [] : [keys.agents(guess.agentId)]),
      ...flattenNamed(guess.plan),
      ...admissionPlannedKeys(guess.publisher, now),
      ...claimed(m.rootId),
      ...claimed(m.replyToId),
      ...names.map((n) => keys.agentIdByName(n)),
    ]);
    const tailRead = mayConcern ? agentEventsTail(deps.kv) : Promise.resolve(0);
    const rootRead = m.rootId === null ? null : messageById(tx, m.board, m.rootId);
    const targetRead = m.replyToId === null ? null : messageById(tx, m.board, m.replyToId);
    const namedRead = mentionedAccounts(tx, names);
    let writer: Author;
    try {
      // Nothing is decided, and nothing written, before the credential is admitted.
      writer = await author.ready;
    } catch (refusal) {
      // The reads started early end before the refusal is answered.
      await Promise.allSettled([early, tailRead, rootRead, targetRead, namedRead]);
      throw refusal;
    }
    const own = guess.agentId === writer.agentId ? guess : planOf(writer.agentId, now);
    author.plannedId = writer.agentId; // a retry plans for the author it now knows
    const { publisher, idemKey } = own;
    const [read, tail, rootFound, targetFound, named, account] = await Promise.all([
      tx.getNamed(own.plan),
      tailRead,
      rootRead,
      targetRead,
      namedRead,
      // Unchecked (the commit holds its ten checks): a credential admitted before its body
      // arrived is refused if the account was revoked or removed meanwhile. Read with the
      // head, or after it when the author was not the one planned for: a revocation
      // committed after this read rewrites the head and so fails this commit's check.
      writer.agentId === null ? null : early.then(() => tx.peek(keys.agents(writer.agentId!))),
    ]);
    if (account) stillActive(account.value);
    const mentioned = named.filter((id) => id !== writer.agentId);
    const existing = matchIdempotency(
      idempotencyRecordOf(read.idem.value, m.board),
      print,
      m.board,
      deps.config.baseUrl,
    );
    if (existing) return { receipt: receiptOf(deps, existing, true), created: false };
    const head = read.head.value ?? EMPTY_HEAD;
    const root = rootFound;
    if (m.rootId !== null) {
      if (!root || isHidden(root, head)) throw notFound("thread", m.rootId);
      if (root.kind !== "root") throw threadNotFound(m.board, m.rootId, root, true);
    }
    const target = targetFound;
    if (m.replyToId !== null) {
      if (!target || target.root_seq !== root!.seq) {
        // A visible message of another thread: say which, so the caller replies there.
        const elsewhere = target && !isHidden(target, head) ? target.root_id : null;
        throw new BoardError(
          "INVALID_INPUT",
          `Field "reply_to_id" must name a message in this thread; "${m.replyToId}" is not one` +
            (elsewhere ? `: it is in thread "${elsewhere}", reply there to answer it.` : "."),
          { field: "reply_to_id", ...(elsewhere ? { root_id: elsewhere } : {}) },
        );
      }
    }
    await chargePublication(tx, deps, publisher, read, nowMs);

    const seq = head.seq + 1;
    const id = messageId(deps, seq);
    const record: MessageRecord = {
      board: m.board,
      seq,
      id,
      kind: root ? "reply" : "root",
      thread_id: root ? root.id : null,
      root_id: root ? root.id : id,
      root_seq: root ? root.seq : seq,
      reply_to_id: m.replyToId,
      agent_id: writer.agentId,
      author: writer.name,
      topic: root ? root.topic : m.topic,
      title: m.title,
      ...textSummary(m.body),
      created_at: now,
      reply_count: 0,
      score: 0,
      up: 0,
      down: 0,
    };
    const idem: IdempotencyRecord = {
      fingerprint: print,
      board: m.board,
      id,
      seq,
      thread_id: record.thread_id,
      root_id: record.root_id,
      created_at: now,
      deleted_at: null,
    };
    storeMessage(tx, record);
    if (root) writeMessage(tx, { ...root, reply_count: root.reply_count + 1 });
    tx.set(idemKey, storedIdempotency(idem))
      .set(keys.boardHeads(m.board), { ...head, seq });
    onMessageStored(tx, record, m.body);
    if (mayConcern) {
      primeAgentEvents(tx, tail);
      await noteMessageEvent(tx, record, root, target, mentioned);
    }
    return { receipt: receiptOf(deps, idem, false), created: true };
  }, { lock: BOARD_WRITES_LOCK });
  if (value.created) await afterMessageStored(deps, m.board, value.receipt.seq);
  return value.receipt;
}

/**
 * The existing accounts among the names a named message mentions (read unchecked: a name,
 * once taken, always names the same account); the caller leaves its author out.
 */
async function mentionedAccounts(tx: Tx, names: string[]): Promise<string[]> {
  const found = await Promise.all(names.map((n) => tx.peek(keys.agentIdByName(n))));
  return found.flatMap((e) => (e.value ? [e.value] : []));
}

/**
 * Stages the agent event of a new named message that concerns accounts other than its
 * author: the author of the thread it replies in, of the message it answers, and the
 * accounts it mentions. Nothing is staged when it concerns nobody else.
 */
async function noteMessageEvent(
  tx: Tx,
  record: MessageRecord,
  root: MessageRecord | null,
  target: MessageRecord | null,
  mentioned: string[],
): Promise<void> {
  const other = (id: string | null | undefined) => (id && id !== record.agent_id ? id : null);
  const thread = other(root?.agent_id);
  const answers = other(target?.agent_id);
  if (!thread && !answers && mentioned.length === 0) return;
  await noteAgentEvent(tx, record.created_at, {
    type: "message",
    seq: record.seq,
    ...(record.kind === "reply" ? { root: record.root_seq } : {}),
    ...(thread ? { thread } : {}),
    ...(answers ? { answers } : {}),
    ...(mentioned.length ? { mentions: packIds(mentioned) } : {}),
    ...(mentioned.length && record.agent_id ? { by: record.agent_id } : {}),
  });
}

/** The topic of a named-board thread posted without one. */
const DEFAULT_TOPIC = "general";

/**
 * Creates a root thread. Named-board threads have a topic (`DEFAULT_TOPIC` when none is
 * given); anonymous threads have none.
 */
export function createThread(
  deps: Deps,
  board: Board,
  author: Author | PendingAuthor,
  idempotencyKey: string,
  input: { title: string; topic?: string | null; body: string },
): Promise<Receipt> {
  return publish(deps, {
    board,
    author,
    idempotencyKey,
    title: input.title,
    topic: board === "named" ? input.topic ?? DEFAULT_TOPIC : null,
    body: input.body,
    rootId: null,
    replyToId: null,
  });
}

/** Creates a reply attached to a root thread (optionally answering one message of it). */
export function createReply(
  deps: Deps,
  board: Board,
  author: Author | PendingAuthor,
  idempotencyKey: string,
  rootId: string,
  input: { body: string; reply_to_id?: string },
): Promise<Receipt> {
  return publish(deps, {
    board,
    author,
    idempotencyKey,
    title: null,
    topic: null,
    body: input.body,
    rootId,
    replyToId: input.reply_to_id ?? null,
  });
}

/**
 * Looks up the caller's own retained publication by the Idempotency-Key of its write: found
 * while its message stands (a removal erases it in its commit and leaves the idempotency
 * record, so a replay of the write still answers its receipt).
 */
export async function lookupPublication(deps: Deps, board: Board, scope: string, key: string) {
  const stored = (await deps.kv.get(keys.idempotency(board, scope, key))).value;
  const rec = idempotencyRecordOf(stored, board);
  if (!rec || rec.deleted_at !== null) return { found: false as const };
  if ((await findMessageSeq(deps.kv, board, rec.id)) === null) return { found: false as const };
  return {
    found: true as const,
    publication: {
      id: rec.id,
      seq: rec.seq,
      thread_id: rec.thread_id,
      url: threadUrl(deps, board, rec.root_id, rec.id),
      created_at: rec.created_at,
    },
  };
}

/**
 * Work a removal leaves for after its answer, marked in its commit (`purgeReplies` does it;
 * `resumePurges` finishes it after a crash): a removed root's replies, a removed reply's
 * root's reply count, and the removed message's seq in the sealed posting blocks still
 * holding it.
 */
interface PurgeMark {
  /** The removed message's thread (a root's own id). */
  root_id: string;
  started_at: number;
  /**
   * A removed reply: the seq of its root, whose reply count the purge lowers (no replies to
   * purge, no thread hidden by the board head).
   */
  reply_of?: number;
  /** The term list whose sealed posting blocks still hold the removed message's seq. */
  postings?: IndexedTerms;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    purges: PurgeMark;
  }
}

/** A message found hidden by a removal: the refusal is made outside the board lock. */
class HiddenRecord extends Error {
  constructor(readonly rec: MessageRecord) {
    super("hidden");
  }
}

/**
 * Removes a message in one commit. A reply goes at once. A root is hidden at once (its
 * record erased and its seq added to the head's purge list in that commit), and its replies
 * are purged after it (`afterRemoval`); `resumePurges` finishes that after a crash.
 * `actor` null means a moderator (no ownership check).
 *
 * Read plan: one planned batch at the seq the id carries (the message, its body entry with
 * its search terms, the sealed-search marker, the id's deletion mark for a 404, and for an
 * author's own delete the author's karma records; an id made before goes by the id index,
 * one round trip more); only a moderator's removal of a message with a score reads more
 * after it (the author's karma records, which the message names). That is read before the
 * board lock is taken; under the lock only the board head and the retained-posts counter are
 * read, with the first batch when the lock is free, then the one commit. What would need
 * another read round is left: the message's Idempotency-Key record as it is (a lookup finds a publication only while its
 * message's id index stands), and, for the purge after the answer (`PurgeMark`), a reply's
 * root's reply count and the message's seq in the sealed posting blocks (found by listing
 * them); search skips the seq meanwhile, its summary being gone.
 */
export async function removeMessage(
  deps: Deps,
  board: Board,
  id: string,
  actor: { agentId: string } | null,
  /** Work of a higher area in the same commit (the moderator's audit record). */
  rider?: CommitRider,
): Promise<{ id: string; deleted: true; kind: "root" | "reply"; replies_removed: number }> {
  const authorId = actor?.agentId ?? null;
  const answerOf = (rec: MessageRecord) => ({
    id,
    deleted: true as const,
    kind: rec.kind,
    replies_removed: rec.kind === "root" ? rec.reply_count : 0,
  });
  const removal = transactPrepared(
    deps.kv,
    async (tx) => {
      // The first batch at the seq the id carries; an id made before goes by the index. The
      // deletion mark goes with it, for the 404 of an id that is no message (any more).
      const claimed = claimedSeq(id);
      tx.prefetch([
        keys.messageSeqById(board, id),
        keys.deletedMessages(board, id),
        ...(claimed === null ? [] : removalKeys(board, claimed, authorId)),
      ]);
      const seq = await messageSeqById(tx, board, id);
      if (seq === null) throw await missingMessage(tx, board, id, deps.clock.now());
      const staged = await stageRemoval(tx, deps, board, seq, authorId, false, true);
      if (!staged) throw notFound("message", id);
      return staged;
    },
    async (tx, staged) => {
      const [hot, turn] = await Promise.all([
        tx.getNamed({ head: keys.boardHeads(board), retained: keys.counters("posts") }),
        rider?.read(tx),
      ]);
      const { rec, postings } = await staged;
      const head = hot.head.value ?? EMPTY_HEAD;
      // Said once the board lock is let go (`hiddenMessage` reads what the thread left).
      if (isHidden(rec, head)) throw new HiddenRecord(rec);
      if (actor && rec.agent_id !== actor.agentId) {
        throw new BoardError("FORBIDDEN", "Only the author can delete this message.", { id });
      }
      await releaseRetained(tx, 1);
      if (rec.kind === "root") {
        tx.set(keys.boardHeads(board), { ...head, purging: [...head.purging, rec.seq] });
      }
      tx.set(keys.purges(board, rec.seq), {
        root_id: rec.root_id,
        started_at: deps.clock.now(),
        ...(rec.kind === "reply" ? { reply_of: rec.root_seq } : {}),
        ...(postings ? { postings } : {}),
      });
      turn?.finish(tx, answerOf(rec));
      return rec;
    },
    { lock: BOARD_WRITES_LOCK },
  );
  const removed = await removal.then(({ value }) => value, async (e) => {
    throw e instanceof HiddenRecord ? await hiddenMessage(deps.kv, e.rec, deps.clock.now()) : e;
  });
  await afterRemoval(deps, board, removed.seq);
  return answerOf(removed);
}

/**
 * Reads what removing message `seq` needs (the read plan of `removeMessage`) and stages
 * every write but the board head's and the retained counter's (the caller checks that the
 * message is not hidden and may be removed before it commits): the message erased and
 * remembered as deleted (`withThread`: with its deleted thread), its search term list and
 * postings retracted, its karma taken back, its root's reply count lowered; with `later` (a
 * removal answered before its purge) the postings and the root's count are left to the purge.
 * Answers the message removed with the term list whose sealed blocks still hold it (`later`
 * only), or null when it is not there. `authorId`, when known before the message is read,
 * has the author's karma records read in the first batch.
 */
async function stageRemoval(
  tx: Tx,
  deps: Deps,
  board: Board,
  seq: number,
  authorId: string | null,
  withThread: boolean,
  later = false,
): Promise<{ rec: MessageRecord; postings: IndexedTerms | null } | null> {
  const now = deps.clock.now();
  tx.prefetch(removalKeys(board, seq, authorId));
  const rec = (await tx.get(keys.messages(board, seq))).value;
  if (!rec) return null;
  const root = rec.kind === "reply" && !later ? keys.messages(board, rec.root_seq) : null;
  // The keys that depend on the message, in one batch: its root, and the author's karma
  // records when the removal takes karma back and they were not read in the first batch.
  const karma = rec.agent_id === authorId || rec.score === 0
    ? []
    : removalReadPlan(board, seq, rec.agent_id);
  tx.prefetch([...(root ? [root] : []), ...karma]);
  eraseMessage(tx, rec);
  markDeleted(tx, rec, now, withThread);
  const postings = await onMessageRemoved(tx, deps, rec, later);
  if (root) {
    // Gone when the whole thread is being removed (a purge): nothing to count down then.
    const rootRec = (await tx.get(root)).value;
    if (rootRec) {
      writeMessage(tx, { ...rootRec, reply_count: Math.max(0, rootRec.reply_count - 1) });
    }
  }
  return { rec, postings };
}

/** The first batch of a removal of message `seq` (`stageRemoval`). */
function removalKeys(board: Board, seq: number, authorId: string | null): Deno.KvKey[] {
  return [keys.messages(board, seq), ...removalReadPlan(board, seq, authorId)];
}

/**
 * After the commit that removed message `seq` and marked its purge (`PurgeMark`): the purge runs
 * (`purgeReplies`), apart from the request (its KV calls are not the request's, kv/meter.ts).
 * In production the answer does not wait for it (`backgroundPurges`); a purge cut short (a
 * crash, an isolate stopped) is finished by `resumePurges` at start and by the tidy-up cron,
 * and the thread stays hidden everywhere meanwhile. Tests wait for it.
 */
async function afterRemoval(deps: Deps, board: Board, seq: number): Promise<void> {
  const purging = unmetered(() => purgeReplies(deps, board, seq)).catch((err) => {
    console.error("purging a removed message failed; it resumes later", err);
  });
  if (!deps.config.backgroundPurges) await purging;
}

/**
 * Does the work removing message `rootSeq` marked (`PurgeMark`): every reply of a deleted
 * root, one commit per reply, then, in one commit, the removed message's seq out of the
 * sealed posting blocks still holding it, a removed reply's root's reply count lowered, and
 * the mark cleared (a root's seq off the board head's purge list). Each step is a checked
 * commit, so an instance finishing the same purge at the same time changes nothing twice.
 * Answers how many replies it removed.
 */
export async function purgeReplies(deps: Deps, board: Board, rootSeq: number): Promise<number> {
  const mark = (await deps.kv.get(keys.purges(board, rootSeq))).value;
  let removed = 0;
  while (mark?.reply_of === undefined) {
    const batch: Deno.KvKey[] = [];
    const prefix = keys.repliesByRoot.range(board, rootSeq);
    for await (const e of deps.kv.list({ prefix }, { limit: 50 })) batch.push(e.key);
    if (batch.length === 0) break;
    for (const pointer of batch) {
      const seq = pointer[pointer.length - 1] as number;
      // The reply's reads and writes are planned as a removal's; the board lock covers only
      // the retained counter's read and the commit.
      await transactPrepared(
        deps.kv,
        (tx) => stageRemoval(tx, deps, board, seq, null, true),
        async (tx, staged) => {
          await tx.prefetch([keys.counters("posts")]);
          const reply = await staged;
          if (!reply) {
            // Summary already gone (removed meanwhile): drop the leftover listing entry.
            tx.delete(pointer);
            return;
          }
          await releaseRetained(tx, 1);
        },
        { lock: BOARD_WRITES_LOCK },
      );
      removed++;
    }
  }
  const replyOf = mark?.reply_of;
  await transact(deps.kv, async (tx) => {
    const read = await tx.getNamed({
      mark: keys.purges(board, rootSeq),
      head: replyOf === undefined ? keys.boardHeads(board) : null,
      root: replyOf === undefined ? null : keys.messages(board, replyOf),
    });
    const now = read.mark.value;
    if (mark && !now) return; // finished meanwhile, by another instance
    if (now?.postings) await retractPostings(tx, rootSeq, now.postings);
    if (read.head) {
      const head = read.head.value ?? EMPTY_HEAD;
      const purging = head.purging.filter((s) => s !== rootSeq);
      tx.set(keys.boardHeads(board), { ...head, purging });
    }
    // Gone when its thread was removed meanwhile: nothing to count down then.
    const root = read.root?.value;
    if (root) writeMessage(tx, { ...root, reply_count: Math.max(0, root.reply_count - 1) });
    tx.delete(keys.purges(board, rootSeq));
  }, { lock: BOARD_WRITES_LOCK });
  return removed;
}

/** Finishes every purge a crash left unfinished. Run at start. */
export async function resumePurges(deps: Deps): Promise<number> {
  let n = 0;
  for await (const e of deps.kv.list({ prefix: keys.purges.range() })) {
    const [, board, rootSeq] = e.key as [string, Board, number];
    await purgeReplies(deps, board, rootSeq);
    n++;
  }
  return n;
}
