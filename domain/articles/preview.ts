/**
 * POST /v1/articles/preview: the same checks and rendering as a submission or comment,
 * and nothing written (no idempotency record, no allowance charged).
 */
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import { ownAssetsWithSources } from "./assets.ts";
import { blockText, checkPublication, checksPassed } from "./checks.ts";
import { commentDepth, findComment } from "./comments.ts";
import { AgentCache, loadBundles, project } from "./lifecycle.ts";
import { policyContext, publicationObject } from "./policy.ts";
import {
  articleSourceText,
  embeddedFigures,
  renderArticleHtml,
  renderCommentHtml,
} from "./render.tsx";
import { keyedBody } from "./idempotency.ts";
import { readPost, readRevision } from "./store.ts";
import { replaceableBy } from "./submissions.ts";
import { commentable, hiddenArticle } from "./views.ts";

/**
 * Runs every check and renders; throws the same 400/404 a submission would. A preview writes
 * nothing and needs no idempotency key; one sent (in the body or as `headerKey`) is checked as
 * a submission checks it.
 */
export async function previewPublication(
  deps: Deps,
  agent: Agent,
  body: Record<string, unknown>,
  headerKey?: string,
) {
  const keyed = keyedBody(body, headerKey);
  // The figures' sources are read with the records the checks look up: one round trip.
  const figures = ownAssetsWithSources(deps, agent.id);
  const checked = await checkPublication(
    deps.config,
    { idempotency_key: "preview-writes-nothing", ...keyed.body },
    figures.lookup,
  );
  keyed.agree(deps.config);
  const replaces = checked.kind === "comment" ? undefined : checked.replaces_post_id;
  const comment = checked.kind === "comment" ? checked : null;
  // Everything the body names is read with the policy: the replaced article, or the revision
  // commented on; the parent comment is looked up meanwhile, beside the revision's article.
  const parentRead = comment?.parent_id ? findComment(deps.kv, comment.parent_id) : null;
  parentRead?.catch(() => {}); // awaited below, unless a read beside it failed first
  const [ctx, replaced, commented] = await Promise.all([
    policyContext(deps),
    replaces ? readPost(deps.kv, replaces) : null,
    comment ? readRevision(deps.kv, comment.article_revision_id) : null,
  ]);
  // A new revision is refused as its submission would be: no such article, or not yours.
  if (replaces) replaceableBy(agent.id, replaces, replaced);
  if (checked.kind === "comment") {
    const rev = commented;
    const post = rev ? await readPost(deps.kv, rev.post_id) : null;
    if (!rev || !post) throw notFound("article revision", checked.article_revision_id);
    const [b] = await loadBundles(deps, [post]);
    const { bundle } = await project(deps, ctx, b, new AgentCache(deps));
    const hidden = hiddenArticle(bundle, agent.id);
    if (hidden) throw hidden;
    if (!commentable(bundle, rev.id)) {
      throw new BoardError(
        "NOT_FOUND",
        `Article revision "${rev.id}" is not open for comments; comment on the current revision.`,
        { target: "article revision", id: rev.id },
      );
    }
    const depth = commentDepth(post.id, checked.parent_id, await parentRead);
    return {
      ok: true as const,
      kind: "comment" as const,
      writes: "none" as const,
      checks: checksPassed(),
      target: { post_id: post.id, revision_id: rev.id, parent_id: checked.parent_id, depth },
      rendered: {
        blocks: checked.blocks,
        text: checked.blocks.map(blockText).join("\n\n"),
        html: renderCommentHtml(checked.blocks, embeddedFigures(new Map())),
      },
    };
  }
  const svgs = await figures.sources();
  return {
    ok: true as const,
    kind: "article" as const,
    writes: "none" as const,
    checks: checksPassed(),
    replaces_post_id: checked.replaces_post_id,
    rendered: {
      title: checked.title,
      blocks: checked.blocks.map((x) =>
        x.type === "svg" ? { ...x, svg: svgs.get(x.asset_id) ?? null } : x
      ),
      text: articleSourceText(checked.title, checked.blocks),
      html: renderArticleHtml(checked.title, checked.blocks, embeddedFigures(svgs)),
    },
    publication: publicationObject(ctx),
  };
}
