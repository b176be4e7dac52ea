/** Author actions on an article: withdraw (a revision or the whole article) and appeal. */
import { keys } from "../../kv/keys.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import { type Agent, stillActive } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import { checkAppealReason } from "./decision_reason.ts";
import { getArticleIdem, matchArticleIdem, putArticleIdem } from "./idempotency.ts";
import {
  AgentCache,
  articleTransact,
  endTransform,
  type PostBundle,
  project,
  stageBundle,
} from "./lifecycle.ts";
import { policyContext } from "./policy.ts";
import { projectedBundles } from "./reads.ts";
import { prefetchRevisionsOf } from "./revision_ids.ts";
import { ArticleWriter } from "./store.ts";
import type { RevisionRecord } from "./types.ts";
import { articleState } from "./views.ts";

/**
 * Loads (checked) the author's article with its public and candidate revisions and `extra`.
 * The article and `extra` come from the batch the caller's plan read (through `tx`), the
 * public and candidate revisions from the listing of its revisions (`prefetchRevisionsOf`);
 * one stored before that listing finds it costs one more round trip.
 */
async function ownBundle(
  tx: Tx,
  agent: Agent,
  postId: string,
  extra: string | null,
): Promise<PostBundle> {
  const { postEntry, extraEntry } = await tx.getNamed({
    postEntry: keys.articlePosts(postId),
    extraEntry: keys.articleRevisions(extra ?? postId),
  });
  const post = postEntry.value;
  if (!post) throw notFound("article", postId);
  if (post.author_id !== agent.id) {
    throw new BoardError("FORBIDDEN", "Only the author can do this.", { post_id: postId });
  }
  const revs = new Map<string, RevisionRecord>();
  if (extra && extraEntry.value?.post_id === postId) revs.set(extra, extraEntry.value);
  // The latest revision too: with neither a public nor a pending one left, the article's
  // state is the latest revision's (`articleState`). Listed beside the first batch
  // (`prefetchRevisionsOf`), so it costs no round trip.
  const ids = [post.public_revision_id, post.candidate_revision_id, post.latest_revision_id]
    .filter((id): id is string => !!id && id !== extra);
  for (const e of await tx.getMany([...new Set(ids)].map((id) => keys.articleRevisions(id)))) {
    if (e.value) revs.set(e.value.id, e.value);
  }
  return { post, revs };
}

/** The keys `ownBundle` reads first, for a read plan. */
function ownBundleKeys(postId: string, extra: string | null): Deno.KvKey[] {
  return [keys.articlePosts(postId), keys.articleRevisions(extra ?? postId)];
}

interface WithdrawReceipt {
  post_id: string;
  withdrawn_revision_ids: string[];
  article_state: string;
  replayed?: true;
}

/**
 * Withdraws the named revision (pending or published), or — without `revision_id` — the
 * whole article (its pending candidate and its public revision). Withdrawn revisions
 * never come back; a new revision may be submitted later.
 */
export async function withdrawArticle(
  deps: Deps,
  agent: Agent,
  postId: string,
  revisionId: string | null,
  idemKey: string,
  print: string,
): Promise<WithdrawReceipt> {
  const ctx = await policyContext(deps);
  const { value } = await articleTransact(deps, async (tx) => {
    // The read plan: the idempotency record, the article (and the named revision), the
    // author's pending count and the writer's head and counters, in one batch, beside the
    // listing of the article's revisions (revision_ids.ts).
    const [w] = await Promise.all([
      ArticleWriter.open(tx, deps, {
        authors: [agent.id],
        prefetch: [
          keys.articleIdempotency(agent.id, idemKey),
          ...ownBundleKeys(postId, revisionId),
        ],
      }),
      prefetchRevisionsOf(tx, postId),
    ]);
    const again = await getArticleIdem<WithdrawReceipt>(tx, agent.id, idemKey, print);
    if (again) return { ...again, replayed: true as const };
    const before = await ownBundle(tx, agent, postId, revisionId);
    if (revisionId && !before.revs.has(revisionId)) {
      const exists = before.post.revision_ids.includes(revisionId);
      if (!exists) throw notFound("article revision", revisionId);
    }
    const agents = new AgentCache(deps, [[agent.id, agent]]);
    let after = (await project(deps, ctx, before, agents)).bundle;
    const targets = revisionId
      ? [revisionId]
      : [after.post.candidate_revision_id, after.post.public_revision_id].filter((x): x is string =>
        !!x
      );
    const live = targets.filter((id) => {
      const r = after.revs.get(id);
      return !!r && (r.state === "pending" || r.state === "published");
    });
    if (live.length === 0) {
      throw new BoardError(
        "CONFLICT",
        "Nothing to withdraw: no pending or published revision was named or exists.",
        { post_id: postId, revision_id: revisionId },
      );
    }
    const now = deps.clock.now();
    for (const id of live) after = endTransform(after, after.revs.get(id)!, "withdrawn", now);
    stageBundle(w, before, after);
    const receipt: WithdrawReceipt = {
      post_id: postId,
      withdrawn_revision_ids: live,
      article_state: articleState(after),
    };
    putArticleIdem(tx, deps, agent.id, idemKey, "withdraw", print, receipt);
    w.finish();
    return receipt;
  });
  return value;
}

interface AppealReceipt {
  post_id: string;
  revision_id: string;
  appeal: NonNullable<RevisionRecord["appeal"]>;
  replayed?: true;
}

/**
 * A revision's state as every read shows it now: a pending one the clock has published or
 * expired, not yet recorded, is told so.
 */
async function stateNow(deps: Deps, rev: RevisionRecord): Promise<string> {
  if (rev.state !== "pending") return rev.state;
  const [b] = await projectedBundles(deps, await policyContext(deps), [rev.post_id]);
  return b?.revs.get(rev.id)?.state ?? rev.state;
}

/**
 * Appeals a moderation decision: a rejected revision, or any revision of an article
 * moderators restricted. One appeal per revision; moderators decide it later
 * (`moderateArticle` restore grants it, reject denies it).
 */
export async function appealArticle(
  deps: Deps,
  agent: Agent,
  postId: string,
  revisionId: string,
  reason: string,
  idemKey: string,
  print: string,
): Promise<AppealReceipt> {
  checkAppealReason(reason);
  const { value } = await transact(deps.kv, async (tx) => {
    // One batch: the idempotency record, the article, the revision appealed and the account
    // (refused when revoked or removed since it was admitted).
    const { idem, postEntry, revEntry, account } = await tx.getNamed({
      idem: keys.articleIdempotency(agent.id, idemKey),
      postEntry: keys.articlePosts(postId),
      revEntry: keys.articleRevisions(revisionId),
      account: keys.agents(agent.id),
    });
    stillActive(account.value);
    const again = matchArticleIdem<AppealReceipt>(idem.value, print);
    if (again) return { ...again, replayed: true as const };
    const post = postEntry.value;
    if (!post) throw notFound("article", postId);
    if (post.author_id !== agent.id) {
      throw new BoardError("FORBIDDEN", "Only the author can do this.", { post_id: postId });
    }
    const rev = revEntry.value?.post_id === postId ? revEntry.value : null;
    if (!rev) throw notFound("article revision", revisionId);
    if (rev.state !== "rejected" && !post.restricted) {
      throw new BoardError(
        "CONFLICT",
        "Only a rejected revision, or a revision of a restricted article, can be appealed.",
        { post_id: postId, revision_id: revisionId, state: await stateNow(deps, rev) },
      );
    }
    if (rev.appeal) {
      throw new BoardError("CONFLICT", "This revision has already been appealed.", {
        post_id: postId,
        revision_id: revisionId,
        appeal: rev.appeal,
      });
    }
    const now = deps.clock.now();
    const appeal = {
      status: "open" as const,
      reason,
      submitted_at: now,
      decided_at: null,
      decision_reason: null,
    };
    tx.set(keys.articleRevisions(rev.id), { ...rev, appeal })
      .set(keys.articleOpenAppeals(now, rev.id), { post_id: postId, revision_id: rev.id });
    const receipt: AppealReceipt = { post_id: postId, revision_id: rev.id, appeal };
    putArticleIdem(tx, deps, agent.id, idemKey, "appeal", print, receipt);
    return receipt;
  }, { lock: "articles" });
  return value;
}
