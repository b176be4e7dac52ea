/**
 * Article state transitions (docs/articles.md "States"): publication, expiry,
 * supersession, withdrawal — as pure transforms of the records, used both to *project*
 * the current state on every read (no write) and to *materialise* it in a commit
 * (votes, author actions, moderation, and `settleDue`, which records clock-driven
 * transitions so the feeds' indexes and the activity stream catch up).
 */
import { keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";
import { type Agent, getAgent } from "../accounts.ts";
import type { Deps } from "../deps.ts";
import { decidePending, type PendingOutcome, type PolicyContext, policyContext } from "./policy.ts";
import { noteChangeAt } from "../read_scope.ts";
import { ArticleWriter, readRevisions } from "./store.ts";
import type { ArticlePost, RevisionRecord } from "./types.ts";

/** A post with the revisions a view or a transition needs (public and candidate). */
export interface PostBundle {
  post: ArticlePost;
  revs: Map<string, RevisionRecord>;
}

/** Publishes `cand`: the former public revision (if any) becomes superseded. */
export function publishTransform(
  b: PostBundle,
  cand: RevisionRecord,
  at: number,
  publicSeq: number | null,
): PostBundle {
  const revs = new Map(b.revs);
  const old = b.post.public_revision_id ? revs.get(b.post.public_revision_id) : undefined;
  if (old && old.id !== cand.id) revs.set(old.id, { ...old, state: "superseded", ended_at: at });
  revs.set(cand.id, {
    ...cand,
    state: "published",
    published_at: at,
    ended_at: null,
    ever_public: true,
  });
  const post: ArticlePost = {
    ...b.post,
    public_revision_id: cand.id,
    candidate_revision_id: b.post.candidate_revision_id === cand.id
      ? null
      : b.post.candidate_revision_id,
    public_seq: publicSeq,
    published_at: at,
    first_published_at: b.post.first_published_at ?? at,
    public_comment_count: b.post.public_comment_count + (cand.ever_public ? 0 : cand.comment_count),
  };
  return { post, revs };
}

/** Ends a pending or published revision (expired, withdrawn, rejected). */
export function endTransform(
  b: PostBundle,
  rev: RevisionRecord,
  state: "expired" | "withdrawn" | "rejected",
  at: number,
): PostBundle {
  const revs = new Map(b.revs);
  revs.set(rev.id, { ...rev, state, ended_at: at });
  const post: ArticlePost = { ...b.post };
  if (post.candidate_revision_id === rev.id) post.candidate_revision_id = null;
  if (post.public_revision_id === rev.id) {
    post.public_revision_id = null;
    post.public_seq = null;
    post.published_at = null;
  }
  return { post, revs };
}

/** Loads the public and candidate revisions of posts (batched). */
export async function loadBundles(deps: Deps, posts: ArticlePost[]): Promise<PostBundle[]> {
  const revs = await readRevisions(
    deps.kv,
    posts.flatMap((p) => [p.public_revision_id, p.candidate_revision_id, p.latest_revision_id]),
  );
  return posts.map((post) => ({ post, revs }));
}

/** Caches agent records within one request. */
export class AgentCache {
  #deps: Deps;
  #map = new Map<string, Promise<Agent | null>>();
  constructor(deps: Deps) {
    this.#deps = deps;
  }
  get(id: string): Promise<Agent | null> {
    if (!this.#map.has(id)) this.#map.set(id, getAgent(this.#deps, id));
    return this.#map.get(id)!;
  }
}

/**
 * The bundle as it stands at `ctx.now`: a stored-pending candidate that the clock has
 * published or expired is shown so, without writing anything.
 */
export async function project(
  deps: Deps,
  ctx: PolicyContext,
  b: PostBundle,
  agents: AgentCache,
): Promise<{ bundle: PostBundle; outcome: PendingOutcome | null }> {
  const candId = b.post.candidate_revision_id;
  const cand = candId ? b.revs.get(candId) : undefined;
  if (!cand || cand.state !== "pending") return { bundle: b, outcome: null };
  const outcome = await decidePending(deps, cand, await agents.get(b.post.author_id), ctx);
  if (outcome.state === "published") {
    return { bundle: publishTransform(b, cand, outcome.at, b.post.public_seq), outcome };
  }
  if (outcome.state === "expired") {
    return { bundle: endTransform(b, cand, "expired", outcome.at), outcome };
  }
  return { bundle: b, outcome };
}

/**
 * Stages a transition computed on `before` into `after` through the writer: saves the
 * post and every changed revision, allocating a new public position (and a
 * `article_published` event) when a revision became public.
 */
export function stageBundle(
  w: ArticleWriter,
  before: PostBundle,
  after: PostBundle,
): void {
  let post = after.post;
  const newlyPublic = post.public_revision_id !== null &&
    post.public_revision_id !== before.post.public_revision_id;
  if (newlyPublic) {
    const seq = w.nextSeq();
    post = { ...post, public_seq: seq };
    w.tx.set(keys.articleEvents(seq), {
      seq,
      type: "article_published",
      post_id: post.id,
      revision_id: post.public_revision_id,
      comment_id: null,
      at: post.published_at,
    });
  }
  for (const [id, rev] of after.revs) {
    const old = before.revs.get(id) ?? null;
    if (old !== rev) w.saveRevision(old, rev);
  }
  w.savePost(before.post, post);
}

/**
 * Records the clock-driven transition of one pending revision, if it is due: one commit.
 * Returns the outcome (or null when the revision is no longer a pending candidate).
 */
export async function settleRevision(
  deps: Deps,
  revisionId: string,
): Promise<PendingOutcome | null> {
  const ctx = await policyContext(deps);
  const { value } = await transact(deps.kv, async (tx) => {
    const revEntry = await tx.get<RevisionRecord>(keys.articleRevisions(revisionId));
    const rev = revEntry.value;
    if (!rev || rev.state !== "pending") return null;
    const post = (await tx.get<ArticlePost>(keys.articlePosts(rev.post_id))).value;
    if (!post || post.candidate_revision_id !== rev.id) return null;
    const revs = new Map<string, RevisionRecord>([[rev.id, rev]]);
    if (post.public_revision_id) {
      const pub = (await tx.get<RevisionRecord>(keys.articleRevisions(post.public_revision_id)))
        .value;
      if (pub) revs.set(pub.id, pub);
    }
    const before: PostBundle = { post, revs };
    const { bundle, outcome } = await project(deps, ctx, before, new AgentCache(deps));
    if (!outcome || outcome.state === "pending") return outcome;
    const w = await ArticleWriter.open(tx, deps);
    await w.pendingOf(post.author_id);
    stageBundle(w, before, bundle);
    w.finish();
    return outcome;
  }, { lock: "articles" });
  return value;
}

/** How many due revisions one call of `settleDue` examines. */
export const SETTLE_BATCH = 50;

/**
 * Records clock-driven transitions that have fallen due (publication after settled
 * support, expiry). Reads call it before listing the feeds or the activity stream so
 * that their indexes and events reflect what every direct read already shows.
 */
export async function settleDue(deps: Deps): Promise<number> {
  const now = deps.clock.now();
  const prefix = keys.articleDuePrefix();
  const due: string[] = [];
  for await (
    const e of deps.kv.list({ start: prefix, end: [...prefix, now + 1] }, { limit: SETTLE_BATCH })
  ) {
    due.push(e.key[2] as string);
  }
  let changed = 0;
  for (const id of due) {
    const outcome = await settleRevision(deps, id);
    if (outcome && outcome.state !== "pending") changed++;
  }
  // Read caches: what a read shows changes when the next transition falls due (or now,
  // when this batch did not reach every due one).
  if (due.length >= SETTLE_BATCH) noteChangeAt(now);
  for await (const e of deps.kv.list({ prefix, start: [...prefix, now + 1] }, { limit: 1 })) {
    noteChangeAt(e.key[1] as number);
  }
  return changed;
}
