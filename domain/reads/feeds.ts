/**
 * Reading the board: root-thread feed, activity feed, thread and message reads.
 *
 * Each read is planned in two batches of KV calls: first what needs neither the caller nor
 * another read's answer (the board head, the listing page, a message's seq by its id), then
 * everything those name, for the caller at once (summaries, bodies, the caller's votes on
 * those seqs with their standing and allowance). docs/read_plans.md.
 */
import { type Board, keys } from "../../kv/keys.ts";
import { readMany } from "../../kv/read_many.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { notFound } from "../errors.ts";
import {
  boardBase,
  type BoardHead,
  bodyText,
  claimedSeq,
  EMPTY_HEAD,
  isHidden,
  messageActionTemplates,
  type MessageRecord,
  noteAuthors,
  readMessageAt,
  seqFound,
  TEXT_IN_PREVIEW,
  threadNotFound,
} from "../board/mod.ts";
import {
  listPage,
  listSeqPage,
  listSeqValuePage,
  type Page,
  type PageParams,
  pageShowing,
  refuseAfterBeyond,
} from "../paging.ts";
import { rulesThreadEdit } from "../rules/mod.ts";
import { type MessageItem, messageItem } from "./message_items.ts";
import { readViewerVotes, type ViewerVoteReads, voteViews } from "../votes/mod.ts";

/**
 * The caller of a read, or a promise of it while the credential is being resolved: a read
 * issues what needs no caller first and awaits it only for what does.
 */
export type ViewerSource = Agent | null | Promise<Agent | null>;

export interface FeedQuery extends PageParams {
  topic?: string;
}

async function readHead(kv: Deno.Kv, board: Board): Promise<BoardHead> {
  return (await kv.get(keys.boardHeads(board))).value ?? EMPTY_HEAD;
}

/**
 * The caller's vote reads on messages known by seq (null for no caller): started beside
 * the read of their summaries, so both take one round trip.
 */
export function votesOn(
  deps: Deps,
  viewer: Agent | null,
  board: Board,
  seqs: number[],
): Promise<ViewerVoteReads | null> {
  if (!viewer) return Promise.resolve(null);
  return readViewerVotes(deps, viewer.id, seqs.map((seq) => ({ board, seq })));
}

/**
 * Turns records into feed items for a viewer: the vote state (from `votes` when read
 * already, which must cover every record) and, for replies, their thread's reply count,
 * read in one round trip with the votes (`replyCounts`: counts of roots read already).
 */
export async function toItems(
  deps: Deps,
  viewer: Agent | null,
  records: MessageRecord[],
  votes?: ViewerVoteReads | null,
  replyCounts: ReadonlyMap<number, number> = new Map(),
): Promise<MessageItem[]> {
  noteAuthors(deps.kv, records); // what a vote on one of them plans its reads with
  // Replies show their thread's reply count: read the distinct roots not already on the page.
  const counts = new Map<number, number>(replyCounts);
  for (const r of records) if (r.kind === "root") counts.set(r.seq, r.reply_count);
  const missing = [
    ...new Set(records.filter((r) => !counts.has(r.root_seq)).map((r) => r.root_seq)),
  ];
  const board = records[0]?.board ?? "named";
  const [reads, roots] = await Promise.all([
    votes !== undefined || !viewer ? votes ?? null : readViewerVotes(deps, viewer.id, records),
    missing.length
      ? readMany(deps.kv, missing.map((s) => keys.messages(board, s)))
      : Promise.resolve([]),
  ]);
  roots.forEach((e, j) => counts.set(missing[j], e.value?.reply_count ?? 0));
  const views = voteViews(viewer?.id ?? null, reads, records);
  return records.map((r) => messageItem(r, viewer, views.get(r.id)!, counts.get(r.root_seq) ?? 0));
}

/** A page of root threads, newest first (optionally one topic). */
export async function listThreads(
  deps: Deps,
  board: Board,
  viewer: ViewerSource,
  q: FeedQuery,
): Promise<Page<MessageItem>> {
  const prefix = q.topic ? keys.rootsByTopic.range(board, q.topic) : keys.roots.range(board);
  return await feedPage(deps, board, viewer, prefix, q);
}

/** A page of threads and replies, newest first (optionally one topic). */
export async function listActivity(
  deps: Deps,
  board: Board,
  viewer: ViewerSource,
  q: FeedQuery,
): Promise<Page<MessageItem>> {
  // The board's activity is the summaries' own listing; a topic's points at them.
  const prefix = q.topic ? keys.activityByTopic.range(board, q.topic) : null;
  return await feedPage(deps, board, viewer, prefix, q);
}

/**
 * `refuseAfterBeyond` for a page of `board`'s messages (a feed, a thread's replies, search)
 * read with its head.
 */
export function checkAfter(board: Board, q: PageParams, head: BoardHead): void {
  refuseAfterBeyond(q.after, head.seq, "after", "the newest message of this board", { board });
}

/**
 * A feed page in two batches: the head with the listing page (the summaries themselves for
 * the board's activity, pointers otherwise), then the summaries the pointers name together
 * with the caller's votes on their seqs (and replies' thread counts).
 */
async function feedPage(
  deps: Deps,
  board: Board,
  viewerSource: ViewerSource,
  prefix: Deno.KvKey | null,
  q: PageParams,
): Promise<Page<MessageItem>> {
  if (prefix === null) {
    const [head, page] = await Promise.all([
      readHead(deps.kv, board),
      listPage(deps.kv, keys.messages.range(board), q),
    ]);
    checkAfter(board, q, head);
    const viewer = await viewerSource;
    const visible = page.items.filter((m) => !isHidden(m, head));
    return pageShowing(page, visible.length ? await toItems(deps, viewer, visible) : []);
  }
  const [head, seqs] = await Promise.all([
    readHead(deps.kv, board),
    listSeqPage(deps.kv, prefix, q),
  ]);
  checkAfter(board, q, head);
  const viewer = await viewerSource;
  const [found, votes] = await Promise.all([
    readMany(deps.kv, seqs.items.map((s) => keys.messages(board, s))),
    votesOn(deps, viewer, board, seqs.items),
  ]);
  // A summary gone meanwhile (a removal between the two reads) is left out.
  const visible = found.flatMap((e) => (e.value && !isHidden(e.value, head) ? [e.value] : []));
  return pageShowing(seqs, visible.length ? await toItems(deps, viewer, visible, votes) : []);
}

/**
 * A thread: the root post with its full body, and a page of replies. Two batches: the
 * root's seq by its id with the page of replies listed by that id, then the root with its
 * body, the replies' summaries and bodies, and the caller's votes on all of them.
 */
export async function readThread(
  deps: Deps,
  board: Board,
  rootId: string,
  viewerSource: ViewerSource,
  q: PageParams,
) {
  // The rules thread offers `edit_current_rules` to viewers who may edit (domain/rules/edits.ts).
  const [thread, rulesEdit] = await Promise.all([
    threadRecords(deps, board, rootId, viewerSource, q),
    board === "named"
      ? (async () => rulesThreadEdit(deps, rootId, await viewerSource))()
      : Promise.resolve(null),
  ]);
  const { root, body, replies, bodies, votes, viewer } = thread;
  const [rootItem, ...replyItems] = await toItems(deps, viewer, [root, ...replies.items], votes);
  return {
    post: {
      ...rootItem,
      ...(rulesEdit ? { actions: [...rootItem.actions, rulesEdit.action] } : {}),
      body,
    },
    replies: {
      ...replies,
      items: replyItems.map((item) => ({ ...item, body: bodies.get(item.seq) ?? "" })),
    },
    content_is_untrusted: true as const,
    action_templates: { ...messageActionTemplates(board), ...rulesEdit?.templates },
  };
}

/**
 * What a thread read shows, read in two batches (see `readThread`); 404 when not a live
 * root. A root stored before its replies were listed by its id (no `replies_by_id`) takes
 * two more: its replies by its seq, then their summaries.
 */
async function threadRecords(
  deps: Deps,
  board: Board,
  rootId: string,
  viewerSource: ViewerSource,
  q: PageParams,
) {
  // The root at the seq its id carries (`claimedSeq`), with the id index, which decides only
  // when the claim is not the root's (an id made before: its record is read next).
  const claimed = claimedSeq(rootId);
  const [seqEntry, atClaim, byIdEntries] = await Promise.all([
    deps.kv.get(keys.messageSeqById(board, rootId)),
    claimed === null ? null : readMessageAt(deps.kv, board, claimed, true),
    listSeqValuePage(deps.kv, keys.repliesByRootId.range(board, rootId), q),
  ]);
  const seq = seqFound(rootId, atClaim?.record, seqEntry.value);
  if (seq === null) throw threadNotFound(board, rootId, null);
  const byId = { ...byIdEntries, items: byIdEntries.items.map((e) => e.seq) };
  const viewer = await viewerSource;
  // A reply whose whole text is its preview is marked so in the listing: no body to read.
  const inPreview = new Set(
    byIdEntries.items.flatMap((e) => e.value === TEXT_IN_PREVIEW ? [e.seq] : []),
  );
  const repliesAt = (listed: Page<number>, bodiless: ReadonlySet<number>) => {
    const withBody = listed.items.filter((s) => !bodiless.has(s));
    return Promise.all([
      readMany(deps.kv, listed.items.map((s) => keys.messages(board, s))),
      readMany(deps.kv, withBody.map((s) => keys.bodies(board, s))).then((entries) =>
        new Map(withBody.map((s, j) => [s, entries[j].value]))
      ),
      votesOn(deps, viewer, board, [seq, ...listed.items]),
    ]);
  };
  const [found, first] = await Promise.all([
    seq === claimed ? atClaim : readMessageAt(deps.kv, board, seq, true),
    repliesAt(byId, inPreview),
  ]);
  if (!found || found.record.kind !== "root") {
    throw threadNotFound(board, rootId, found?.record ?? null);
  }
  checkAfter(board, q, found.head);
  let listed = byId;
  let [summaries, stored, votes] = first;
  if (!found.record.replies_by_id) {
    listed = await listSeqPage(deps.kv, keys.repliesByRoot.range(board, seq), q);
    [summaries, stored, votes] = await repliesAt(listed, new Set());
  }
  // A summary gone meanwhile (a removal between the reads) is left out.
  const items = summaries.flatMap((e) => (e.value ? [e.value] : []));
  const bodies = new Map<number, string>();
  for (const m of items) {
    bodies.set(m.seq, stored.has(m.seq) ? bodyText(m, stored.get(m.seq)) : m.preview);
  }
  return {
    root: found.record,
    body: found.body,
    replies: pageShowing(listed, items),
    bodies,
    votes,
    viewer,
  };
}

/**
 * One exact message — a root or a reply — with its full body, and its `place`: the thread
 * it belongs to and the thread page that starts at it. An id made by this board names its
 * seq (`claimedSeq`): the message with its body is read with the id index, then the
 * caller's vote on it with, for a reply, its thread's reply count (the index decides, at one
 * more read, only when the claim is wrong).
 */
export async function readMessage(
  deps: Deps,
  board: Board,
  id: string,
  viewerSource: ViewerSource,
) {
  const claimed = claimedSeq(id);
  const [seqEntry, guess] = await Promise.all([
    deps.kv.get(keys.messageSeqById(board, id)),
    claimed === null ? null : readMessageAt(deps.kv, board, claimed, true),
  ]);
  const seq = seqFound(id, guess?.record, seqEntry.value);
  if (seq === null) throw notFound("message", id);
  const found = seq === claimed ? guess : await readMessageAt(deps.kv, board, seq, true);
  const viewer = await viewerSource;
  if (!found) throw notFound("message", id);
  const m = found.record;
  // The caller's vote on it and, for a reply, its thread's reply count: one batch.
  const [item] = await toItems(deps, viewer, [m]);
  const thread = `${boardBase(board)}/posts/${m.root_id}`;
  return {
    post: { ...item, body: found.body },
    place: {
      kind: m.kind,
      root_id: m.root_id,
      root_seq: m.root_seq,
      reply_to_id: m.reply_to_id,
      thread_path: thread,
      // Replies are listed newest first: `before=seq+1` opens the page that starts here.
      page_path: m.kind === "reply" ? `${thread}?before=${m.seq + 1}` : thread,
    },
    content_is_untrusted: true as const,
    action_templates: messageActionTemplates(board),
  };
}
