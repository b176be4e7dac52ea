/**
 * Article state transitions (docs/articles.md "States"): publication, expiry,
 * supersession, withdrawal — as pure transforms of the records, used both to *project*
 * the current state on every read (no write) and to *materialise* it in a commit
 * (votes, author actions, moderation, and `settleDue`, which records clock-driven
 * transitions so the feeds' indexes and the activity stream catch up — run by the
 * periodic sweep and before every article change, never by a read).
 */
import { keys } from "../../kv/keys.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import { type Agent, getAgent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import {
  type AuthorRef,
  decidePending,
  decisionNeedsAuthor,
  type PendingOutcome,
  type PolicyContext,
  policyContext,
} from "./policy.ts";
import { ArticleWriter, DueTransitionsFirst, firstDueEntry, readRevisions } from "./store.ts";
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

/**
 * Caches agent records within one request. `known` are records already read (the caller,
 * authors read in a planned batch): asking for one of them costs no round trip.
 */
export class AgentCache {
  #deps: Deps;
  #map = new Map<string, Promise<Agent | null>>();
  constructor(deps: Deps, known: Iterable<[string, Agent | null]> = []) {
    this.#deps = deps;
    for (const [id, agent] of known) this.#map.set(id, Promise.resolve(agent));
  }
  get(id: string): Promise<Agent | null> {
    if (!this.#map.has(id)) this.#map.set(id, getAgent(this.#deps, id));
    return this.#map.get(id)!;
  }
  /** Whether `id` is already known (read or being read). */
  has(id: string): boolean {
    return this.#map.has(id);
  }
}

/**
 * The author a decision on `post` needs: the account's creation time, from the copy on the
 * post when it has one, and the record itself only when the standard rule's clock parts are
 * met (its standing decides then): most decisions read no account.
 */
async function authorOf(post: ArticlePost, agents: AgentCache): Promise<AuthorRef> {
  const load = () => agents.get(post.author_id);
  if (post.author_created_at !== undefined && !agents.has(post.author_id)) {
    return { createdAt: post.author_created_at, load };
  }
  const agent = await load();
  return { createdAt: agent?.created_at ?? Infinity, load };
}

/**
 * The bundle as it stands at `ctx.now`: a stored-pending candidate that the clock has
 * published or expired is shown so, without writing anything. `slots` gives the
 * position a due, unrecorded transition will be recorded at (due_window.ts): a
 * projected publication shows that position as its `public_seq`.
 */
export async function project(
  deps: Deps,
  ctx: PolicyContext,
  b: PostBundle,
  agents: AgentCache,
  slots?: ReadonlyMap<string, number>,
): Promise<{ bundle: PostBundle; outcome: PendingOutcome | null }> {
  const candId = b.post.candidate_revision_id;
  const cand = candId ? b.revs.get(candId) : undefined;
  if (!cand || cand.state !== "pending") return { bundle: b, outcome: null };
  // The author is read only when the decision can turn on the author's standing.
  const author: AuthorRef = decisionNeedsAuthor(cand)
    ? await authorOf(b.post, agents)
    : { createdAt: Infinity, load: () => agents.get(b.post.author_id) };
  const outcome = await decidePending(deps, cand, author, ctx);
  if (outcome.state === "published") {
    const publicSeq = slots?.get(cand.id) ?? b.post.public_seq;
    return { bundle: publishTransform(b, cand, outcome.at, publicSeq), outcome };
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
      revision_id: post.public_revision_id!,
      comment_id: null,
      at: post.published_at!, // set with the public revision (publishTransform)
    });
  }
  for (const [id, rev] of after.revs) {
    const old = before.revs.get(id) ?? null;
    if (old !== rev) w.saveRevision(old, rev);
  }
  w.savePost(before.post, post);
}

/**
 * `stageBundle`, reading first (through the transaction) the author's pending count when the
 * change moves a revision into or out of `pending`: a change that does not reads nothing.
 */
export async function stageChange(
  w: ArticleWriter,
  before: PostBundle,
  after: PostBundle,
): Promise<void> {
  const moves = [...after.revs].some(([id, rev]) =>
    (before.revs.get(id)?.state === "pending") !== (rev.state === "pending")
  );
  if (moves) await w.pendingOf(after.post.author_id);
  stageBundle(w, before, after);
}

/** How long a revision whose support settled waits before its author's standing is looked at again. */
const STANDING_RECHECK = 15 * 60;

/** What recording the first due transition did. */
type SettleResult =
  | { kind: "recorded"; outcome: PendingOutcome | null }
  | { kind: "not_first" };

/**
 * Records the first due transition (the earliest entry of the due index, which must be
 * `entry`) in one commit. It takes the next position of the articles sequence whatever
 * it decides — the position every read has shown it at (due_window.ts): an
 * `article_published` event when the revision publishes, an empty position when it
 * expires or its author's standing does not allow it yet (then it is looked at again
 * `STANDING_RECHECK` later, or at its expiry if sooner).
 */
async function settleRevision(
  deps: Deps,
  entry: { due_at: number; revision_id: string },
): Promise<SettleResult> {
  const ctx = await policyContext(deps);
  const dueKey = keys.articleDue(entry.due_at, entry.revision_id);
  const { value } = await transact(deps.kv, async (tx): Promise<SettleResult> => {
    const rev = (await tx.get(keys.articleRevisions(entry.revision_id))).value;
    const post = rev ? (await tx.get(keys.articlePosts(rev.post_id))).value : null;
    const w = await ArticleWriter.open(tx, deps, { settling: true });
    const first = await firstDueEntry(tx.kv, ctx.now);
    if (first?.revision_id !== entry.revision_id || first.due_at !== entry.due_at) {
      return { kind: "not_first" };
    }
    const live = rev && post && rev.state === "pending" && rev.due_at === entry.due_at &&
      post.candidate_revision_id === rev.id;
    if (!live) {
      // A stale entry still took a position in every read: keep it empty.
      tx.delete(dueKey);
      w.nextSeq();
      w.finish();
      return { kind: "recorded", outcome: null };
    }
    const revs = new Map<string, RevisionRecord>([[rev.id, rev]]);
    if (post.public_revision_id) {
      const pub = (await tx.get(keys.articleRevisions(post.public_revision_id)))
        .value;
      if (pub) revs.set(pub.id, pub);
    }
    const before: PostBundle = { post, revs };
    const { bundle, outcome } = await project(deps, ctx, before, new AgentCache(deps));
    await w.pendingOf(post.author_id);
    if (outcome?.state === "published") {
      stageBundle(w, before, bundle); // the event takes the next position
    } else if (outcome?.state === "expired") {
      stageBundle(w, before, bundle);
      w.nextSeq();
    } else {
      // Settled support, but the author's standing does not allow it (yet).
      const dueAgain = Math.min(ctx.now + STANDING_RECHECK, rev.expires_at);
      w.saveRevision(rev, { ...rev, due_at: dueAgain });
      w.nextSeq();
    }
    w.finish();
    return { kind: "recorded", outcome };
  }, { lock: "articles" });
  return value;
}

/** At most this many due transitions are recorded by one call of `settleDue`. */
const SETTLE_MAX = 1000;

/**
 * Records the clock-driven transitions that have fallen due (publication after settled
 * support, expiry), first due first, each at the position reads have shown it at. Run by
 * the periodic sweep and by every article change before it takes a position
 * (`articleTransact`); reads never run it. Returns how many changed a revision's state.
 */
export async function settleDue(deps: Deps, max = SETTLE_MAX): Promise<number> {
  let changed = 0;
  for (let i = 0; i < max; i++) {
    const first = await firstDueEntry(deps.kv, deps.clock.now());
    if (!first) break;
    const r = await settleRevision(deps, first);
    if (r.kind === "recorded" && r.outcome && r.outcome.state !== "pending") changed++;
  }
  return changed;
}

/**
 * `transact` for article changes: while a clock-driven transition is due, records it
 * first (`settleDue`) and runs `fn` again, so that no change takes a position of the
 * sequence that reads have already shown a due transition at.
 */
export async function articleTransact<T>(
  deps: Deps,
  fn: (tx: Tx) => Promise<T>,
): Promise<{ value: T; versionstamp: string | null }> {
  for (let attempt = 0;; attempt++) {
    try {
      return await transact(deps.kv, fn, { lock: "articles" });
    } catch (e) {
      if (!(e instanceof DueTransitionsFirst) || attempt >= 5) throw e;
    }
    await settleDue(deps);
  }
}
