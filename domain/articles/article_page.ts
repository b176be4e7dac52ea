/**
 * What the website's article page reads (docs/website.md "Article page"), planned by round
 * trip: first the article, the guest's session, the page of comment records and the comment
 * a reply is aimed at (by its locator); then every revision of the article (the one shown,
 * and which have been public), its text, the sizes of its figures (which the article names,
 * `namedFigures`), the outcomes of the guest's own unpublished comments, the reply's comment
 * and a kept refusal; a third only when the clock published a newer revision than the stored
 * one, or for the figures of a revision the article does not name them for (written before).
 * The comment a kept refusal answered is read after the refusal (its locator, then it). It
 * writes nothing: a guest without a session is issued one by the page (`issueGuestSession`,
 * no KV).
 */
import { keys } from "../../kv/keys.ts";
import { listTyped, readMany } from "../../kv/read_many.ts";
import type { Deps } from "../deps.ts";
import { notFound } from "../errors.ts";
import { type FigureSize, figureSizes } from "./assets.ts";
import { namedFigures } from "./store.ts";
import { type GuestRefusal, guestRefusal } from "./guest_refusals.ts";
import { type GuestCookie, type GuestSession, guestSessionOf } from "./guest_sessions.ts";
import { AgentCache, type PostBundle, project } from "./lifecycle.ts";
import { policyContext } from "./policy.ts";
import { canSee } from "./reads.ts";
import {
  type Discussion,
  discussionWindow,
  ownUnpublished,
  readGuestChecks,
  replyable,
  seenBy,
  threadDiscussion,
  type Viewer,
} from "./comment_threads.ts";
import type { Block, CommentRecord, RevisionRecord } from "./types.ts";

/** What the article page asks for. */
interface ArticlePageRequest {
  postId: string;
  /** The browser's guest cookie (`readGuestCookie`), null without one the server issued. */
  cookie: GuestCookie | null;
  page: { before?: number; after?: number };
  /** A comment id to reply to (`?reply_to=`), when it is a uuid. */
  replyTo: string | null;
  /** A kept refusal to show (`?refusal=`), when it is a uuid. */
  refusalId: string | null;
  /**
   * Reads the article and its comments from the nearest replica (`eventual`); the session is
   * always read strongly. The caller asks for `strong` where the guest must see their own
   * latest write (after posting, after a refusal).
   */
  consistency: Deno.KvConsistencyLevel;
}

/** Everything the article page shows. */
export interface ArticlePageData {
  bundle: PostBundle;
  rev: RevisionRecord;
  blocks: Block[];
  viewer: Viewer;
  /** The live session the cookie names, or null. */
  session: GuestSession | null;
  discussion: Discussion;
  sizes: Map<string, FigureSize>;
  /** The `replyTo` comment when the viewer may see it (replyable or not), else null. */
  replyTarget: CommentRecord | null;
  refusal: GuestRefusal | null;
  /** The visible comment the refused form replied to, or null. */
  refusalTarget: CommentRecord | null;
}

const visible = seenBy;

/** Reads one comment by id: its locator (already read, or read now), then the comment. */
async function commentAt(
  deps: Deps,
  loc: { post_id: string; seq: number } | null,
  consistency: Deno.KvConsistencyLevel,
): Promise<CommentRecord | null> {
  if (!loc) return null;
  return (await deps.kv.get(keys.articleComments(loc.post_id, loc.seq), { consistency })).value;
}

/** A revision's blocks from its parts (listed by prefix, so known from the revision's id). */
async function partsOf(
  deps: Deps,
  revisionId: string,
  consistency: Deno.KvConsistencyLevel,
): Promise<string[]> {
  const listed = await Array.fromAsync(
    listTyped(deps.kv, { prefix: keys.articleRevisionParts.range(revisionId) }, { consistency }),
  );
  return listed.map((e) => e.value);
}

/** Reads the article page (see the module's doc); 404 NOT_FOUND when it is not public. */
export async function readArticlePage(
  deps: Deps,
  req: ArticlePageRequest,
): Promise<ArticlePageData> {
  const { postId, consistency } = req;
  const ctx = await policyContext(deps);
  const opt = { consistency };
  const [post, sessionEntry, window, replyLoc] = await Promise.all([
    deps.kv.get(keys.articlePosts(postId), opt),
    req.cookie ? deps.kv.get(keys.guestSessions(req.cookie.key)) : null,
    discussionWindow(deps.kv, postId, req.page, undefined, consistency),
    req.replyTo ? deps.kv.get(keys.articleCommentLocators(req.replyTo), opt) : null,
  ]);
  const stored = post.value;
  if (!stored) throw notFound("article", postId);
  const session = req.cookie
    ? await guestSessionOf(deps, req.cookie, sessionEntry?.value ?? null)
    : null;
  const sessionId = session?.id ?? null;
  const wanted = [...new Set(stored.revision_ids)];
  const mine = ownUnpublished(window, { session: sessionId, everPublic: new Set() });
  const storedId = stored.public_revision_id;
  const figures = storedId ? namedFigures(stored, storedId) : null;
  const [revList, parts, storedSizes, replyRaw, refusal, checks] = await Promise.all([
    readMany(deps.kv, wanted.map((id) => keys.articleRevisions(id)), opt),
    storedId ? partsOf(deps, storedId, consistency) : [],
    figures ? figureSizes(deps, figures) : null,
    commentAt(deps, replyLoc?.value ?? null, consistency),
    sessionId && req.refusalId ? guestRefusal(deps, sessionId, postId, req.refusalId) : null,
    readGuestChecks(deps, mine),
  ]);
  const revs = new Map<string, RevisionRecord>();
  for (const e of revList) if (e.value) revs.set(e.value.id, e.value);
  const { bundle } = await project(deps, ctx, { post: stored, revs }, new AgentCache(deps));
  if (!canSee(bundle, null)) throw notFound("article", postId);
  const rev = bundle.revs.get(bundle.post.public_revision_id!)!;
  const everPublic = new Set(
    [...bundle.revs.values()].filter((r) => r.ever_public).map((r) => r.id),
  );
  const viewer: Viewer = { session: sessionId, everPublic };
  // The clock may have published a newer revision than the stored one: its parts and its
  // figures' sizes then (and the sizes of a revision the article does not name them for).
  const shown = rev.id === storedId && parts.length === rev.parts;
  const refusalLoc = refusal?.parent_id
    ? deps.kv.get(keys.articleCommentLocators(refusal.parent_id), opt)
    : null;
  const [text, sizes, refusalRaw] = await Promise.all([
    shown ? parts : partsOf(deps, rev.id, consistency),
    shown && storedSizes ? storedSizes : figureSizes(deps, rev.asset_ids),
    refusalLoc ? refusalLoc.then((l) => commentAt(deps, l.value, consistency)) : null,
  ]);
  if (text.length !== rev.parts) throw new Error(`revision ${rev.id} content is incomplete`);
  const blocks: Block[] = JSON.parse(text.join(""));
  const refusalTarget = visible(refusalRaw, postId, viewer);
  return {
    bundle,
    rev,
    blocks,
    viewer,
    session,
    discussion: threadDiscussion(window, viewer, checks),
    sizes,
    replyTarget: visible(replyRaw, postId, viewer),
    refusal,
    refusalTarget: refusalTarget && replyable(refusalTarget, viewer) ? refusalTarget : null,
  };
}
