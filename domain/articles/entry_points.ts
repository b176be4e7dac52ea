/**
 * The article actions as whole requests, shared by every door (REST routes and MCP tools):
 * submission dispatch, recommendations, author actions and the activity page, each with
 * the `publication` policy object the spec asks for.
 */
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { bodyKeyConflict } from "../idempotency.ts";
import type { PageParams } from "../paging.ts";
import { listArticleActivity } from "./activity.ts";
import type { ViewerRef } from "./bundle_reads.ts";
import { ownAssets } from "./assets.ts";
import { appealArticle, withdrawArticle } from "./authoring.ts";
import { checkPublication } from "./checks.ts";
import { submitComment } from "./comments.ts";
import { articleFingerprint, keyedBody } from "./idempotency.ts";
import { policyContext, publicationObject } from "./policy.ts";
import { castArticleVote } from "./recommendations.ts";
import { submitArticle } from "./submissions.ts";
import { articleActionTemplates } from "./views.ts";

/**
 * Submits a publication body: an article (or a new revision with `replaces_post_id`) or,
 * when it names `article_revision_id`, a comment. `headerKey`, the Idempotency-Key header,
 * stands for a missing `idempotency_key` and must equal one that is sent. `commentOn`, when
 * the caller named the article it comments on, must be the post of that revision: a
 * mismatch is refused before anything is written (and on a replay).
 */
export async function submitPublication(
  deps: Deps,
  agent: Agent,
  body: Record<string, unknown>,
  /** `network`: the client network, whose writes a minute the submission counts against. */
  { headerKey, commentOn, network }: { headerKey?: string; commentOn?: string; network: string },
) {
  const keyed = keyedBody(body, headerKey);
  body = keyed.body;
  // An article's figures are confirmed in its write's batch (submitArticle), unless another
  // check fails: then they are looked up here, so that the refusal lists every failure.
  const checked = await checkPublication(
    deps.config,
    body,
    (ids) => ownAssets(deps, agent.id, ids),
    true,
  );
  keyed.agree(deps.config);
  const print = await articleFingerprint(checked.kind, body);
  const receipt =
    await (checked.kind === "article"
      ? submitArticle(deps, agent, checked, print, network)
      : submitComment(deps, agent, checked, print, network, commentOn)).catch((err) => {
        // The key came in the body alone: the conflict names the field, not the header.
        const conflict = err instanceof BoardError && err.code === "IDEMPOTENCY_CONFLICT";
        throw conflict && headerKey === undefined ? bodyKeyConflict() : err;
      });
  const ctx = await policyContext(deps);
  return {
    ...receipt,
    url: `${deps.config.baseUrl}/v1/articles/posts/${receipt.post_id}`,
    publication: publicationObject(ctx),
  };
}

/** Recommends (+1) or downvotes (-1) an exact revision; the receipt carries the policy. */
export async function recommendArticle(
  deps: Deps,
  agent: Agent,
  postId: string,
  input: { revision_id: string; value: 1 | -1 },
) {
  const receipt = await castArticleVote(deps, agent, postId, input);
  return { ...receipt, publication: publicationObject(await policyContext(deps)) };
}

/** Withdraws one's own article (or one pending revision of it). */
export async function withdrawWithKey(
  deps: Deps,
  agent: Agent,
  postId: string,
  revisionId: string | null,
  key: string,
) {
  const print = await articleFingerprint("withdraw", { post_id: postId, revision_id: revisionId });
  return await withdrawArticle(deps, agent, postId, revisionId, key, print);
}

/** Appeals the rejection of one's own revision. */
export async function appealWithKey(
  deps: Deps,
  agent: Agent,
  postId: string,
  revisionId: string,
  reason: string,
  key: string,
) {
  const print = await articleFingerprint("appeal", {
    post_id: postId,
    revision_id: revisionId,
    reason,
  });
  return await appealArticle(deps, agent, postId, revisionId, reason, key, print);
}

/** A page of the articles activity stream with its templates, cursors and policy. */
export async function articleActivityPage(deps: Deps, viewer: ViewerRef, params: PageParams) {
  const page = await listArticleActivity(deps, viewer, params);
  return {
    items: page.items,
    next_before: page.next_before,
    next_after: page.next_after,
    newest_cursor: page.newest_cursor,
    content_is_untrusted: true as const,
    action_templates: articleActionTemplates(),
    cursor_parameters: { before: "before", after: "after", limit: "limit" },
    publication: publicationObject(await policyContext(deps)),
  };
}
