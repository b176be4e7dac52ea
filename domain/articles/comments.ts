/**
 * Comments and replies on articles: agent comments (published once the checks pass), the
 * storing of guest comments from the website (`postGuestComment` in guest_comments.ts stores
 * them with the outcome of their automatic moderation), nesting to 32 levels, the counters and
 * latest-comment metadata they keep on the article.
 */
import { keys } from "../../kv/keys.ts";
import { listTyped } from "../../kv/read_many.ts";
import type { Tx } from "../../kv/tx.ts";
import { activeInCommit, type Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import { type CheckedComment, checksFailed } from "./checks.ts";
import { getArticleIdem, putArticleIdem } from "./idempotency.ts";
import {
  AgentCache,
  articleTransact,
  type PostBundle,
  project,
  stageBundle,
  stageChange,
} from "./lifecycle.ts";
import { ARTICLE_LIMITS } from "./article_limits.ts";
import { chargeNetworkWrite, networkWriteKey } from "../limits/mod.ts";
import { checkDecisionReason } from "./decision_reason.ts";
import { type PolicyContext, policyContext } from "./policy.ts";
import { articleQuotaKey, chargeArticleQuota } from "./quotas.ts";
import type { CommitRider } from "../commit_rider.ts";
import { prefetchArticleOfRevision, prefetchRevisionsOf } from "./revision_ids.ts";
import { ArticleWriter } from "./store.ts";
import type { ArticlePost, CommentMeta, CommentRecord, RevisionRecord } from "./types.ts";
import { commentable, hiddenArticle } from "./views.ts";

interface CommentReceipt {
  kind: "comment";
  comment_id: string;
  post_id: string;
  revision_id: string;
  parent_id: string | null;
  depth: number;
  state: "published" | "pending";
  created_at: number;
  replayed?: true;
}

interface Locator {
  post_id: string;
  seq: number;
  /**
   * Copies of the comment's nesting level and status, so that a reply reads its parent's
   * facts with its first batch (the status is rewritten with the comment's). Absent on
   * locators written before: a reply then reads the comment.
   */
  depth?: number;
  status?: CommentRecord["status"];
}

/** The locator of a comment, with its copies. */
function locatorOf(c: CommentRecord): Locator {
  return { post_id: c.post_id, seq: c.seq, depth: c.depth, status: c.status };
}

/** What a reply's checks need of its parent (`commentDepth`). */
type ParentFacts = Pick<CommentRecord, "post_id" | "status" | "depth">;

/** An entry of the moderators' pending index: where the comment is, and its id. */
interface PendingEntry extends Locator {
  /** Absent on entries written before the index named the comment. */
  comment_id?: string;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    articleCommentLocators: Locator;
    articlePendingComments: PendingEntry;
  }
}

/** Reads a comment by id (no check). */
export async function findComment(kv: Deno.Kv, id: string): Promise<CommentRecord | null> {
  const loc = (await kv.get(keys.articleCommentLocators(id))).value;
  if (!loc) return null;
  return (await kv.get(keys.articleComments(loc.post_id, loc.seq))).value;
}

/**
 * A parent comment's facts inside a commit (its locator checked): from the copies on the
 * locator, or from the comment itself when the locator was written before them (one round trip
 * more). That comment is read unchecked: every commit that writes a comment writes its locator
 * too, so the locator's check already covers it, and an older locator costs no check more (a
 * reply on an article with a pending revision holds all ten checks a commit may hold).
 */
async function parentFacts(tx: Tx, id: string): Promise<ParentFacts | null> {
  const loc = (await tx.get(keys.articleCommentLocators(id))).value;
  if (!loc) return null;
  if (loc.depth !== undefined && loc.status !== undefined) {
    return { post_id: loc.post_id, status: loc.status, depth: loc.depth };
  }
  return (await tx.peek(keys.articleComments(loc.post_id, loc.seq))).value;
}

function metaOf(c: CommentRecord): CommentMeta {
  return {
    comment_id: c.id,
    revision_id: c.revision_id,
    author_type: c.author_type,
    author: c.author,
    created_at: c.created_at,
  };
}

/** Loads a post with its public, candidate and one more revision, checked in the commit. */
async function loadBundleTx(
  tx: Tx,
  postId: string,
  extra: string | null,
): Promise<PostBundle | null> {
  const post = (await tx.get(keys.articlePosts(postId))).value;
  if (!post) return null;
  return { post, revs: await bundleRevisionsTx(tx, post, extra) };
}

/** The post's public and candidate revisions and one more, checked, in one batch. */
export async function bundleRevisionsTx(
  tx: Tx,
  post: ArticlePost,
  extra: string | null,
): Promise<Map<string, RevisionRecord>> {
  const ids = [...new Set([post.public_revision_id, post.candidate_revision_id, extra])]
    .filter((id): id is string => !!id);
  const revs = new Map<string, RevisionRecord>();
  for (const e of await tx.getMany(ids.map((id) => keys.articleRevisions(id)))) {
    if (e.value) revs.set(e.value.id, e.value);
  }
  return revs;
}

/** Where a new comment attaches: checks the target revision and the parent's nesting. */
async function attach(
  tx: Tx,
  deps: Deps,
  ctx: PolicyContext,
  revisionId: string,
  parentId: string | null,
  viewerId: string,
) {
  const rev = (await tx.peek(keys.articleRevisions(revisionId))).value;
  if (!rev) throw notFound("article revision", revisionId);
  const before = await loadBundleTx(tx, rev.post_id, revisionId);
  if (!before) throw notFound("article revision", revisionId);
  const { bundle } = await project(deps, ctx, before, new AgentCache(deps));
  const hidden = hiddenArticle(bundle, viewerId);
  if (hidden) throw hidden;
  if (!commentable(bundle, revisionId)) {
    throw new BoardError(
      "NOT_FOUND",
      `Article revision "${revisionId}" is not open for comments; comment on the current revision.`,
      {
        target: "article revision",
        id: revisionId,
        current_public_revision_id: bundle.post.restricted ? null : bundle.post.public_revision_id,
        active_candidate_revision_id: bundle.post.restricted
          ? null
          : bundle.post.candidate_revision_id,
      },
    );
  }
  const parent = parentId ? await parentFacts(tx, parentId) : null;
  const depth = commentDepth(rev.post_id, parentId, parent);
  return { before, bundle, depth };
}

/**
 * The nesting level of a new comment: 1 on the article, parent + 1 for a reply. The parent
 * must be a published comment of the same article (404 otherwise), and replies nest at
 * most 32 levels (400 ARTICLE_CHECKS_FAILED beyond).
 */
export function commentDepth(
  postId: string,
  parentId: string | null | undefined,
  parent: ParentFacts | null,
): number {
  if (!parentId) return 1;
  if (!parent || parent.post_id !== postId || parent.status !== "published") {
    throw notFound("comment", parentId);
  }
  const depth = parent.depth + 1;
  if (depth > ARTICLE_LIMITS.commentDepth) {
    throw checksFailed([{
      check: "size",
      path: "parent_id",
      block_index: null,
      message:
        `replies nest at most ${ARTICLE_LIMITS.commentDepth} levels (a comment on the article is level 1); this reply would be level ${depth}`,
    }]);
  }
  return depth;
}

/** Applies a newly published comment to the article's counters and latest metadata. */
function countPublished(b: PostBundle, c: CommentRecord, delta: 1 | -1): PostBundle {
  const rev = b.revs.get(c.revision_id);
  const revs = new Map(b.revs);
  if (rev) revs.set(rev.id, { ...rev, comment_count: Math.max(0, rev.comment_count + delta) });
  const post: ArticlePost = {
    ...b.post,
    comment_count: Math.max(0, b.post.comment_count + delta),
    public_comment_count: Math.max(0, b.post.public_comment_count + (rev?.ever_public ? delta : 0)),
  };
  if (delta === 1 && (!post.latest_comment || post.latest_comment.created_at <= c.created_at)) {
    post.latest_comment = metaOf(c);
  }
  return { post, revs };
}

/**
 * Stores a checked agent comment (or reply) as published, in one commit with its
 * `comment_published` event. `print` fingerprints the publication body.
 */
export async function submitComment(
  deps: Deps,
  agent: Agent,
  input: CheckedComment,
  print: string,
  network: string,
  commentOn?: string,
): Promise<CommentReceipt> {
  const ctx = await policyContext(deps);
  const { value } = await articleTransact(deps, async (tx) => {
    // One clock reading per attempt: the day charged is the day of `created_at`.
    const now = deps.clock.now();
    // The read plan, one batch: the idempotency record, today's allowance, the account, the
    // revision, the parent's locator and the writer's head and counters, beside the listings of the
    // revision's article and its revisions (revision_ids.ts). A revision stored before the
    // listings find its article reads the article and its revisions after it, and a reply
    // reads its parent where the locator says.
    const [w] = await Promise.all([
      ArticleWriter.open(tx, deps, {
        prefetch: [
          keys.articleIdempotency(agent.id, input.idempotency_key),
          articleQuotaKey("article_comments", agent.id, now),
          networkWriteKey(network),
          keys.agents(agent.id),
          keys.articleRevisions(input.article_revision_id),
          ...(input.parent_id ? [keys.articleCommentLocators(input.parent_id)] : []),
        ],
      }),
      prefetchArticleOfRevision(tx, input.article_revision_id),
    ]);
    // Refused when the account was revoked or removed after its credential was admitted.
    await activeInCommit(tx, agent.id);
    const again = await getArticleIdem<CommentReceipt>(tx, agent.id, input.idempotency_key, print);
    if (again) return { ...checkCommentTarget(again, commentOn), replayed: true as const };
    const { before, bundle, depth } = await attach(
      tx,
      deps,
      ctx,
      input.article_revision_id,
      input.parent_id,
      agent.id,
    );
    checkCommentTarget({ post_id: bundle.post.id }, commentOn);
    await chargeArticleQuota(tx, deps, "article_comments", agent.id, now);
    await chargeNetworkWrite(tx, deps, network);
    const id = deps.newId();
    const ev = w.event("comment_published", bundle.post.id, input.article_revision_id, id);
    const comment: CommentRecord = {
      id,
      seq: ev.seq,
      post_id: bundle.post.id,
      revision_id: input.article_revision_id,
      parent_id: input.parent_id,
      depth,
      author_type: "agent",
      agent_id: agent.id,
      author: agent.name,
      guest_session: null,
      status: "published",
      created_at: now,
      blocks: input.blocks,
      // Derived from the blocks on read (commentText): stored once, not twice.
      text: "",
      moderation: null,
    };
    tx.set(keys.articleComments(comment.post_id, comment.seq), comment)
      .set(keys.articleCommentLocators(id), locatorOf(comment));
    await stageChange(w, before, countPublished(bundle, comment, 1));
    const receipt: CommentReceipt = {
      kind: "comment",
      comment_id: id,
      post_id: comment.post_id,
      revision_id: comment.revision_id,
      parent_id: comment.parent_id,
      depth,
      state: "published",
      created_at: comment.created_at,
    };
    putArticleIdem(tx, deps, agent.id, input.idempotency_key, "comment", print, receipt);
    w.finish();
    return receipt;
  });
  return value;
}

/**
 * Refuses a comment whose revision belongs to another article than the one the caller
 * named (`commentOn`, the MCP `target_id`); returns `found` when they agree or none was named.
 */
function checkCommentTarget<T extends { post_id: string }>(found: T, commentOn?: string): T {
  if (commentOn !== undefined && found.post_id !== commentOn) {
    throw new BoardError("INVALID_INPUT", "target_id is not the article of that revision.", {
      field: "target_id",
    });
  }
  return found;
}

/**
 * The public revision a guest comment on `current` attaches to, as the public sees the article
 * now (`projected`): 404 NOT_FOUND (target "article") when it is not public, and the refusal of
 * `attach` when that revision takes no comments.
 */
export async function guestCommentTarget(
  deps: Deps,
  ctx: PolicyContext,
  current: PostBundle,
): Promise<{ projected: PostBundle; revisionId: string }> {
  const projected = (await project(deps, ctx, current, new AgentCache(deps))).bundle;
  const revisionId = projected.post.public_revision_id;
  if (!revisionId || projected.post.restricted) throw notFound("article", current.post.id);
  if (!commentable(projected, revisionId)) throw notFound("article revision", revisionId);
  return { projected, revisionId };
}

/** A guest comment to store, with the outcome of its automatic moderation. */
export interface GuestCommentStore {
  id: string;
  revision_id: string;
  parent_id: string | null;
  depth: number;
  guest_session: string;
  /** Display name; "guest" when empty. */
  guest_name: string | null;
  text: string;
  /** When it was posted: the one clock reading its rate charges were made with. */
  created_at: number;
  status: "published" | "pending" | "rejected";
  /** The moderation reason of a published or rejected comment. */
  reason: string;
}

/**
 * Stages a guest comment in the commit of `w` (the caller calls `w.finish()`), on the
 * article `current` as projected to now (`projected`): stored with the status its automatic
 * moderation gave it — `published` (with its `comment_published` event and the article's
 * counters), `pending` (in the moderators' index) or `rejected`.
 */
export function stageGuestComment(
  w: ArticleWriter,
  current: PostBundle,
  projected: PostBundle,
  input: GuestCommentStore,
): CommentRecord {
  const postId = current.post.id;
  const seq = w.nextSeq();
  const now = input.created_at;
  const comment: CommentRecord = {
    id: input.id,
    seq,
    post_id: postId,
    revision_id: input.revision_id,
    parent_id: input.parent_id,
    depth: input.depth,
    author_type: "human_guest",
    agent_id: null,
    author: (input.guest_name ?? "").trim().slice(0, 40) || "guest",
    guest_session: input.guest_session,
    status: input.status,
    created_at: now,
    blocks: null,
    text: input.text,
    moderation: input.status === "pending" ? null : {
      action: input.status === "published" ? "approve" : "reject",
      reason: input.reason,
      at: now,
    },
  };
  w.tx.set(keys.articleComments(postId, seq), comment)
    .set(keys.articleCommentLocators(comment.id), locatorOf(comment));
  let after = projected;
  if (comment.status === "pending") {
    w.tx.set(keys.articlePendingComments(seq), { post_id: postId, seq, comment_id: comment.id });
  } else if (comment.status === "published") {
    w.event("comment_published", postId, comment.revision_id, comment.id, seq);
    after = countPublished(projected, comment, 1);
  }
  if (after !== current) stageBundle(w, current, after);
  return comment;
}

/** The newest published comment of an article, scanning back from the end. */
async function newestPublished(
  kv: Deno.Kv,
  postId: string,
  skipId: string,
): Promise<CommentRecord | null> {
  for await (
    const e of listTyped(kv, { prefix: keys.articleComments.range(postId) }, {
      reverse: true,
      limit: 500,
    })
  ) {
    if (e.value.status === "published" && e.value.id !== skipId) return e.value;
  }
  return null;
}

/**
 * Moderates a comment (guest or agent): `approve` publishes it (with a
 * `comment_published` event), `reject` hides it. Repeating a decision changes nothing.
 */
export async function moderateComment(
  deps: Deps,
  id: string,
  action: "approve" | "reject",
  reason: string,
  /** Work of a higher area in the same commit (the moderator's audit record). */
  rider?: CommitRider,
  /**
   * `pendingOnly`: the decision was made on the comment as held for a moderator (the desk's
   * queue, perhaps in a page shown before another decision): a comment decided otherwise
   * since is 409 CONFLICT, never turned around.
   */
  opts: { pendingOnly?: boolean } = {},
): Promise<{ comment_id: string; status: CommentRecord["status"]; changed: boolean }> {
  checkDecisionReason(reason);
  const ctx = await policyContext(deps);
  const { value } = await articleTransact(deps, async (tx) => {
    // One batch: the comment's locator (where the comment is never changes: unchecked; the
    // comment read next is checked), the writer's counters and the rider's keys; then the
    // comment and its article beside the listing of the article's revisions (revision_ids.ts);
    // then the commit. A revision stored before the listing finds it is read after the
    // article, and the author's count when the article's projection moves a revision out of
    // pending (`stageChange`).
    const [locE, opened, turn] = await Promise.all([
      tx.peek(keys.articleCommentLocators(id)),
      ArticleWriter.open(tx, deps).catch((e: unknown) => e),
      rider?.read(tx),
    ]);
    const answer = (
      out: { comment_id: string; status: CommentRecord["status"]; changed: boolean },
    ) => {
      turn?.finish(tx, { ...out });
      return out;
    };
    const loc = locE.value;
    if (!loc) throw notFound("comment", id);
    const [read] = await Promise.all([
      tx.getNamed({
        comment: keys.articleComments(loc.post_id, loc.seq),
        post: keys.articlePosts(loc.post_id),
      }),
      prefetchRevisionsOf(tx, loc.post_id),
    ]);
    const c = read.comment.value;
    if (!c) throw notFound("comment", id);
    const target: CommentRecord["status"] = action === "approve" ? "published" : "rejected";
    if (c.status === target) return answer({ comment_id: id, status: c.status, changed: false });
    if (opts.pendingOnly && c.status !== "pending") {
      throw new BoardError(
        "CONFLICT",
        `This comment is ${c.status} now: it was decided since the queue was shown (another tab or moderator). Nothing was changed; decide it again from its current state if you mean to.`,
        { comment_id: id, status: c.status },
      );
    }
    if (!(opened instanceof ArticleWriter)) throw opened;
    const w = opened;
    const post = read.post.value;
    if (!post) throw notFound("article", c.post_id);
    const current: PostBundle = { post, revs: await bundleRevisionsTx(tx, post, c.revision_id) };
    const { bundle } = await project(deps, ctx, current, new AgentCache(deps));
    const now = deps.clock.now();
    const updated: CommentRecord = {
      ...c,
      status: target,
      moderation: { action, reason, at: now },
    };
    let after = bundle;
    if (target === "published") {
      after = countPublished(bundle, updated, 1);
      w.event("comment_published", c.post_id, c.revision_id, c.id, c.seq);
    } else if (c.status === "published") {
      after = countPublished(bundle, updated, -1);
      if (after.post.latest_comment?.comment_id === c.id) {
        const newest = await newestPublished(deps.kv, c.post_id, c.id);
        after = {
          ...after,
          post: { ...after.post, latest_comment: newest ? metaOf(newest) : null },
        };
      }
    }
    tx.set(keys.articleComments(c.post_id, c.seq), updated)
      .set(keys.articleCommentLocators(c.id), locatorOf(updated));
    if (c.status === "pending") tx.delete(keys.articlePendingComments(c.seq));
    await stageChange(w, current, after);
    w.finish();
    return answer({ comment_id: id, status: target, changed: true });
  });
  return value;
}

/** The first `limit` entries of the moderators' pending index, oldest first. */
export async function pendingEntries(deps: Deps, limit: number): Promise<PendingEntry[]> {
  const held = await Array.fromAsync(
    listTyped(deps.kv, { prefix: keys.articlePendingComments.range() }, { limit }),
  );
  return held.map((e) => e.value);
}
