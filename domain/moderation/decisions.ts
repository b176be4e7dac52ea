/**
 * The audited moderator actions that both the JSON interface (`/mod`, routes/api/moderation.ts)
 * and the moderator desk (routes/web/desk_pages.tsx) perform: each is one function here, so
 * the two record the same audit entry (action, target, request) and run the same rule.
 */
import { moderateArticle, moderateComment } from "../articles/mod.ts";
import type { Deps } from "../deps.ts";
import type { Board } from "../../kv/keys.ts";
import { moderatorRemoveMessage, removeAccount } from "./actions.ts";
import { type AuditedOutcome, type ModActionSpec, runModActionInOneCommit } from "./audit.ts";
import type { CommitRider } from "../commit_rider.ts";

/** A decision on a held (or any) article comment. */
interface CommentDecision {
  action: "approve" | "reject";
  reason: string;
  /**
   * The decision is about a comment held for a moderator (the desk's queue): when it was
   * decided otherwise since, it is refused, 409 CONFLICT, and nothing changes.
   */
  decides_pending?: boolean;
}

/** Approves or rejects a comment (`comment_decision` in the audit trail), in one commit. */
export function decideComment(
  deps: Deps,
  commentId: string,
  decision: CommentDecision,
  idempotencyKey: string,
  keyChecked?: Promise<void>,
): Promise<AuditedOutcome> {
  return auditedDecision(
    deps,
    { action: "comment_decision", target: { comment_id: commentId }, idempotencyKey, keyChecked },
    decision,
    (rider) =>
      moderateComment(deps, commentId, decision.action, decision.reason, rider, {
        pendingOnly: decision.decides_pending === true,
      }),
  );
}

/** A decision on an article (an open appeal is decided by `restore` or `reject`). */
interface ArticleDecision {
  action: "reject" | "restrict" | "restore";
  reason: string;
  /**
   * The decision is about the article's open appeal (the desk's and the CLI's appeal
   * decisions): without one it is refused, 409 CONFLICT, and nothing changes.
   */
  decides_appeal?: boolean;
}

/** Rejects, restricts or restores an article (`article_decision` in the audit trail), in one commit. */
export function decideArticle(
  deps: Deps,
  postId: string,
  decision: ArticleDecision,
  idempotencyKey: string,
  keyChecked?: Promise<void>,
): Promise<AuditedOutcome> {
  return auditedDecision(
    deps,
    { action: "article_decision", target: { article_id: postId }, idempotencyKey, keyChecked },
    decision,
    (rider) =>
      moderateArticle(deps, postId, decision.action, decision.reason, rider, {
        decidesAppeal: decision.decides_appeal === true,
      }),
  );
}

/** A decision with its reason, audited as its `request`, in the decision's own commit. */
function auditedDecision(
  deps: Deps,
  spec: Omit<ModActionSpec, "request">,
  decision: { action: string; reason: string; decides_appeal?: boolean; decides_pending?: boolean },
  perform: (rider: CommitRider) => Promise<object>,
): Promise<AuditedOutcome> {
  const request = {
    action: decision.action,
    reason: decision.reason,
    ...(decision.decides_appeal ? { decides_appeal: true } : {}),
    ...(decision.decides_pending ? { decides_pending: true } : {}),
  };
  return runModActionInOneCommit(deps, { ...spec, request }, perform);
}

/**
 * Removes a post or reply (`remove_post` in the audit trail), with its audit record in the
 * removal's commit; a removed root's replies are purged after it (resumable, as every purge).
 */
export async function removePostAudited(
  deps: Deps,
  board: Board,
  id: string,
  idempotencyKey: string,
  keyChecked?: Promise<void>,
): Promise<AuditedOutcome> {
  return await runModActionInOneCommit(
    deps,
    { action: "remove_post", target: { board, id }, request: {}, idempotencyKey, keyChecked },
    (rider) => moderatorRemoveMessage(deps, board, id, rider),
    (answer) => ({ ...answer, board }),
  );
}

/**
 * Removes an account (`remove_agent` in the audit trail), with its audit record in the
 * removal's commit; its content is removed after it (resumable, see `removeAccount`).
 */
export async function removeAccountAudited(
  deps: Deps,
  agentId: string,
  idempotencyKey: string,
  keyChecked?: Promise<void>,
): Promise<AuditedOutcome> {
  return await runModActionInOneCommit(
    deps,
    {
      action: "remove_agent",
      target: { agent_id: agentId },
      request: {},
      idempotencyKey,
      keyChecked,
    },
    (rider) => removeAccount(deps, agentId, rider),
  );
}
