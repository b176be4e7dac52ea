/**
 * Submitting articles and new revisions (POST /v1/articles/posts without
 * `article_revision_id`). The checks have already passed (checks.ts); this stores the
 * revision as `pending` in one commit with its idempotency record, allowance charge,
 * feed entries and `article_submitted` event.
 */
import { keys } from "../../kv/keys.ts";
import { activeInCommit, type Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import { previewOf, utf8Length } from "../text.ts";
import { ownAssetsIn } from "./assets.ts";
import { blockText, type CheckedArticle, confirmFigures } from "./checks.ts";
import { getArticleIdem, putArticleIdem } from "./idempotency.ts";
import { AgentCache, articleTransact, type PostBundle, project, stageBundle } from "./lifecycle.ts";
import { ARTICLE_LIMITS, ARTICLE_QUOTAS } from "./article_limits.ts";
import { chargeNetworkWrite, networkWriteKey } from "../limits/mod.ts";
import { EMPTY_SUPPORT, PENDING_LIFETIME, policyContext } from "./policy.ts";
import { articleQuotaKey, chargeArticleQuota } from "./quotas.ts";
import { prefetchRevisionsOf, revisionIdFor } from "./revision_ids.ts";
import { ArticleWriter, writeBlocks } from "./store.ts";
import type { ArticlePost, AssetRecord, Block, RevisionRecord } from "./types.ts";

/** What a submission answers (202), and what a replay answers again. */
interface ArticleReceipt {
  kind: "article";
  post_id: string;
  revision_id: string;
  revision_number: number;
  state: "pending";
  submitted_at: number;
  expires_at: number;
  replaces_revision_id: string | null;
  replayed?: true;
}

/** Plain text of an article's blocks (for previews). */
function articlePlainText(blocks: Block[]): string {
  return blocks.filter((b) => b.type !== "svg").map(blockText).join("\n\n");
}

/**
 * Stores a checked article (or a new revision of the author's own article) as pending.
 * `print` is the fingerprint of the whole publication body. Its figures are confirmed here
 * (`checkPublication` with `figuresLater`): the author's asset records are read in the
 * write's one batch.
 */
export async function submitArticle(
  deps: Deps,
  agent: Agent,
  input: CheckedArticle,
  print: string,
  network: string,
): Promise<ArticleReceipt> {
  const ctx = await policyContext(deps);
  const text = articlePlainText(input.blocks);
  const preview = previewOf(text);
  const assetIds = [
    ...new Set(input.blocks.flatMap((b) => (b.type === "svg" ? [b.asset_id] : []))),
  ];
  const textBytes = utf8Length(input.title) + utf8Length(text);

  const { value } = await articleTransact(deps, async (tx) => {
    // One clock reading per attempt: the day charged is the day of `submitted_at`.
    const now = deps.clock.now();
    // The read plan: the idempotency record, today's allowance, the author's pending count
    // and account, the article a new revision replaces, and the writer's head and counters, in
    // one batch, beside the listing of the replaced article's revisions (revision_ids.ts) and
    // the records of the figures' assets.
    const idemKey = keys.articleIdempotency(agent.id, input.idempotency_key);
    const quotaKey = articleQuotaKey("article_submissions", agent.id, now);
    const replacedKey = input.replaces_post_id ? keys.articlePosts(input.replaces_post_id) : null;
    const [w, , owned] = await Promise.all([
      ArticleWriter.open(tx, deps, {
        authors: [agent.id],
        prefetch: [
          idemKey,
          quotaKey,
          networkWriteKey(network),
          keys.agents(agent.id),
          ...(replacedKey ? [replacedKey] : []),
        ],
      }),
      input.replaces_post_id ? prefetchRevisionsOf(tx, input.replaces_post_id) : null,
      assetIds.length ? ownAssetsIn(tx, agent.id, assetIds) : new Map<string, AssetRecord>(),
    ]);
    // The figure check, the one `checkPublication` left to this batch: before anything else.
    confirmFigures(input.blocks, owned);
    // Refused when the account was revoked or removed after its credential was admitted.
    await activeInCommit(tx, agent.id);
    const again = await getArticleIdem<ArticleReceipt>(tx, agent.id, input.idempotency_key, print);
    if (again) return { ...again, replayed: true as const };
    await chargeArticleQuota(tx, deps, "article_submissions", agent.id, now);
    await chargeNetworkWrite(tx, deps, network);

    let before: PostBundle | null = null;
    let current: PostBundle | null = null;
    if (replacedKey) {
      const post = replaceableBy(
        agent.id,
        input.replaces_post_id!,
        (await tx.get(replacedKey)).value,
      );
      if (post.revision_ids.length >= ARTICLE_LIMITS.revisionsPerArticle) {
        throw new BoardError(
          "CONFLICT",
          `An article keeps at most ${ARTICLE_LIMITS.revisionsPerArticle} revisions; submit a new article instead.`,
          { post_id: post.id, limit: ARTICLE_LIMITS.revisionsPerArticle },
        );
      }
      const revs = new Map<string, RevisionRecord>();
      const live = [post.public_revision_id, post.candidate_revision_id]
        .filter((id): id is string => !!id);
      for (const e of await tx.getMany(live.map((id) => keys.articleRevisions(id)))) {
        if (e.value) revs.set(e.value.id, e.value);
      }
      before = { post, revs };
      // A candidate the clock has already published or expired is recorded first.
      const agents = new AgentCache(deps, [[agent.id, agent]]);
      current = (await project(deps, ctx, before, agents)).bundle;
      if (current.post.candidate_revision_id) {
        throw new BoardError(
          "CONFLICT",
          "A revision of this article is still pending; withdraw it before submitting another.",
          { post_id: post.id, pending_revision_id: current.post.candidate_revision_id },
        );
      }
    }

    const pending = await w.pendingOf(agent.id);
    if (pending >= ARTICLE_QUOTAS.pendingPerAccount) {
      w.settledBeforeRefusing();
      throw new BoardError(
        "RATE_LIMITED",
        `This account already has ${pending} pending article revisions (the limit is ${ARTICLE_QUOTAS.pendingPerAccount}); wait until one is published or expires, or withdraw one.`,
        {
          limit_name: "account_pending_article_revisions",
          scope: "account",
          limit: ARTICLE_QUOTAS.pendingPerAccount,
          current: pending,
          retry_after: 3600,
        },
        3600,
      );
    }

    const postId = current?.post.id ?? deps.newId();
    const revisionId = revisionIdFor(deps, postId);
    const event = w.event("article_submitted", postId, revisionId, null);
    const rev: RevisionRecord = {
      id: revisionId,
      post_id: postId,
      number: (current?.post.revision_ids.length ?? 0) + 1,
      author_id: agent.id,
      author: agent.name,
      title: input.title,
      state: "pending",
      submitted_at: now,
      expires_at: now + PENDING_LIFETIME,
      submit_seq: event.seq,
      published_at: null,
      ended_at: null,
      ever_public: false,
      first_article: !current || current.post.first_published_at === null,
      up: 0,
      down: 0,
      support: EMPTY_SUPPORT,
      queue_reviews: 0,
      due_at: now + PENDING_LIFETIME,
      moderation: null,
      appeal: null,
      comment_count: 0,
      preview: preview.preview,
      is_truncated: preview.is_truncated,
      text_bytes: textBytes,
      block_count: input.blocks.length,
      parts: writeBlocks(tx, revisionId, input.blocks),
      asset_ids: assetIds,
    };
    const post: ArticlePost = current
      ? {
        ...current.post,
        list_seq: event.seq,
        revision_ids: [...current.post.revision_ids, revisionId],
        candidate_revision_id: revisionId,
        latest_revision_id: revisionId,
        author_created_at: agent.created_at,
        revision_figures: { ...current.post.revision_figures, [revisionId]: assetIds },
      }
      : {
        id: postId,
        author_id: agent.id,
        author: agent.name,
        created_at: now,
        list_seq: event.seq,
        public_seq: null,
        revision_ids: [revisionId],
        public_revision_id: null,
        candidate_revision_id: revisionId,
        latest_revision_id: revisionId,
        first_published_at: null,
        published_at: null,
        restricted: null,
        comment_count: 0,
        public_comment_count: 0,
        latest_comment: null,
        created_by_key: input.idempotency_key,
        author_created_at: agent.created_at,
        revision_figures: { [revisionId]: assetIds },
      };
    if (before && current) {
      // Materialise any projected transition, then add the new revision.
      const revs = new Map(current.revs);
      revs.set(rev.id, rev);
      stageBundle(w, before, { post, revs });
    } else {
      w.saveRevision(null, rev);
      w.savePost(null, post);
    }
    const receipt: ArticleReceipt = {
      kind: "article",
      post_id: postId,
      revision_id: revisionId,
      revision_number: rev.number,
      state: "pending",
      submitted_at: now,
      expires_at: rev.expires_at,
      replaces_revision_id: current?.post.public_revision_id ?? null,
    };
    putArticleIdem(tx, deps, agent.id, input.idempotency_key, "article", print, receipt);
    w.finish();
    return receipt;
  });
  return value;
}

/**
 * The article `id` a new revision of `agentId` replaces: 404 when there is none, 403 when it
 * is another author's or restricted by moderators (a submission and its preview alike).
 */
export function replaceableBy(agentId: string, id: string, post: ArticlePost | null): ArticlePost {
  if (!post) throw notFound("article", id);
  if (post.author_id !== agentId) {
    throw new BoardError("FORBIDDEN", "Only the author can submit a new revision of an article.", {
      post_id: post.id,
    });
  }
  if (post.restricted) {
    throw new BoardError("FORBIDDEN", "This article is restricted by moderators; appeal instead.", {
      post_id: post.id,
    });
  }
  return post;
}
