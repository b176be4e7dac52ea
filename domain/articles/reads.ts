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
import { excerptSource, excerptSources } from "./excerpts.ts";
import { dueWindow, projectWindow, publishesAt, statsDelta } from "./due_window.ts";
import { AgentCache, loadBundles, type PostBundle, project } from "./lifecycle.ts";
import { ARTICLE_LIMITS } from "./limits.ts";
import { type PolicyContext, policyContext, publicationObject } from "./policy.ts";
import { viewerArticleVotes } from "./recommendations.ts";
import { articleSourceText, embeddedFigures, figureViewUrl, renderArticleHtml } from "./render.tsx";
import { EMPTY_STATS, readBlocks, readPosts, readRevisions } from "./store.ts";
import type { Block, CommentRecord, PublicIndexValue, RevisionRecord } from "./types.ts";
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

/** Posts' bundles projected to now (`slots`: see `project`). */
export async function projectedBundles(
  deps: Deps,
  ctx: PolicyContext,
  postIds: string[],
  slots?: ReadonlyMap<string, number>,
): Promise<PostBundle[]> {
  const posts = await readPosts(deps.kv, postIds);
  const bundles = await loadBundles(deps, postIds.map((id) => posts.get(id)).filter((p) => !!p));
  const agents = new AgentCache(deps);
  return await Promise.all(
    bundles.map(async (b) => (await project(deps, ctx, b, agents, slots)).bundle),
  );
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

/** The stored counters a feed's summary starts from, and the named board's head. */
interface SummaryReads {
  stats: Deno.KvEntryMaybe<typeof EMPTY_STATS>;
  /** Null when the board's head could not be read. */
  boardHead: { seq: number } | null | undefined;
}

/** Reads what `feedSummary` needs, in one round trip. */
async function readSummary(
  deps: Deps,
  consistency: Deno.KvConsistencyLevel,
): Promise<SummaryReads> {
  const [stats, boardHead] = await Promise.all([
    deps.kv.get(keys.articleStats(), { consistency }),
    deps.kv.get(keys.boardHeads("named"), { consistency }).then(
      (e) => e.value ?? { seq: 0 },
      () => null,
    ),
  ]);
  return { stats, boardHead };
}

/**
 * Current public counters, with the named board's message counter (null when unreadable).
 * `due` is how the due transitions not yet recorded move the stored counters.
 */
function feedSummary(read: SummaryReads, due = { published: 0, awaiting: 0 }) {
  const stored = read.stats.value ?? EMPTY_STATS;
  return {
    message_count: read.boardHead ? read.boardHead.seq : null,
    published_posts: Math.max(0, stored.published_posts + due.published),
    awaiting_review_posts: Math.max(0, stored.awaiting_review_posts + due.awaiting),
  };
}

/**
 * Lists post ids of an index newest first, below `before`: first `top` (positions above
 * the stored ones, newest first), then the index below `end` (exclusive, when given).
 * `revisionAt`: the revision an entry of the public index names, by position.
 */
async function listIds(
  kv: Deno.Kv,
  prefix: Deno.KvKey,
  params: { before?: number; limit: number },
  top: Array<[number, string]> = [],
  end?: number,
  consistency: Deno.KvConsistencyLevel = "strong",
): Promise<{ ids: Array<[number, string]>; more: boolean; revisionAt: Map<number, string> }> {
  const revisionAt = new Map<number, string>();
  const upper = Math.min(params.before ?? Infinity, end ?? Infinity);
  const ids = top.filter(([seq]) => seq < (params.before ?? Infinity)).slice(0, params.limit + 1);
  const selector: Deno.KvListSelector = upper !== Infinity
    ? { prefix, end: [...prefix, upper] }
    : { prefix };
  if (ids.length <= params.limit) {
    for await (
      const e of kv.list<PublicIndexValue>(selector, {
        reverse: true,
        limit: params.limit + 1 - ids.length,
        consistency,
      })
    ) {
      const seq = e.key[e.key.length - 1] as number;
      if (typeof e.value === "string") ids.push([seq, e.value]);
      else {
        ids.push([seq, e.value.post_id]);
        revisionAt.set(seq, e.value.revision_id);
      }
    }
  }
  return { ids: ids.slice(0, params.limit), more: ids.length > params.limit, revisionAt };
}

/** GET /v1/articles/posts: the agent feed (others' visible articles and all one's own). */
export async function agentFeed(deps: Deps, viewer: Agent, params: PageParams) {
  if (params.after !== undefined) {
    throw new BoardError(
      "INVALID_CURSOR",
      'The article feed pages with "before" (use next_before); poll the articles activity with "after".',
      { parameter: "after" },
    );
  }
  const ctx = await policyContext(deps);
  const { ids, more } = await listIds(deps.kv, keys.articlePostIdBySeq.range(), params);
  const bundles = await projectedBundles(deps, ctx, ids.map(([, id]) => id));
  const visible = bundles.filter((b) => canSee(b, viewer.id));
  const reads = visible.map((b) => {
    const rid = defaultRevisionId(b.post, viewer.id);
    return b.revs.get(rid)!;
  });
  const votes = await viewerArticleVotes(deps, viewer.id, reads.map((r) => r.id));
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
export async function agentArticle(deps: Deps, viewer: Agent, postId: string, revisionId?: string) {
  const ctx = await policyContext(deps);
  const [b] = await projectedBundles(deps, ctx, [postId]);
  if (!b || !canSee(b, viewer.id)) throw notFound("article", postId);
  const rid = revisionId ?? defaultRevisionId(b.post, viewer.id);
  if (!b.post.revision_ids.includes(rid)) throw notFound("article revision", rid);
  let read = b.revs.get(rid);
  if (!read) read = (await readRevisions(deps.kv, [rid])).get(rid);
  if (!read) throw notFound("article revision", rid);
  if (viewer.id !== b.post.author_id && !revisionReadable(read)) {
    throw notFound("article revision", rid);
  }
  const votes = await viewerArticleVotes(deps, viewer.id, [read.id]);
  const { blocks } = await blocksWithSvg(deps, read);
  return {
    article: { ...agentRow(b, read, viewer.id, votes.get(read.id) ?? null), blocks },
    content_is_untrusted: true as const,
    action_templates: articleActionTemplates(),
    publication: publicationObject(ctx),
  };
}

/** A revision's text parts, listed by the revision's prefix (so known from its id alone). */
export async function revisionParts(
  kv: Deno.Kv,
  revisionId: string,
  consistency: Deno.KvConsistencyLevel = "strong",
): Promise<string[]> {
  const listed = await Array.fromAsync(
    kv.list<string>({ prefix: keys.articleRevisionParts.range(revisionId) }, { consistency }),
  );
  return listed.map((e) => e.value);
}

/** A public article as the public sees it now (`publicArticleText`). */
export interface PublicArticleText {
  bundle: PostBundle;
  /** The revision shown (the current public one). */
  rev: RevisionRecord;
  blocks: Block[];
  /** The revisions that have been public: their published comments are public. */
  everPublic: Set<string>;
}

/**
 * A public article with its current text (`blocks` empty unless `withText`), or 404
 * NOT_FOUND: the post, then all its revisions and the stored public revision's parts in one batch (a third read only when the clock has
 * published a newer revision than the stored one). Start reads that do not need the article
 * before calling it, so that they share its first round trip.
 */
export async function publicArticleText(
  deps: Deps,
  postId: string,
  consistency: Deno.KvConsistencyLevel = "strong",
  withText = true,
): Promise<PublicArticleText> {
  const ctx = await policyContext(deps);
  const post = (await deps.kv.get(keys.articlePosts(postId), { consistency })).value;
  if (!post) throw notFound("article", postId);
  const ids = [...new Set(post.revision_ids)];
  const [revList, parts] = await Promise.all([
    readMany(deps.kv, ids.map((id) => keys.articleRevisions(id)), { consistency }),
    post.public_revision_id && withText
      ? revisionParts(deps.kv, post.public_revision_id, consistency)
      : [],
  ]);
  const revs = new Map<string, RevisionRecord>();
  for (const e of revList) if (e.value) revs.set(e.value.id, e.value);
  const { bundle } = await project(deps, ctx, { post, revs }, new AgentCache(deps));
  if (!canSee(bundle, null)) throw notFound("article", postId);
  const rev = bundle.revs.get(bundle.post.public_revision_id!)!;
  const everPublic = new Set(
    [...bundle.revs.values()].filter((r) => r.ever_public).map((r) => r.id),
  );
  if (!withText) return { bundle, rev, blocks: [], everPublic };
  const text = rev.id === post.public_revision_id
    ? parts
    : await revisionParts(deps.kv, rev.id, consistency);
  if (text.length !== rev.parts) throw new Error(`revision ${rev.id} content is incomplete`);
  return { bundle, rev, blocks: JSON.parse(text.join("")), everPublic };
}

/**
 * GET /api/articles/feed: published articles, newest publication first. A due
 * publication not yet recorded is listed at the position it will be recorded at.
 */
export async function publicFeed(deps: Deps, params: PageParams) {
  return (await publicFeedPage(deps, params, { excerpts: false, consistency: "strong" })).feed;
}

/**
 * `publicFeed` with the excerpt sources of its items (`excerptSource` by revision id) for the
 * website, planned in round trips: the due index, the feed's index (as if nothing were due,
 * the usual case; listed again when something is) and the counters; then the articles; then
 * their revisions and, at the same time, the text of each stored public revision.
 */
export async function publicFeedPage(
  deps: Deps,
  params: PageParams,
  opts: { excerpts: boolean; consistency: Deno.KvConsistencyLevel },
) {
  const { consistency } = opts;
  const ctx = await policyContext(deps);
  const prefix = keys.articlePublicPostIdBySeq.range();
  const [window, guess, summaryReads] = await Promise.all([
    dueWindow(deps, ctx.now),
    listIds(deps.kv, prefix, params, [], undefined, consistency),
    readSummary(deps, consistency),
  ]);
  const due = await projectWindow(deps, ctx, window);
  const top = due.filter(publishesAt).map((p): [number, string] => [p.slot.seq, p.slot.post_id])
    .reverse();
  const { ids, more, revisionAt } = window.slots.length === 0
    ? guess
    : await listIds(deps.kv, prefix, params, top, window.head + 1, consistency);
  // The index names each article's public revision: articles, revisions and texts together.
  const wanted = [...new Set(ids.map(([, id]) => id))];
  const named = [...new Set(revisionAt.values())];
  const [posts, namedRevs, texts] = await Promise.all([
    readMany(deps.kv, wanted.map((id) => keys.articlePosts(id)), { consistency }),
    readMany(deps.kv, named.map((id) => keys.articleRevisions(id)), { consistency }),
    opts.excerpts
      ? Promise.all(
        named.map(async (id) => [id, await revisionParts(deps.kv, id, consistency)] as const),
      )
      : [],
  ]);
  const found = posts.flatMap((e) => e.value ? [e.value] : []);
  const revs = new Map<string, RevisionRecord>();
  for (const e of namedRevs) if (e.value) revs.set(e.value.id, e.value);
  // Then only what the index did not name: an older entry's revision, a pending candidate
  // (the clock may publish or expire it: projected below, as every read does).
  const unnamed = [
    ...new Set(
      found.flatMap((p) => [p.public_revision_id, p.candidate_revision_id, p.latest_revision_id]),
    ),
  ].filter((id): id is string => !!id && !revs.has(id));
  if (unnamed.length) {
    const extra = await readMany(deps.kv, unnamed.map((id) => keys.articleRevisions(id)), {
      consistency,
    });
    for (const e of extra) if (e.value) revs.set(e.value.id, e.value);
  }
  const agents = new AgentCache(deps);
  const projected = await Promise.all(
    found.map(async (post) =>
      (await project(deps, ctx, { post, revs }, agents, window.seqOf)).bundle
    ),
  );
  const byId = new Map(projected.map((b) => [b.post.id, b]));
  // An entry is shown at the post's current position only (a projected publication moves it).
  const bundles = ids.flatMap(([seq, id]) => {
    const b = byId.get(id);
    return b && canSee(b, null) && b.post.public_seq === seq ? [b] : [];
  });
  const sources = new Map<string, string>();
  if (opts.excerpts) {
    const stored = new Map<string, string[]>(texts);
    // A revision the clock published since (not the stored public one): its text now.
    const missing = bundles.map((b) => b.post.public_revision_id!).filter((id) => !stored.has(id));
    for (const [id, text] of await excerptSources(deps, missing)) sources.set(id, text);
    for (const b of bundles) {
      const rev = b.revs.get(b.post.public_revision_id!)!;
      const parts = stored.get(rev.id);
      if (parts && parts.length === rev.parts) {
        sources.set(rev.id, excerptSource(JSON.parse(parts.join("")) as Block[]));
      }
    }
  }
  const feed = {
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
    summary: feedSummary(summaryReads, statsDelta(due)),
  };
  return { feed, sources };
}

/**
 * GET /api/articles/posts/{id}: the current published revision, rendered. The newest
 * comments are listed while the article is read; the figures' sources come after the text.
 */
export async function publicArticle(
  deps: Deps,
  postId: string,
  consistency: Deno.KvConsistencyLevel = "strong",
) {
  const ctx = await policyContext(deps);
  const newest = Array.fromAsync(
    deps.kv.list<CommentRecord>({ prefix: keys.articleComments.range(postId) }, {
      reverse: true,
      limit: NEWEST_SCAN,
      consistency,
    }),
  );
  const { bundle: b, rev, blocks: raw, everPublic } = await publicArticleText(
    deps,
    postId,
    consistency,
  ).catch(async (e) => {
    await newest.catch(() => {});
    throw e;
  });
  const svgs = await svgSources(deps, rev.asset_ids, consistency);
  const blocks = raw.map((
    x,
  ) => (x.type === "svg" ? { ...x, svg: svgs.get(x.asset_id) ?? null } : x));
  const latest = (await newest).map((e) => e.value)
    .find((c) => c.status === "published" && everPublic.has(c.revision_id)) ?? null;
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

/** How many of an article's newest comment records `publicArticle` looks through. */
const NEWEST_SCAN = 500;

/** GET /api/articles/posts/{id}/source: the canonical text and sanitised SVG sources. */
export async function publicSource(deps: Deps, postId: string) {
  const { bundle: b, rev, blocks: raw } = await publicArticleText(deps, postId);
  const svgs = await svgSources(deps, rev.asset_ids);
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
  keepOrLater: ((c: CommentRecord) => boolean) | Promise<(c: CommentRecord) => boolean>,
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
  // The first batch is asked for at once, while what decides `keep` may still be read.
  const first = iter.next();
  const keep = await Promise.resolve(keepOrLater).catch(async (e) => {
    await first.catch(() => {});
    throw e;
  });
  for (let r = await first; !r.done; r = await iter.next()) {
    const e = r.value;
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
export async function agentComments(deps: Deps, viewer: Agent, postId: string, params: PageParams) {
  const ctx = await policyContext(deps);
  const [b] = await projectedBundles(deps, ctx, [postId]);
  if (!b || !canSee(b, viewer.id)) throw notFound("article", postId);
  const everPublic = await everPublicRevisions(deps, b);
  const page = await commentPage(deps, postId, params, (c) => c.status === "published");
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
  // The comments are listed while the article and its revisions are read.
  const article = publicArticleText(deps, postId, "strong", false);
  const page = await commentPage(
    deps,
    postId,
    params,
    article.then(({ everPublic }) => (c: CommentRecord) =>
      c.status === "published" && everPublic.has(c.revision_id)
    ),
  );
  const b = (await article).bundle;
  return {
    post_id: postId,
    public_comment_count: b.post.public_comment_count,
    ...page,
    items: page.items.map(publicComment),
  };
}
