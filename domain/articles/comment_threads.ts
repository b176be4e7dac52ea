/**
 * The discussion under an article on the website (docs/website.md "Article page"): a
 * window of comment records in sequence order, filtered for the viewer (published
 * comments on revisions that have been public; the viewing guest session's own pending
 * and rejected ones), threaded by parent up to 32 levels.
 */
import { keys } from "../../kv/keys.ts";
import { listTyped, readMany } from "../../kv/read_many.ts";
import { pendingEntries } from "./comments.ts";
import type { PostBundle } from "./lifecycle.ts";
import { ARTICLE_LIMITS } from "./article_limits.ts";
import { policyContext } from "./policy.ts";
import { canSee, projectedBundles } from "./reads.ts";
import type { CommentRecord } from "./types.ts";
import { commentPlace, commentText } from "./views.ts";
import type { Deps } from "../deps.ts";
import { notFound } from "../errors.ts";
import { listPage, type Page, type PageParams } from "../paging.ts";
import type { Assessment } from "./guest_moderation.ts";

/** The stored outcome of the automatic moderation of one guest comment. */
export interface GuestCheckRecord extends Assessment {
  at: number;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    guestCommentChecks: GuestCheckRecord;
  }
}

/** The automatic moderation outcomes of some comments (missing ones are left out). */
export async function readGuestChecks(
  deps: Deps,
  commentIds: string[],
): Promise<Map<string, GuestCheckRecord>> {
  const out = new Map<string, GuestCheckRecord>();
  const got = await readMany(
    deps.kv,
    commentIds.map((id) => keys.guestCommentChecks(id)),
  );
  got.forEach((e, j) => e.value && out.set(commentIds[j], e.value));
  return out;
}

/**
 * Comments as the moderator sees them (`/mod`): any status, the session and moderation
 * record, the automatic moderation outcome, and the text as every other view derives it.
 */
export async function moderatorComments(
  deps: Deps,
  comments: CommentRecord[],
  known?: { asked: Set<string>; checks: Map<string, GuestCheckRecord> },
) {
  const missing = comments.map((c) => c.id).filter((id) => !known?.asked.has(id));
  const checks = new Map(known?.checks);
  if (missing.length) {
    for (const [id, check] of await readGuestChecks(deps, missing)) checks.set(id, check);
  }
  return comments.map((c) => ({
    ...commentPlace(c),
    agent_id: c.agent_id,
    guest_session: c.guest_session,
    status: c.status,
    created_at: c.created_at,
    text: commentText(c),
    ...(c.blocks ? { blocks: c.blocks } : {}),
    moderation: c.moderation,
    automatic_moderation: checks.get(c.id) ?? null,
  }));
}

/**
 * Comments waiting for moderation as moderators see them, oldest first: one list of the
 * pending index, then the comments and their automatic moderation outcomes in one batch
 * (each index entry names its comment; an older entry that does not costs one more read).
 */
export async function pendingForModerators(deps: Deps, limit: number) {
  const held = await pendingEntries(deps, limit);
  const ids = held.flatMap((e) => e.comment_id ? [e.comment_id] : []);
  const [found, checks] = await Promise.all([
    readMany(deps.kv, held.map((e) => keys.articleComments(e.post_id, e.seq))),
    readGuestChecks(deps, ids),
  ]);
  const comments = found.flatMap((e) => e.value ? [e.value] : []);
  return await moderatorComments(deps, comments, { asked: new Set(ids), checks });
}

/** Comment records one page of the discussion covers (a page stays light on a phone). */
const COMMENT_WINDOW = 50;

/** The article as the public sees it now, or 404 NOT_FOUND (target "article"). */
export async function publicArticleBundle(deps: Deps, postId: string): Promise<PostBundle> {
  const ctx = await policyContext(deps);
  const [b] = await projectedBundles(deps, ctx, [postId]);
  if (!b || !canSee(b, null)) throw notFound("article", postId);
  return b;
}

/** Who is reading: the guest session id (hash), or null, and which revisions are public. */
export interface Viewer {
  session: string | null;
  everPublic: Set<string>;
}

/** Whether the viewer may see a comment: public, or the viewing session's own. */
function visibleTo(c: CommentRecord, v: Viewer): boolean {
  if (c.status === "published" && v.everPublic.has(c.revision_id)) return true;
  return v.session !== null && c.author_type === "human_guest" && c.guest_session === v.session;
}

/** Whether anyone may reply to the comment (published, public, not at the deepest level). */
export function replyable(c: CommentRecord, v: Viewer): boolean {
  return c.status === "published" && v.everPublic.has(c.revision_id) &&
    c.depth < ARTICLE_LIMITS.commentDepth;
}

export interface ThreadNode {
  comment: CommentRecord;
  /** Written by the viewing guest session. */
  own: boolean;
  /** The automatic moderation outcome, for the session's own unpublished comments. */
  check: GuestCheckRecord | null;
  replyable: boolean;
  /** A reply whose parent is not on this page (older page, or no longer shown). */
  parentElsewhere: boolean;
  children: ThreadNode[];
}

export interface Discussion {
  roots: ThreadNode[];
  /** Comments shown on this page. */
  shown: number;
  /** `before` cursor of the page of older comments, null when there are none. */
  earlier: number | null;
  /** `after` cursor of the page of newer comments, null when there are none. */
  later: number | null;
}

async function exists(
  kv: Deno.Kv,
  selector: Deno.KvListSelector,
  reverse: boolean,
  consistency: Deno.KvConsistencyLevel = "strong",
) {
  for await (const _ of kv.list(selector, { limit: 1, reverse, consistency })) return true;
  return false;
}

/** The comment records of one page of the discussion, in sequence order, and its cursors. */
interface DiscussionWindow {
  raw: CommentRecord[];
  earlier: number | null;
  later: number | null;
}

/**
 * The records of one page of the discussion: by default the newest `window` comment records;
 * with `before` the records older than it, with `after` the records newer than it. The page
 * and the look past its far end go out together (one round trip): records beyond the page on
 * that side are exactly those beyond the cursor.
 */
export async function discussionWindow(
  kv: Deno.Kv,
  postId: string,
  page: { before?: number; after?: number },
  window = COMMENT_WINDOW,
  consistency: Deno.KvConsistencyLevel = "strong",
): Promise<DiscussionWindow> {
  const prefix = keys.articleComments.range(postId);
  let earlier: number | null = null;
  let later: number | null = null;
  if (page.after !== undefined) {
    const sel = { prefix, start: [...prefix, page.after + 1] };
    const [raw, before] = await Promise.all([
      Array.fromAsync(listTyped(kv, sel, { limit: window + 1, consistency })),
      exists(kv, { prefix, end: [...prefix, page.after + 1] }, true, consistency),
    ]);
    const records = raw.map((e) => e.value);
    if (records.length > window) later = records[window - 1].seq;
    records.splice(window);
    if (before) earlier = records[0]?.seq ?? page.after + 1;
    return { raw: records, earlier, later };
  }
  const sel = page.before !== undefined ? { prefix, end: [...prefix, page.before] } : { prefix };
  const [raw, after] = await Promise.all([
    Array.fromAsync(
      listTyped(kv, sel, { limit: window + 1, reverse: true, consistency }),
    ),
    page.before !== undefined
      ? exists(kv, { prefix, start: [...prefix, page.before] }, false, consistency)
      : false,
  ]);
  const records = raw.map((e) => e.value);
  if (records.length > window) earlier = records[window - 1].seq;
  records.splice(window);
  records.reverse();
  if (after) later = records.at(-1)?.seq ?? page.before! - 1;
  return { raw: records, earlier, later };
}

/** The viewer's own comments of a window that are not published (their outcomes are shown). */
export function ownUnpublished(w: DiscussionWindow, viewer: Viewer): string[] {
  return w.raw.filter((c) => c.status !== "published" && visibleTo(c, viewer)).map((c) => c.id);
}

/** A window of records as the viewer sees it, threaded (`checks`: see `ownUnpublished`). */
export function threadDiscussion(
  w: DiscussionWindow,
  viewer: Viewer,
  checks: Map<string, GuestCheckRecord>,
): Discussion {
  const visible = w.raw.filter((c) => visibleTo(c, viewer));
  const nodes = new Map<string, ThreadNode>();
  const roots: ThreadNode[] = [];
  for (const c of visible) {
    const parent = c.parent_id ? nodes.get(c.parent_id) : undefined;
    const node: ThreadNode = {
      comment: c,
      own: viewer.session !== null && c.guest_session === viewer.session,
      check: checks.get(c.id) ?? null,
      replyable: replyable(c, viewer),
      parentElsewhere: !!c.parent_id && !parent,
      children: [],
    };
    nodes.set(c.id, node);
    (parent ? parent.children : roots).push(node);
  }
  return { roots, shown: visible.length, earlier: w.earlier, later: w.later };
}

/** `c` when it is a comment of article `postId` the viewer may see, else null. */
export function seenBy(
  c: CommentRecord | null,
  postId: string,
  viewer: Viewer,
): CommentRecord | null {
  return c && c.post_id === postId && visibleTo(c, viewer) ? c : null;
}

/**
 * Every comment of an article in any status, newest first (for moderators); 404 for an id
 * that names no article (read beside the page: no round trip more).
 */
export async function allArticleComments(
  deps: Deps,
  postId: string,
  params: PageParams,
): Promise<Page<CommentRecord>> {
  const [post, page] = await Promise.all([
    deps.kv.get(keys.articlePosts(postId)),
    listPage(deps.kv, keys.articleComments.range(postId), params),
  ]);
  if (!post.value) throw notFound("article", postId);
  return page;
}
