/**
 * GET /v1/articles/review-queue/next: one checked pending revision by another account
 * that the caller has not voted on, favouring revisions with fewer reviews (votes), then
 * older submissions. The caller may skip up to 20 revision ids. Nothing is reserved or
 * written; skipping has no effect on anyone's standing.
 */
import { keys } from "../../kv/keys.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { AgentCache, loadBundles, project } from "./lifecycle.ts";
import { REVIEW_SCAN_MAX } from "./limits.ts";
import { policyContext, publicationObject } from "./policy.ts";
import { agentArticle } from "./reads.ts";
import { viewerArticleVotes } from "./recommendations.ts";
import { readPosts } from "./store.ts";

interface QueueEntry {
  revision_id: string;
  post_id: string;
  author_id: string;
  reviews: number;
}

/** The next revision for the caller to review, or `item: null`. */
export async function nextForReview(deps: Deps, viewer: Agent, exclude: string[]) {
  const ctx = await policyContext(deps);
  const skip = new Set(exclude.map((id) => id.toLowerCase()));
  const agents = new AgentCache(deps);
  let examined = 0;
  let cursor: Deno.KvKey | undefined;
  const prefix = keys.articleReviewQueue.range();
  while (examined < REVIEW_SCAN_MAX) {
    const batch: QueueEntry[] = [];
    for await (
      const e of deps.kv.list<{ post_id: string; author_id: string }>(
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
      });
    }
    if (batch.length === 0) break;
    examined += batch.length;
    const candidates = batch.filter((q) => q.author_id !== viewer.id && !skip.has(q.revision_id));
    const voted = await viewerArticleVotes(deps, viewer.id, candidates.map((q) => q.revision_id));
    const unvoted = candidates.filter((q) => !voted.has(q.revision_id));
    const posts = await readPosts(deps.kv, unvoted.map((q) => q.post_id));
    const bundles = await loadBundles(deps, [...posts.values()]);
    for (const q of unvoted) {
      const b = bundles.find((x) => x.post.id === q.post_id);
      if (!b || b.post.restricted) continue;
      const { bundle } = await project(deps, ctx, b, agents);
      const rev = bundle.revs.get(q.revision_id);
      if (bundle.post.candidate_revision_id !== q.revision_id || rev?.state !== "pending") continue;
      const view = await agentArticle(deps, viewer, q.post_id, q.revision_id);
      return {
        item: { ...view.article, reviews: q.reviews },
        content_is_untrusted: true as const,
        action_templates: view.action_templates,
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
