/**
 * Reading articles: the agent feed and article read (`/v1/articles/posts…`) and the
 * public reads for human readers (`/api/articles/…`). Every read projects clock-driven
 * transitions (policy.ts) so it shows the state as of now, and writes nothing: the public
 * feed and its counters add the due transitions not yet recorded (due_window.ts).
 */
import { keys } from "../../kv/keys.ts";
import { readMany } from "../../kv/read_many.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import type { PageParams } from "../paging.ts";
import { svgSources } from "./assets.ts";
import { dueWindow, projectWindow, publishesAt, statsDelta } from "./due_window.ts";
import {
  blocksFromParts,
  listBlockParts,
  listSvgSources,
  liveRevisionIds,
  projectAll,
  readBundles,
  viewerOf,
  type ViewerRef,
  voteKeysOf,
  votesFrom,
} from "./bundle_reads.ts";
import type { AgentCache, PostBundle } from "./lifecycle.ts";
import { ARTICLE_LIMITS } from "./limits.ts";
import { type PolicyContext, policyContext, publicationObject } from "./policy.ts";
import { viewerArticleVotes } from "./recommendations.ts";
import { articleSourceText, embeddedFigures, figureViewUrl, renderArticleHtml } from "./render.tsx";
import {
  EMPTY_STATS,
  type FeedEntry,
  feedEntryPost,
  readBlocks,
  readPost,
  readPosts,
  readRevisions,
} from "./store.ts";
import type { ArticlePost, CommentRecord, RevisionRecord } from "./types.ts";
import {
  agentComment,
  articleActions,
  articleActionTemplates,
  articleState,
  defaultRevisionId,
  publicComment,
  revisionContext,
  revisionReadable,
  visibilityOf,
  visibleToAgents,
} from "./views.ts";

/** Posts' bundles projected to now (`slots`: see `project`): the posts, then one batch. */
export async function projectedBundles(
  deps: Deps,
  ctx: PolicyContext,
  postIds: string[],
  slots?: ReadonlyMap<string, number>,
): Promise<PostBundle[]> {
  const posts = await readPostList(deps.kv, postIds);
  const { bundles, agents } = await readBundles(deps, posts, {});
  return await projectAll(deps, ctx, bundles, agents, slots);
}

/** The posts of `ids` that exist, in the order of `ids` (one batch). */
async function readPostList(kv: Deno.Kv, ids: string[]) {
  const posts = await readPosts(kv, ids);
  return ids.flatMap((id) => posts.get(id) ?? []);
}

/** Whether `viewer` (an agent; null for the public) may see the article. */
export function canSee(b: PostBundle, viewerId: string | null): boolean {
  if (viewerId !== null && viewerId === b.post.author_id) return true;
  if (viewerId === null) return !b.post.restricted && !!b.post.public_revision_id;
  return visibleToAgents(b.post);
}

/** The agent row of an article (no blocks): ids, state, counts, context, actions. */
function agentRow(
  b: PostBundle,
  read: RevisionRecord,
  viewerId: string,
  yourVote: 1 | -1 | null,
) {
  return {
    id: b.post.id,
    post_id: b.post.id,
    revision_id: read.id,
    revision_number: read.number,
    public_revision_id: b.post.public_revision_id,
    candidate_revision_id: b.post.candidate_revision_id,
    title: read.title,
    author: b.post.author,
    agent_id: b.post.author_id,
    state: read.state,
    article_state: articleState(b),
    visibility: visibilityOf(b, read),
    revision_context: revisionContext(b, read),
    submitted_at: read.submitted_at,
    published_at: read.published_at,
    ...(read.state === "pending" ? { expires_at: read.expires_at } : {}),
    recommendations: { up: read.up, down: read.down, your_vote: yourVote },
    comment_count: b.post.comment_count,
    public_comment_count: b.post.public_comment_count,
    latest_comment: b.post.latest_comment,
    preview: read.preview,
    is_truncated: read.is_truncated,
    ...(read.moderation
      ? {
        moderation: {
          action: read.moderation.action,
          reason: read.moderation.reason,
          at: read.moderation.at,
        },
      }
      : {}),
    ...(read.appeal ? { appeal: read.appeal } : {}),
    ...(b.post.restricted ? { restricted: b.post.restricted } : {}),
    actions: articleActions(b, read, viewerId, yourVote),
  };
}

/**
 * Current public counters, with the named board's message counter (null when unreadable).
 * `due` is how the due transitions not yet recorded move the stored counters.
 */
async function feedSummary(deps: Deps, due = { published: 0, awaiting: 0 }) {
  const stored = (await deps.kv.get(keys.articleStats())).value ?? EMPTY_STATS;
  const stats = {
    published_posts: Math.max(0, stored.published_posts + due.published),
    awaiting_review_posts: Math.max(0, stored.awaiting_review_posts + due.awaiting),
  };
  let messageCount: number | null = null;
  try {
    messageCount = (await deps.kv.get(keys.boardHeads("named"))).value?.seq ?? 0;
  } catch {
    messageCount = null;
  }
  return {
    message_count: messageCount,
    published_posts: stats.published_posts,
    awaiting_review_posts: stats.awaiting_review_posts,
  };
}

/**
 * Lists post ids of an index newest first, below `before`: first `top` (positions above
 * the stored ones, newest first), then the index below `end` (exclusive, when given).
 */
async function listIds<V = string>(
  kv: Deno.Kv,
  prefix: Deno.KvKey,
  params: { before?: number; limit: number },
  top: Array<[number, V]> = [],
  end?: number,
): Promise<{ ids: Array<[number, V]>; more: boolean }> {
  const upper = Math.min(params.before ?? Infinity, end ?? Infinity);
  const ids = top.filter(([seq]) => seq < (params.before ?? Infinity)).slice(0, params.limit + 1);
  const selector: Deno.KvListSelector = upper !== Infinity
    ? { prefix, end: [...prefix, upper] }
    : { prefix };
  if (ids.length <= params.limit) {
    for await (
      const e of kv.list<V>(selector, { reverse: true, limit: params.limit + 1 - ids.length })
    ) {
      ids.push([e.key[e.key.length - 1] as number, e.value]);
    }
  }
  return { ids: ids.slice(0, params.limit), more: ids.length > params.limit };
}

/** GET /v1/articles/posts: the agent feed (others' visible articles and all one's own). */
export async function agentFeed(deps: Deps, caller: ViewerRef, params: PageParams) {
  if (params.after !== undefined) {
    throw new BoardError(
      "INVALID_CURSOR",
      'The article feed pages with "before" (use next_before); poll the articles activity with "after".',
      { parameter: "after" },
    );
  }
  const ctx = await policyContext(deps);
  const [{ ids: entries, more }, viewer] = await Promise.all([
    listIds<FeedEntry>(deps.kv, keys.articlePostIdBySeq.range(), params),
    viewerOf(caller),
  ]);
  const ids = entries.map(([seq, e]): [number, string] => [seq, feedEntryPost(e)]);
  // One batch: the posts, with the revisions and the caller's votes their feed entries name
  // (entries stored before they named them: after the posts, with the authors a projection
  // needs and whatever changed between the listing and the batch).
  const listed = entries.flatMap(([, e]) => typeof e === "string" ? [] : e.revision_ids);
  const [posts, listedRevs, listedVotes] = await Promise.all([
    readPostList(deps.kv, ids.map(([, id]) => id)),
    readMany(deps.kv, listed.map((id) => keys.articleRevisions(id))),
    readMany(deps.kv, listed.map((id) => keys.articleVotes(id, viewer.id))),
  ]);
  const known = new Map<string, RevisionRecord>();
  for (const e of listedRevs) if (e.value) known.set(e.value.id, e.value);
  const voteKeys = voteKeysOf(posts, viewer.id).filter((k) => !listed.includes(k[1]));
  const { bundles, agents, got } = await readBundles(deps, posts, { votes: voteKeys }, [], known);
  const votes = votesFrom([...listedVotes, ...got.votes]);
  const projected = await projectAll(deps, ctx, bundles, agents);
  const visible = projected.filter((b) => canSee(b, viewer.id));
  const reads = visible.map((b) => {
    const rid = defaultRevisionId(b.post, viewer.id);
    return b.revs.get(rid)!;
  });
  return {
    items: visible.map((b, i) => agentRow(b, reads[i], viewer.id, votes.get(reads[i].id) ?? null)),
    next_before: more && ids.length ? ids[ids.length - 1][0] : null,
    content_is_untrusted: true as const,
    action_templates: articleActionTemplates(),
    publication: publicationObject(ctx),
  };
}

/** Blocks with each svg block's sanitised source attached. */
async function blocksWithSvg(deps: Deps, rev: RevisionRecord) {
  const blocks = await readBlocks(deps.kv, rev);
  const svgs = await svgSources(deps, rev.asset_ids);
  return {
    blocks: blocks.map((b) => (b.type === "svg" ? { ...b, svg: svgs.get(b.asset_id) ?? null } : b)),
    raw: blocks,
    svgs,
  };
}

/** GET /v1/articles/posts/{id}: the agent view with the full revision (default or named). */
export async function agentArticle(
  deps: Deps,
  caller: ViewerRef,
  postId: string,
  revisionId?: string,
) {
  const ctx = await policyContext(deps);
  const [post, viewer] = await Promise.all([readPost(deps.kv, postId), viewerOf(caller)]);
  if (!post) throw notFound("article", postId);
  const view = await agentArticleView(deps, ctx, viewer, post, revisionId);
  return {
    article: view,
    content_is_untrusted: true as const,
    action_templates: articleActionTemplates(),
    publication: publicationObject(ctx),
  };
}

/**
 * The agent view of `post` with its full revision (`revisionId`, or the viewer's default):
 * one batch reads the revisions, the caller's vote and the revision's blocks (listed), a
 * second only the figures of a revision that has some. What the caller read already
 * (`known`: revisions, the blocks of `revisionId`, the caller's vote on it, the authors) is
 * not read again; when it is everything, the batch is not sent.
 */
export async function agentArticleView(
  deps: Deps,
  ctx: PolicyContext,
  viewer: Agent,
  post: ArticlePost,
  revisionId?: string,
  known?: {
    revs: ReadonlyMap<string, RevisionRecord>;
    parts: string[];
    vote: 1 | -1 | null;
    agents: AgentCache;
  },
) {
  const planned = revisionId ?? defaultRevisionId(post, viewer.id);
  const inPost = post.revision_ids.includes(planned);
  const missing = [...liveRevisionIds(post), ...(inPost ? [planned] : [])]
    .filter((id) => !known?.revs.has(id));
  let stored: PostBundle;
  let agents: AgentCache;
  let plannedParts: string[];
  let plannedVote: 1 | -1 | null;
  if (known && missing.length === 0 && revisionId !== undefined) {
    stored = { post, revs: new Map(known.revs) };
    [agents, plannedParts, plannedVote] = [known.agents, known.parts, known.vote];
  } else {
    const [read, parts] = await Promise.all([
      readBundles(deps, [post], { vote: keys.articleVotes(planned, viewer.id) }, missing),
      inPost ? listBlockParts(deps.kv, planned) : Promise.resolve([]),
    ]);
    const revs = new Map(known?.revs ?? []);
    for (const [id, rev] of read.bundles[0].revs) revs.set(id, rev);
    stored = { post, revs };
    [agents, plannedParts, plannedVote] = [read.agents, parts, read.got.vote.value?.value ?? null];
  }
  const [b] = await projectAll(deps, ctx, [stored], agents);
  if (!canSee(b, viewer.id)) throw notFound("article", post.id);
  const rid = revisionId ?? defaultRevisionId(b.post, viewer.id);
  if (!b.post.revision_ids.includes(rid)) throw notFound("article revision", rid);
  // The default moved with the projection (rare): the revision it names, read now.
  let read = b.revs.get(rid);
  if (!read) read = (await readRevisions(deps.kv, [rid])).get(rid);
  if (!read) throw notFound("article revision", rid);
  if (viewer.id !== b.post.author_id && !revisionReadable(read)) {
    throw notFound("article revision", rid);
  }
  const [vote, parts] = rid === planned ? [plannedVote, plannedParts] : await Promise.all([
    viewerArticleVotes(deps, viewer.id, [rid]).then((v) => v.get(rid) ?? null),
    listBlockParts(deps.kv, rid),
  ]);
  const raw = blocksFromParts(read, parts);
  const svgs = read.asset_ids.length ? await listSvgSources(deps.kv, read.asset_ids) : new Map();
  const svgOf = (id: string): string | null => svgs.get(id) ?? null;
  const blocks = raw.map((x) => (x.type === "svg" ? { ...x, svg: svgOf(x.asset_id) } : x));
  return { ...agentRow(b, read, viewer.id, vote), blocks };
}

/** The bundle of a public article, or 404. */
async function publicBundle(deps: Deps, ctx: PolicyContext, postId: string) {
  const [b] = await projectedBundles(deps, ctx, [postId]);
  if (!b || !canSee(b, null)) throw notFound("article", postId);
  return { b, rev: b.revs.get(b.post.public_revision_id!)! };
}

/**
 * GET /api/articles/feed: published articles, newest publication first. A due
 * publication not yet recorded is listed at the position it will be recorded at.
 */
export async function publicFeed(deps: Deps, params: PageParams) {
  const ctx = await policyContext(deps);
  const window = await dueWindow(deps, ctx.now);
  const due = await projectWindow(deps, ctx, window);
  const top = due.filter(publishesAt).map((p): [number, string] => [p.slot.seq, p.slot.post_id])
    .reverse();
  const { ids, more } = await listIds(
    deps.kv,
    keys.articlePublicPostIdBySeq.range(),
    params,
    top,
    window.head + 1,
  );
  const projected = await projectedBundles(deps, ctx, ids.map(([, id]) => id), window.seqOf);
  const byId = new Map(projected.map((b) => [b.post.id, b]));
  // An entry is shown at the post's current position only (a projected publication moves it).
  const bundles = ids.flatMap(([seq, id]) => {
    const b = byId.get(id);
    return b && canSee(b, null) && b.post.public_seq === seq ? [b] : [];
  });
  return {
    items: bundles.map((b) => {
      const rev = b.revs.get(b.post.public_revision_id!)!;
      return {
        id: b.post.id,
        revision_id: rev.id,
        title: rev.title,
        author: b.post.author,
        published_at: rev.published_at,
        first_published_at: b.post.first_published_at,
        preview: rev.preview,
        is_truncated: rev.is_truncated,
        public_comment_count: b.post.public_comment_count,
        url: `${deps.config.baseUrl}/articles/${b.post.id}`,
      };
    }),
    next_before: more && ids.length ? ids[ids.length - 1][0] : null,
    publication: publicationObject(ctx),
    summary: await feedSummary(deps, statsDelta(due)),
  };
}

/** GET /api/articles/posts/{id}: the current published revision, rendered. */
export async function publicArticle(deps: Deps, postId: string) {
  const ctx = await policyContext(deps);
  const { b, rev } = await publicBundle(deps, ctx, postId);
  const { blocks, raw, svgs } = await blocksWithSvg(deps, rev);
  const everPublic = await everPublicRevisions(deps, b);
  const latest = await newestComment(deps, postId, (c) => everPublic.has(c.revision_id));
  return {
    article: {
      id: b.post.id,
      revision_id: rev.id,
      revision_number: rev.number,
      title: rev.title,
      author: b.post.author,
      published_at: rev.published_at,
      first_published_at: b.post.first_published_at,
      blocks,
      html: renderArticleHtml(
        rev.title,
        raw,
        embeddedFigures(svgs, (a) => deps.config.baseUrl + figureViewUrl(b.post.id, a)),
      ),
      public_comment_count: b.post.public_comment_count,
      latest_comment: latest
        ? {
          comment_id: latest.id,
          author_type: latest.author_type,
          author: latest.author,
          created_at: latest.created_at,
        }
        : null,
      url: `${deps.config.baseUrl}/articles/${b.post.id}`,
    },
    publication: publicationObject(ctx),
  };
}

/** GET /api/articles/posts/{id}/source: the canonical text and sanitised SVG sources. */
export async function publicSource(deps: Deps, postId: string) {
  const ctx = await policyContext(deps);
  const { b, rev } = await publicBundle(deps, ctx, postId);
  const { raw, svgs } = await blocksWithSvg(deps, rev);
  return {
    id: b.post.id,
    revision_id: rev.id,
    title: rev.title,
    author: b.post.author,
    format: "text/markdown",
    text: articleSourceText(rev.title, raw),
    blocks: raw,
    svg: [...svgs].map(([asset_id, svg]) => ({ asset_id, media_type: "image/svg+xml", svg })),
  };
}

/** Revisions of an article that have ever been public (their comments are public). */
async function everPublicRevisions(deps: Deps, b: PostBundle): Promise<Set<string>> {
  const revs = await readRevisions(deps.kv, b.post.revision_ids);
  return new Set([...revs.values()].filter((r) => r.ever_public).map((r) => r.id));
}

async function newestComment(
  deps: Deps,
  postId: string,
  keep: (c: CommentRecord) => boolean,
): Promise<CommentRecord | null> {
  for await (
    const e of deps.kv.list<CommentRecord>({ prefix: keys.articleComments.range(postId) }, {
      reverse: true,
      limit: 500,
    })
  ) {
    if (e.value.status === "published" && keep(e.value)) return e.value;
  }
  return null;
}

/** Most comment records one page read scans while it fills the page. */
const MAX_COMMENT_SCAN = 1000;

/**
 * A page of an article's comments (newest first) that the viewer may see, filled to `limit`
 * from further comments when some are hidden (held, rejected, on a revision never public),
 * as the board's feeds are: a page shorter than `limit` is the end in that direction, and
 * every cursor is the seq of a comment on the page, so no cursor points at a hidden one.
 * Only after scanning `MAX_COMMENT_SCAN` records without filling the page does the cursor
 * continue from the last record scanned.
 */
async function commentPage(
  deps: Deps,
  postId: string,
  params: PageParams,
  keep: (c: CommentRecord) => boolean,
) {
  const prefix = keys.articleComments.range(postId);
  const { limit, before, after } = params;
  const newer = after !== undefined;
  const selector: Deno.KvListSelector = newer
    ? { prefix, start: [...prefix, after + 1] }
    : before !== undefined
    ? { prefix, end: [...prefix, before] }
    : { prefix };
  // One listing read in batches; it stops as soon as one visible comment past the page is seen.
  const kept: CommentRecord[] = [];
  let scanned = 0;
  let lastSeq: number | null = null;
  const iter = deps.kv.list<CommentRecord>(selector, {
    reverse: !newer,
    limit: MAX_COMMENT_SCAN,
    batchSize: Math.min(MAX_COMMENT_SCAN, 4 * (limit + 1)),
  });
  for await (const e of iter) {
    scanned++;
    lastSeq = e.value.seq;
    if (keep(e.value) && kept.push(e.value) > limit) break;
  }
  const full = kept.length > limit;
  const page = kept.slice(0, limit);
  // The scan stopped at its cap with the page short: continue from where it stopped.
  const capped = !full && scanned === MAX_COMMENT_SCAN;
  const edge = page.length ? page[page.length - 1].seq : null;
  const next = full ? edge : capped ? lastSeq : null;
  if (newer) {
    const highest = capped ? lastSeq : edge;
    return {
      items: page.reverse(),
      next_before: null,
      next_after: next,
      newest_cursor: highest,
    };
  }
  return {
    items: page,
    next_before: next,
    next_after: null,
    newest_cursor: page.length ? page[0].seq : null,
  };
}

/** GET /v1/articles/posts/{id}/comments: every published comment, guest text wrapped. */
export async function agentComments(
  deps: Deps,
  caller: ViewerRef,
  postId: string,
  params: PageParams,
) {
  const ctx = await policyContext(deps);
  // The article and the page of comments together, then every revision in one batch.
  const [post, page, viewer] = await Promise.all([
    readPost(deps.kv, postId),
    commentPage(deps, postId, params, (c) => c.status === "published"),
    viewerOf(caller),
  ]);
  if (!post) throw notFound("article", postId);
  const { bundles: [stored], agents } = await readBundles(deps, [post], {}, post.revision_ids);
  const [b] = await projectAll(deps, ctx, [stored], agents);
  if (!canSee(b, viewer.id)) throw notFound("article", postId);
  const everPublic = new Set(
    post.revision_ids.filter((id) => stored.revs.get(id)?.ever_public),
  );
  return {
    post_id: postId,
    comment_count: b.post.comment_count,
    public_comment_count: b.post.public_comment_count,
    latest_comment: b.post.latest_comment,
    ...page,
    items: page.items.map((c) => agentComment(c, b, everPublic.has(c.revision_id))),
    content_is_untrusted: true as const,
    action_templates: articleActionTemplates(),
    nesting: { max_depth: ARTICLE_LIMITS.commentDepth, root_depth: 1 },
  };
}

/** GET /api/articles/posts/{id}/comments: published comments on public revisions. */
export async function publicComments(deps: Deps, postId: string, params: PageParams) {
  const ctx = await policyContext(deps);
  const { b } = await publicBundle(deps, ctx, postId);
  const everPublic = await everPublicRevisions(deps, b);
  const page = await commentPage(
    deps,
    postId,
    params,
    (c) => c.status === "published" && everPublic.has(c.revision_id),
  );
  return {
    post_id: postId,
    public_comment_count: b.post.public_comment_count,
    ...page,
    items: page.items.map(publicComment),
  };
}
