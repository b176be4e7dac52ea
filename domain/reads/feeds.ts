/** Reading the board: root-thread feed, activity feed and thread reads. */
import { type Board, keys } from "../../kv/keys.ts";
import { readMany } from "../../kv/read_many.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { notFound } from "../errors.ts";
import {
  boardBase,
  type BoardHead,
  bodyText,
  EMPTY_HEAD,
  findMessage,
  isHidden,
  listSummaries,
  messageActionTemplates,
  type MessageRecord,
  threadNotFound,
} from "../board/mod.ts";
import { listPage, type Page, type PageParams } from "../paging.ts";
import { rulesThreadEdit } from "../rules/mod.ts";
import { type MessageItem, messageItem } from "./message_items.ts";
import { viewerVotes } from "../votes/mod.ts";

export interface FeedQuery extends PageParams {
  topic?: string;
}

async function readHead(kv: Deno.Kv, board: Board): Promise<BoardHead> {
  return (await kv.get(keys.boardHeads(board))).value ?? EMPTY_HEAD;
}

/** Turns records into feed items for a viewer (batched vote state, thread reply counts). */
export async function toItems(
  deps: Deps,
  viewer: Agent | null,
  records: MessageRecord[],
): Promise<MessageItem[]> {
  // Replies show their thread's reply count: read the distinct roots not already on the page,
  // at the same time as the viewer's votes.
  const counts = new Map<number, number>();
  for (const r of records) if (r.kind === "root") counts.set(r.seq, r.reply_count);
  const missing = [
    ...new Set(records.filter((r) => !counts.has(r.root_seq)).map((r) => r.root_seq)),
  ];
  const board = records[0]?.board;
  const [votes, roots] = await Promise.all([
    viewerVotes(deps, viewer, records),
    missing.length ? readMany(deps.kv, missing.map((s) => keys.messages(board, s))) : [],
  ]);
  roots.forEach((e, j) => counts.set(missing[j], e.value?.reply_count ?? 0));
  return records.map((r) => messageItem(r, viewer, votes.get(r.id)!, counts.get(r.root_seq) ?? 0));
}

/** A page of root threads, newest first (optionally one topic). */
export async function listThreads(
  deps: Deps,
  board: Board,
  viewer: Agent | null,
  q: FeedQuery,
): Promise<Page<MessageItem>> {
  const prefix = q.topic ? keys.rootsByTopic.range(board, q.topic) : keys.roots.range(board);
  return await feedPage(deps, board, viewer, prefix, q);
}

/** A page of threads and replies, newest first (optionally one topic). */
export async function listActivity(
  deps: Deps,
  board: Board,
  viewer: Agent | null,
  q: FeedQuery,
): Promise<Page<MessageItem>> {
  // The board's activity is the summaries' own listing; a topic's points at them.
  const prefix = q.topic ? keys.activityByTopic.range(board, q.topic) : null;
  return await feedPage(deps, board, viewer, prefix, q);
}

async function feedPage(
  deps: Deps,
  board: Board,
  viewer: Agent | null,
  prefix: Deno.KvKey | null,
  q: PageParams,
): Promise<Page<MessageItem>> {
  const [head, page] = await Promise.all([
    readHead(deps.kv, board),
    prefix === null
      ? listPage<MessageRecord>(deps.kv, keys.messages.range(board), q)
      : listSummaries(deps.kv, board, prefix, q),
  ]);
  const visible = page.items.filter((m) => !isHidden(m, head));
  return { ...page, items: visible.length ? await toItems(deps, viewer, visible) : [] };
}

/** A thread: the root post with its full body, and a page of replies. */
export async function readThread(
  deps: Deps,
  board: Board,
  rootId: string,
  viewer: Agent | null,
  q: PageParams,
) {
  const found = await findMessage(deps.kv, board, rootId, true);
  if (!found || found.record.kind !== "root") {
    throw threadNotFound(board, rootId, found?.record ?? null);
  }
  const root = found.record;
  const prefix = keys.repliesByRoot.range(board, root.seq);
  const replies = await listSummaries(deps.kv, board, prefix, q);
  const [rootItem, ...replyItems] = await toItems(deps, viewer, [root, ...replies.items]);
  // Full reply bodies, batched.
  const bodies = new Map<number, string>();
  const got = await readMany(deps.kv, replies.items.map((r) => keys.bodies(board, r.seq)));
  got.forEach((e, j) => bodies.set(replies.items[j].seq, bodyText(replies.items[j], e.value)));
  // The rules thread offers `edit_current_rules` to viewers who may edit (domain/rules/edits.ts).
  const rulesEdit = board === "named" && root.agent_id === null
    ? await rulesThreadEdit(deps, root.id, viewer)
    : null;
  return {
    post: {
      ...rootItem,
      ...(rulesEdit ? { actions: [...rootItem.actions, rulesEdit.action] } : {}),
      body: found.body,
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
 * One exact message — a root or a reply — with its full body, and its `place`: the thread
 * it belongs to and the thread page that starts at it.
 */
export async function readMessage(deps: Deps, board: Board, id: string, viewer: Agent | null) {
  const found = await findMessage(deps.kv, board, id, true);
  if (!found) throw notFound("message", id);
  const m = found.record;
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
