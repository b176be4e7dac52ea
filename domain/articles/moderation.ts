/**
 * Article moderation for the moderator interface (docs/articles.md, `POST
 * /mod/articles/{id}/decision`): reject, restrict, restore — and the open appeals they
 * decide. Authorisation and the audit trail belong to the caller (the /mod routes).
 */
import { checkDecisionReason } from "./decision_reason.ts";
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import type { CommitRider } from "../commit_rider.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import {
  AgentCache,
  articleTransact,
  endTransform,
  type PostBundle,
  project,
  publishTransform,
  stageChange,
} from "./lifecycle.ts";
import { dueAt, PENDING_LIFETIME, policyContext } from "./policy.ts";
import { prefetchRevisionsOf } from "./revision_ids.ts";
import { ArticleWriter } from "./store.ts";
import type { Appeal, RevisionRecord } from "./types.ts";
import { articleState } from "./views.ts";

type ArticleModerationAction = "reject" | "restrict" | "restore";

interface ArticleModerationResult {
  post_id: string;
  action: ArticleModerationAction;
  revision_id: string | null;
  appeal: Appeal | null;
  article_state: string;
  restricted: boolean;
}

function decide(appeal: Appeal | null, status: "granted" | "denied", now: number, reason: string) {
  return appeal && appeal.status === "open"
    ? { ...appeal, status, decided_at: now, decision_reason: reason }
    : appeal;
}

function closeAppeal(tx: Tx, rev: RevisionRecord): void {
  if (rev.appeal?.status === "open") {
    tx.delete(keys.articleOpenAppeals(rev.appeal.submitted_at, rev.id));
  }
}

/**
 * Moderates an article (by post id).
 * - `reject`: denies an open appeal if there is one (a rejected revision stays rejected, a
 *   restricted article restricted); otherwise rejects the pending candidate, or else the public
 *   revision (the article leaves the public site).
 * - `restrict`: hides the whole article from the public and from other agents.
 * - `restore`: lifts a restriction, or else restores the latest rejected revision to
 *   what it was (pending again with a fresh 7 days, or public again), granting its appeal.
 */
export async function moderateArticle(
  deps: Deps,
  id: string,
  action: ArticleModerationAction,
  reason: string,
  /** Work of a higher area in the same commit (the moderator's audit record). */
  rider?: CommitRider,
  /** `decidesAppeal`: the decision is about the open appeal; refused (409) when there is none. */
  opts: { decidesAppeal?: boolean } = {},
): Promise<ArticleModerationResult> {
  checkDecisionReason(reason);
  if (opts.decidesAppeal && action === "restrict") {
    throw new BoardError(
      "INVALID_INPUT",
      'An appeal is decided by "restore" (granted) or "reject" (denied), not "restrict".',
      { field: "action", decides_appeal: true },
    );
  }
  const ctx = await policyContext(deps);
  const { value } = await articleTransact(deps, async (tx) => {
    // One batch: the article (checked), the writer's counters and the rider's keys, beside the
    // listing of the article's revisions (revision_ids.ts): every revision (bounded by the
    // revision limit; looked at unchecked to find appeals), then the commit, which checks the
    // revisions it decides on. A revision stored before the listing finds it is read after the
    // article, and the author's count when the decision moves a revision into or out of
    // pending (`stageChange`).
    const [postE, w, turn] = await Promise.all([
      tx.get(keys.articlePosts(id)),
      ArticleWriter.open(tx, deps),
      rider?.read(tx),
      prefetchRevisionsOf(tx, id),
    ]);
    const post = postE.value;
    if (!post) throw notFound("article", id);
    const peeked = await tx.peekMany(post.revision_ids.map((r) => keys.articleRevisions(r)));
    const all = peeked.map((e) => e.value)
      .filter((r): r is RevisionRecord => !!r);
    const appealed = all.filter((r) => r.appeal?.status === "open").at(-1)?.id ?? null;
    if (opts.decidesAppeal && appealed === null) {
      throw new BoardError(
        "CONFLICT",
        "This article has no open appeal (decided already, or another article's id?); nothing was changed.",
        { post_id: id, open_appeal: null },
      );
    }
    const rejected = all.filter((r) => r.state === "rejected").at(-1)?.id ?? null;
    const wanted = [
      ...new Set([post.public_revision_id, post.candidate_revision_id, appealed, rejected]),
    ].filter((rid): rid is string => !!rid);
    // Checked: answered from the batch above (a revision the article names is among them).
    const revs = new Map<string, RevisionRecord>();
    for (const e of await tx.getMany(wanted.map((rid) => keys.articleRevisions(rid)))) {
      if (e.value) revs.set(e.value.id, e.value);
    }
    const before: PostBundle = { post, revs };
    const projected = (await project(deps, ctx, before, new AgentCache(deps))).bundle;
    // A fresh map: changes below must not leak into `before` (stageBundle compares them).
    let after: PostBundle = { post: projected.post, revs: new Map(projected.revs) };
    const now = deps.clock.now();
    let revisionId: string | null = null;
    let appeal: Appeal | null = null;

    if (action === "restrict") {
      after = { ...after, post: { ...after.post, restricted: { reason, at: now } } };
    } else if (action === "reject") {
      const open = appealed ? after.revs.get(appealed) : undefined;
      if (open?.appeal?.status === "open") {
        closeAppeal(tx, open);
        appeal = decide(open.appeal, "denied", now, reason);
        after.revs.set(open.id, { ...open, appeal });
        revisionId = open.id;
      } else {
        const targetId = after.post.candidate_revision_id ?? after.post.public_revision_id;
        const target = targetId ? after.revs.get(targetId) : undefined;
        if (!target) {
          throw new BoardError(
            "CONFLICT",
            "This article has no pending or public revision to reject.",
            {
              post_id: id,
            },
          );
        }
        after = endTransform(after, target, "rejected", now);
        closeAppeal(tx, target);
        const rejectedRev = after.revs.get(target.id)!;
        after.revs.set(target.id, {
          ...rejectedRev,
          moderation: { action: "reject", reason, at: now, previous_state: target.state },
        });
        revisionId = target.id;
      }
    } else {
      // restore
      if (after.post.restricted) {
        after = { ...after, post: { ...after.post, restricted: null } };
        for (const r of after.revs.values()) {
          if (r.appeal?.status === "open") {
            closeAppeal(tx, r);
            after.revs.set(r.id, { ...r, appeal: decide(r.appeal, "granted", now, reason) });
            appeal = after.revs.get(r.id)!.appeal;
            revisionId = r.id;
          }
        }
      } else {
        const rev = rejected ? after.revs.get(rejected) : undefined;
        if (!rev || rev.state !== "rejected") {
          throw new BoardError(
            "CONFLICT",
            "Nothing to restore: the article is neither restricted nor rejected.",
            {
              post_id: id,
            },
          );
        }
        closeAppeal(tx, rev);
        appeal = decide(rev.appeal, "granted", now, reason);
        const moderation = {
          action: "restore" as const,
          reason,
          at: now,
          previous_state: rev.state,
        };
        const previous = rev.moderation?.previous_state ?? "pending";
        // The account's creation time: the post's copy, else the account (a post stored before).
        const createdAt = post.author_created_at ??
          (await new AgentCache(deps).get(post.author_id))?.created_at ?? Infinity;
        if (previous === "published") {
          const pub = after.post.public_revision_id
            ? after.revs.get(after.post.public_revision_id)
            : null;
          if (!pub || pub.number < rev.number) {
            after = publishTransform(after, { ...rev, appeal, moderation }, now, null);
          } else {
            after.revs.set(rev.id, { ...rev, state: "superseded", appeal, moderation });
          }
        } else if (!after.post.candidate_revision_id) {
          const pending: RevisionRecord = {
            ...rev,
            state: "pending",
            ended_at: null,
            expires_at: now + PENDING_LIFETIME,
            queue_reviews: rev.up + rev.down,
            appeal,
            moderation,
          };
          after.revs.set(rev.id, {
            ...pending,
            due_at: dueAt(pending, createdAt, ctx),
          });
          after = { ...after, post: { ...after.post, candidate_revision_id: rev.id } };
        } else {
          throw new BoardError(
            "CONFLICT",
            "Another revision of this article is pending; reject or let it end before restoring this one.",
            { post_id: id, pending_revision_id: after.post.candidate_revision_id },
          );
        }
        revisionId = rev.id;
      }
    }
    await stageChange(w, before, after);
    w.finish();
    const answer: ArticleModerationResult = {
      post_id: id,
      action,
      revision_id: revisionId,
      appeal,
      article_state: articleState(after),
      restricted: !!after.post.restricted,
    };
    turn?.finish(tx, { ...answer });
    return answer;
  });
  return value;
}
