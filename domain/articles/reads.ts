/**
 * Reading articles: the agent feed and article read (`/v1/articles/posts…`) and the
 * public reads for human readers (`/api/articles/…`). Every read projects clock-driven
 * transitions (policy.ts) so it shows the state as of now, and writes nothing: the public
 * feed and its counters add the due transitions not yet recorded (due_window.ts).
 */
import { keys } from "../../kv/keys.ts";
import { listTyped, readMany, type TypedListSelector } from "../../kv/read_many.ts";
import type { Typed } from "../../kv/key_values.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import type { PageParams } from "../paging.ts";
import { svgSources } from "./assets.ts";
import { excerptSource, excerptSources } from "./excerpts.ts";
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
import { AgentCache, type PostBundle, project } from "./lifecycle.ts";
import { ARTICLE_LIMITS } from "./article_limits.ts";
import { type PolicyContext, policyContext, publicationObject } from "./policy.ts";
import { viewerArticleVotes } from "./recommendations.ts";
import { articleSourceText, embeddedFigures, figureViewUrl, renderArticleHtml } from "./render.tsx";
import {
  EMPTY_STATS,
  feedEntryPost,
  namedFigures,
  readPost,
  readPosts,
  readRevisions,
} from "./store.ts";
import type {
  ArticlePost,
  Block,
  CommentRecord,
  PublicIndexValue,
  RevisionRecord,
} from "./types.ts";
import {
  agentComment,
  agentLatestComment,
  articleActions,
  articleActionTemplates,
  articleState,
  defaultRevisionId,
  publicComment,
  publishedAt,
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
    latest_comment: agentLatestComment(b.post.latest_comment),
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
async function listIds<V>(
  kv: Deno.Kv,
  prefix: Deno.KvKey & Typed<V>,
  params: { before?: number; limit: number },
  top: Array<[number, V]> = [],
  end?: number,
  consistency: Deno.KvConsistencyLevel = "strong",
): Promise<{ ids: Array<[number, V]>; more: boolean }> {
  const upper = Math.min(params.before ?? Infinity, end ?? Infinity);
  const ids = top.filter(([seq]) => seq < (params.before ?? Infinity)).slice(0, params.limit + 1);
  const selector: TypedListSelector<typeof prefix> = upper !== Infinity
    ? { prefix, end: [...prefix, upper] }
    : { prefix };
  if (ids.length <= params.limit) {
    for await (
      const e of listTyped(kv, selector, {
        reverse: true,
        limit: params.limit + 1 - ids.length,
        consistency,
      })
    ) {
      ids.push([e.key[e.key.length - 1] as number, e.value]);
    }
  }
  return { ids: ids.slice(0, params.limit), more: ids.length > params.limit };
}

/**
 * `listIds` over the public index, whose entries name their article and (since they were
 * kept) its public revision: the ids, and the revision of each entry that names one.
 */
async function listPublicIds(
  kv: Deno.Kv,
  prefix: Deno.KvKey & Typed<PublicIndexValue>,
  params: { before?: number; limit: number },
  top: Array<[number, string]> = [],
  end?: number,
  consistency: Deno.KvConsistencyLevel = "strong",
): Promise<{ ids: Array<[number, string]>; more: boolean; revisionAt: Map<number, string> }> {
  const listed = await listIds(kv, prefix, params, top, end, consistency);
  const revisionAt = new Map<number, string>();
  const ids = listed.ids.map(([seq, v]): [number, string] => {
    if (typeof v === "string") return [seq, v];
    revisionAt.set(seq, v.revision_id);
    return [seq, v.post_id];
  });
  return { ids, more: listed.more, revisionAt };
}

/**
 * The `before` of the page above a page listed `before` a seq: the `limit` public index entries
 * at and above that seq, so the page after it again is the one it was reached from; null when
 * those are the newest (the first page). Publications not yet recorded count only there.
 */
async function newerPageBefore(
  kv: Deno.Kv,
  prefix: Deno.KvKey & Typed<PublicIndexValue>,
  before: number,
  limit: number,
  consistency: Deno.KvConsistencyLevel,
): Promise<number | null> {
  const above: number[] = [];
  const selector = { prefix, start: [...prefix, before] };
  for await (const e of listTyped(kv, selector, { limit: limit + 1, consistency })) {
    above.push(e.key[e.key.length - 1] as number);
  }
  return above.length > limit ? above[limit] : null;
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
    listIds(deps.kv, keys.articlePostIdBySeq.range(), params),
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
 * one batch reads the revisions, the caller's vote, the revision's blocks (listed) and the
 * sources of its figures, which the post names (`namedFigures`); a revision the post does
 * not name them for (written before) has its figures read after its record, one round trip
 * more. What the caller read already (`known`: revisions, the blocks of `revisionId` and its
 * figures' sources, null when they were not read, the caller's vote on it, the authors) is
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
    svgs: Map<string, string> | null;
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
  let plannedSvgs: Map<string, string> | null;
  let plannedVote: 1 | -1 | null;
  if (known && missing.length === 0 && revisionId !== undefined) {
    stored = { post, revs: new Map(known.revs) };
    [agents, plannedParts, plannedSvgs, plannedVote] = [
      known.agents,
      known.parts,
      known.svgs,
      known.vote,
    ];
  } else {
    const figures = inPost ? namedFigures(post, planned) : null;
    const [read, parts, svgs] = await Promise.all([
      readBundles(deps, [post], { vote: keys.articleVotes(planned, viewer.id) }, missing),
      inPost ? listBlockParts(deps.kv, planned) : Promise.resolve([]),
      figures ? listSvgSources(deps.kv, figures) : null,
    ]);
    const revs = new Map(known?.revs ?? []);
    for (const [id, rev] of read.bundles[0].revs) revs.set(id, rev);
    stored = { post, revs };
    [agents, plannedParts, plannedSvgs, plannedVote] = [
      read.agents,
      parts,
      svgs,
      read.got.vote.value?.value ?? null,
    ];
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
  // The revision's figures are listed with its blocks when the post named them, else now.
  const figuresOf = (rev: RevisionRecord) => listSvgSources(deps.kv, rev.asset_ids);
  const [vote, parts, named] = rid === planned
    ? [plannedVote, plannedParts, plannedSvgs]
    : await Promise.all([
      viewerArticleVotes(deps, viewer.id, [rid]).then((v) => v.get(rid) ?? null),
      listBlockParts(deps.kv, rid),
      figuresOf(read),
    ]);
  const raw = blocksFromParts(read, parts);
  const svgs = named ?? await figuresOf(read);
  const svgOf = (id: string): string | null => svgs.get(id) ?? null;
  const blocks = raw.map((x) => (x.type === "svg" ? { ...x, svg: svgOf(x.asset_id) } : x));
  return { ...agentRow(b, read, viewer.id, vote), blocks };
}

/** A revision's text parts, listed by the revision's prefix (so known from its id alone). */
async function revisionParts(
  kv: Deno.Kv,
  revisionId: string,
  consistency: Deno.KvConsistencyLevel = "strong",
): Promise<string[]> {
  const listed = await Array.fromAsync(
    listTyped(kv, { prefix: keys.articleRevisionParts.range(revisionId) }, { consistency }),
  );
  return listed.map((e) => e.value);
}

/** A public article as the public sees it now (`publicArticleText`). */
interface PublicArticleText {
  bundle: PostBundle;
  /** The revision shown (the current public one). */
  rev: RevisionRecord;
  blocks: Block[];
  /** The sanitised sources of its figures by asset id (empty unless `withFigures`). */
  svgs: Map<string, string>;
  /** The revisions that have been public: their published comments are public. */
  everPublic: Set<string>;
}

/**
 * A public article with its current text (`blocks` empty unless `withText`) and the sources
 * of its figures (`svgs`, only `withFigures`), or 404 NOT_FOUND: the post, then all its
 * revisions, the stored public revision's parts and its figures (which the post names,
 * `namedFigures`) in one batch. A third read only when the clock has published a newer
 * revision than the stored one, or for the figures of a revision the post does not name
 * them for (written before). Start reads that do not need the article before calling it, so
 * that they share its first round trip.
 */
export async function publicArticleText(
  deps: Deps,
  postId: string,
  consistency: Deno.KvConsistencyLevel = "strong",
  withText = true,
  withFigures = false,
): Promise<PublicArticleText> {
  const ctx = await policyContext(deps);
  const post = (await deps.kv.get(keys.articlePosts(postId), { consistency })).value;
  if (!post) throw notFound("article", postId);
  const ids = [...new Set(post.revision_ids)];
  const storedId = post.public_revision_id;
  const figures = storedId && withFigures ? namedFigures(post, storedId) : null;
  const [revList, parts, svgs] = await Promise.all([
    readMany(deps.kv, ids.map((id) => keys.articleRevisions(id)), { consistency }),
    storedId && withText ? revisionParts(deps.kv, storedId, consistency) : [],
    figures ? svgSources(deps, figures, consistency) : null,
  ]);
  const revs = new Map<string, RevisionRecord>();
  for (const e of revList) if (e.value) revs.set(e.value.id, e.value);
  const { bundle } = await project(deps, ctx, { post, revs }, new AgentCache(deps));
  if (!canSee(bundle, null)) throw notFound("article", postId);
  const rev = bundle.revs.get(bundle.post.public_revision_id!)!;
  const everPublic = new Set(
    [...bundle.revs.values()].filter((r) => r.ever_public).map((r) => r.id),
  );
  const none = new Map<string, string>();
  if (!withText) return { bundle, rev, blocks: [], svgs: none, everPublic };
  const stored = rev.id === storedId;
  const [text, shown] = await Promise.all([
    stored ? parts : revisionParts(deps.kv, rev.id, consistency),
    !withFigures ? none : stored && svgs ? svgs : svgSources(deps, rev.asset_ids, consistency),
  ]);
  if (text.length !== rev.parts) throw new Error(`revision ${rev.id} content is incomplete`);
  return { bundle, rev, blocks: JSON.parse(text.join("")), svgs: shown, everPublic };
}

/**
 * GET /api/articles/feed: published articles, newest publication first. A due
 * publication not yet recorded is listed at the position it will be recorded at.
 */
export async function publicFeed(deps: Deps, params: PageParams) {
  return (await publicFeedPage(deps, params, { excerpts: false, consistency: "strong" })).feed;
}

/**
 * Listings a public page reads past articles no longer public, to fill the page: an index
 * entry of a store written before such articles left the index, or a publication that moved.
 */
const MAX_REFILLS = 3;

/**
 * `publicFeed` with the excerpt sources of its items (`excerptSource` by revision id) for the
 * website, planned in round trips: the due index, the feed's index (as if nothing were due,
 * the usual case; listed again when something is) and the counters; then the articles; then
 * their revisions and, at the same time, the text of each stored public revision. An entry
 * whose article is not public (one a store written before kept) is skipped, and the page
 * listed on below it, so that a page holds `limit` articles while there are more.
 */
export async function publicFeedPage(
  deps: Deps,
  params: PageParams,
  opts: { excerpts: boolean; consistency: Deno.KvConsistencyLevel; newer?: boolean },
) {
  const { consistency } = opts;
  const ctx = await policyContext(deps);
  const prefix = keys.articlePublicPostIdBySeq.range();
  const [window, guess, summaryReads, newer] = await Promise.all([
    dueWindow(deps, ctx.now),
    listPublicIds(deps.kv, prefix, params, [], undefined, consistency),
    readSummary(deps, consistency),
    opts.newer && params.before !== undefined
      ? newerPageBefore(deps.kv, prefix, params.before, params.limit, consistency)
      : undefined,
  ]);
  const due = await projectWindow(deps, ctx, window);
  const top = due.filter(publishesAt).map((p): [number, string] => [p.slot.seq, p.slot.post_id])
    .reverse();
  const list = (page: { before?: number; limit: number }) =>
    listPublicIds(deps.kv, prefix, page, top, window.head + 1, consistency);
  let listed = window.slots.length === 0 ? guess : await list(params);
  const bundles: PostBundle[] = [];
  const sources = new Map<string, string>();
  for (let refills = 0;; refills++) {
    const shown = await publicBundles(deps, ctx, window.seqOf, listed, opts);
    bundles.push(...shown.bundles);
    for (const [id, text] of shown.sources) sources.set(id, text);
    const left = params.limit - bundles.length;
    if (left <= 0 || !listed.more || !listed.ids.length || refills === MAX_REFILLS) break;
    listed = await list({ before: listed.ids[listed.ids.length - 1][0], limit: left });
  }
  const { ids, more } = listed;
  const feed = {
    items: bundles.map((b) => {
      const rev = b.revs.get(b.post.public_revision_id!)!;
      return {
        id: b.post.id,
        revision_id: rev.id,
        title: rev.title,
        author: b.post.author,
        published_at: publishedAt(rev),
        first_published_at: b.post.first_published_at ?? publishedAt(rev),
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
  // With `newer` on a page past the first: the `before` of the page above (null: the first).
  return { feed, sources, newer };
}

/**
 * The public articles of listed index entries (`listPublicIds`), with their excerpt sources
 * when asked: the articles, their revisions and the texts the index names in one batch; then
 * only what it did not name. An entry is shown at the post's current position only (a
 * projected publication moves it), and only while the article is public.
 */
async function publicBundles(
  deps: Deps,
  ctx: PolicyContext,
  seqOf: ReadonlyMap<string, number>,
  listed: { ids: Array<[number, string]>; revisionAt: Map<number, string> },
  opts: { excerpts: boolean; consistency: Deno.KvConsistencyLevel },
): Promise<{ bundles: PostBundle[]; sources: Map<string, string> }> {
  const { consistency } = opts;
  const { ids, revisionAt } = listed;
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
    found.map(async (post) => (await project(deps, ctx, { post, revs }, agents, seqOf)).bundle),
  );
  const byId = new Map(projected.map((b) => [b.post.id, b]));
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
  return { bundles, sources };
}

/**
 * GET /api/articles/posts/{id}: the current published revision, rendered. The newest
 * comments are listed while the article is read; the figures' sources are read with the text.
 */
export async function publicArticle(
  deps: Deps,
  postId: string,
  consistency: Deno.KvConsistencyLevel = "strong",
) {
  const ctx = await policyContext(deps);
  const newest = Array.fromAsync(
    listTyped(deps.kv, { prefix: keys.articleComments.range(postId) }, {
      reverse: true,
      limit: NEWEST_SCAN,
      consistency,
    }),
  );
  const { bundle: b, rev, blocks: raw, svgs, everPublic } = await publicArticleText(
    deps,
    postId,
    consistency,
    true,
    true,
  ).catch(async (e) => {
    await newest.catch(() => {});
    throw e;
  });
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
      published_at: publishedAt(rev),
      first_published_at: b.post.first_published_at ?? publishedAt(rev),
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
  const { bundle: b, rev, blocks: raw, svgs } = await publicArticleText(
    deps,
    postId,
    "strong",
    true,
    true,
  );
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
  const selector: TypedListSelector<typeof prefix> = newer
    ? { prefix, start: [...prefix, after + 1] }
    : before !== undefined
    ? { prefix, end: [...prefix, before] }
    : { prefix };
  // One listing read in batches; it stops as soon as one visible comment past the page is seen.
  const kept: CommentRecord[] = [];
  let scanned = 0;
  let lastSeq: number | null = null;
  const iter = listTyped(deps.kv, selector, {
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
    latest_comment: agentLatestComment(b.post.latest_comment),
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
