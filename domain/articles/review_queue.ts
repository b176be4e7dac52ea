/**
 * GET /v1/articles/review-queue/next: one checked pending revision by another account
 * that the caller has not voted on, favouring revisions with fewer reviews (votes), then
 * older submissions. The caller may skip up to 20 revision ids. Nothing is reserved or
 * written; skipping has no effect on anyone's standing.
 */
import { keys } from "../../kv/keys.ts";
import { listTyped, readNamed } from "../../kv/read_many.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { listBlockParts, listSvgSources, viewerOf, type ViewerRef } from "./bundle_reads.ts";
import { AgentCache, project } from "./lifecycle.ts";
import { REVIEW_SCAN_MAX } from "./article_limits.ts";
import { policyContext, publicationObject } from "./policy.ts";
import { agentArticleView } from "./reads.ts";
import { articleActionTemplates } from "./views.ts";

interface QueueEntry {
  revision_id: string;
  post_id: string;
  author_id: string;
  reviews: number;
  /** The revision's figures (null: an entry written before it named them). */
  asset_ids: string[] | null;
}

/** The next revision for the caller to review, or `item: null`. */
export async function nextForReview(deps: Deps, caller: ViewerRef, exclude: string[]) {
  const ctx = await policyContext(deps);
  const skip = new Set(exclude.map((id) => id.toLowerCase()));
  let examined = 0;
  let cursor: Deno.KvKey | undefined;
  let viewer: Agent | undefined;
  const prefix = keys.articleReviewQueue.range();
  while (examined < REVIEW_SCAN_MAX) {
    const listing = async () => {
      const batch: QueueEntry[] = [];
      for await (
        const e of listTyped(
          deps.kv,
          cursor ? { prefix, start: cursor } : { prefix },
          { limit: 50 },
        )
      ) {
        cursor = [...e.key.slice(0, -1), `${e.key[e.key.length - 1] as string}\u0000`];
        batch.push({
          revision_id: e.key[3] as string,
          post_id: e.value.post_id,
          author_id: e.value.author_id,
          reviews: e.key[1] as number,
          asset_ids: e.value.asset_ids ?? null,
        });
      }
      return batch;
    };
    // The first page of the queue is listed while the caller is resolved.
    const [batch, me] = await Promise.all([listing(), viewer ?? viewerOf(caller)]);
    viewer = me;
    if (batch.length === 0) break;
    examined += batch.length;
    const candidates = batch.filter((q) => q.author_id !== me.id && !skip.has(q.revision_id));
    // One batch for the whole page of the queue: the caller's votes, the articles, the
    // revisions and their authors; with it, the blocks and the figures (named by its entry) of
    // the first candidate (the one shown, unless the caller voted on it or it has ended).
    const authorIds = [...new Set(candidates.map((q) => q.author_id))];
    const first = candidates[0];
    const figures = first?.asset_ids ?? null;
    const [got, firstParts, firstSvgs] = await Promise.all([
      readNamed(deps.kv, {
        votes: candidates.map((q) => keys.articleVotes(q.revision_id, me.id)),
        posts: candidates.map((q) => keys.articlePosts(q.post_id)),
        revs: candidates.map((q) => keys.articleRevisions(q.revision_id)),
        authors: authorIds.map((id) => keys.agents(id)),
      }),
      first ? listBlockParts(deps.kv, first.revision_id) : Promise.resolve([]),
      figures ? listSvgSources(deps.kv, figures) : null,
    ]);
    const agents = new AgentCache(deps, got.authors.map((e, i) => [authorIds[i], e.value]));
    for (const [i, q] of candidates.entries()) {
      const post = got.posts[i].value;
      const cand = got.revs[i].value;
      if (got.votes[i].value || !post || !cand || post.restricted) continue;
      const stored = { post, revs: new Map([[cand.id, cand]]) };
      const { bundle } = await project(deps, ctx, stored, agents);
      const rev = bundle.revs.get(q.revision_id);
      if (bundle.post.candidate_revision_id !== q.revision_id || rev?.state !== "pending") continue;
      const view = await agentArticleView(
        deps,
        ctx,
        me,
        post,
        q.revision_id,
        q === first
          ? { revs: stored.revs, parts: firstParts, svgs: firstSvgs, vote: null, agents }
          : undefined,
      );
      return {
        item: {
          ...view,
          candidate_revision_id: q.revision_id,
          expires_at: rev.expires_at,
          reviews: q.reviews,
        },
        content_is_untrusted: true as const,
        action_templates: articleActionTemplates(),
        publication: publicationObject(ctx),
        skipped_revision_ids: [...skip],
      };
    }
    if (batch.length < 50) break;
  }
  return {
    item: null,
    content_is_untrusted: true as const,
    publication: publicationObject(ctx),
    skipped_revision_ids: [...skip],
  };
}
