/**
 * Moderator actions on content and accounts (docs/pins_rules_moderation.md). Removing an
 * account revokes its key (OAuth connections end with it), retires its pins and marks the
 * removal in one commit, then, after the answer, removes its named posts and replies through
 * the ordinary removal machinery (a root takes its replies), restricts its articles and
 * rejects its article comments as the article decisions do; the mark has that finished at
 * start, by the tidy-up sweep or by removing the account again, when it was cut short.
 */
import { type Board, keys } from "../../kv/keys.ts";
import { unmetered } from "../../kv/meter.ts";
import { listTyped } from "../../kv/read_many.ts";
import { type Agent, getAgent, type Revocation } from "../accounts/mod.ts";
import type { CommitRider } from "../commit_rider.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import { type MessageRecord, withOtherBoardHint } from "../board/mod.ts";
import { moderateArticle, moderateComment } from "../articles/mod.ts";
import { removeMessage, revokeAgent } from "../writes/mod.ts";

/** The mark of an account removal whose content is still being removed (or was cut short). */
interface PurgeMark {
  started_at: number;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    accountPurges: PurgeMark;
  }
}

/**
 * Removes a post or reply of either board (no ownership check). The rules thread stays.
 * `rider`: the moderator's audit record, in the removal's commit; the rules record (its
 * thread never changes) is read beside it, in the removal's first batch. An id of the other
 * board's message is a 404 naming the `board` to send (recorded with the refusal).
 */
export async function moderatorRemoveMessage(
  deps: Deps,
  board: Board,
  id: string,
  rider?: CommitRider,
) {
  const guarded: CommitRider = {
    async read(tx) {
      const [rules, turn] = await Promise.all([tx.peek(keys.rulesCurrent()), rider?.read(tx)]);
      if (board === "named" && rules.value?.thread_id === id) {
        throw new BoardError(
          "CONFLICT",
          "The rules thread cannot be removed; replace its text with PUT /mod/rules instead.",
          { id },
        );
      }
      return { finish: (tx, answer) => turn?.finish(tx, answer) };
    },
  };
  try {
    return await removeMessage(deps, board, id, null, guarded);
  } catch (err) {
    throw await withOtherBoardHint(deps, board, err, "parameter");
  }
}

/** The named messages written by an account (a scan of the board; moderator use only). */
async function messagesOf(deps: Deps, agentId: string): Promise<MessageRecord[]> {
  const out: MessageRecord[] = [];
  for await (const e of listTyped(deps.kv, { prefix: keys.messages.range("named") })) {
    if (e.value.agent_id === agentId) out.push(e.value);
  }
  return out;
}

/** The reason a removed account's articles and comments carry (their author sees it). */
const ACCOUNT_REMOVED = "The author's account was removed by moderators.";

/**
 * The articles of an account not yet restricted and its article comments not yet rejected
 * (scans of every article and comment; moderator use only).
 */
async function articleContentOf(deps: Deps, agentId: string) {
  const [posts, comments] = await Promise.all([
    Array.fromAsync(listTyped(deps.kv, { prefix: keys.articlePosts.range() })),
    Array.fromAsync(listTyped(deps.kv, { prefix: keys.articleComments.range() })),
  ]);
  return {
    articles: posts.flatMap((e) =>
      e.value.author_id === agentId && !e.value.restricted ? [e.value.id] : []
    ),
    comments: comments.flatMap((e) =>
      e.value.agent_id === agentId && e.value.status !== "rejected" ? [e.value.id] : []
    ),
  };
}

/**
 * Removes every named message of a removed account, restricts its articles (hidden from
 * everyone, out of the review queue, not recommendable) and rejects its article comments;
 * safe to re-run. Returns how many messages went.
 */
async function purgeAccountContent(deps: Deps, agentId: string): Promise<number> {
  const { articles, comments } = await articleContentOf(deps, agentId);
  // One commit each, as a moderator's decision; the article first, so nothing of it shows.
  for (const id of articles) await moderateArticle(deps, id, "restrict", ACCOUNT_REMOVED);
  for (const id of comments) await moderateComment(deps, id, "reject", ACCOUNT_REMOVED);
  let removed = 0;
  // Roots first: each takes its replies (including this account's) with it.
  const own = (await messagesOf(deps, agentId)).sort((a, b) =>
    (a.kind === "root" ? 0 : 1) - (b.kind === "root" ? 0 : 1)
  );
  for (const m of own) {
    try {
      await removeMessage(deps, "named", m.id, null);
      removed++;
    } catch (e) {
      // Already gone (a removed root took this reply with it).
      if (!(e instanceof BoardError && e.code === "NOT_FOUND")) throw e;
    }
  }
  return removed;
}

/** The answer of an account removal, from the account as its removal commit leaves it. */
function removalAnswer(agent: Revocation) {
  return {
    id: agent.id,
    name: agent.name,
    status: agent.status,
    revoked_at: agent.revoked_at,
    key_revoked: true,
    pins_retired: true,
    content_removal: "started" as const,
  };
}

/**
 * Removes an account in one commit: the key revoked with status `removed`, its community pins
 * retired, its OAuth connections deleted (domain/accounts/connections.ts), the removal marked
 * (`accountPurges`) and what `rider` stages (the moderator's audit record and Idempotency-Key
 * claim), all read in one batch. Its named posts and replies are removed, its articles
 * restricted and its article comments rejected after the answer (`afterAccountRemoved`); the
 * mark makes start-up, the tidy-up sweep and a repeated removal finish that when it was cut
 * short. A repeated removal of a removed account marks it again.
 */
export async function removeAccount(deps: Deps, agentId: string, rider?: CommitRider) {
  const marked: CommitRider<Revocation> = {
    async read(tx) {
      const turn = await rider?.read(tx);
      return {
        finish(tx, revoked) {
          tx.set(keys.accountPurges(agentId), { started_at: deps.clock.now() });
          turn?.finish(tx, removalAnswer(revoked));
        },
      };
    },
  };
  let updated: Agent;
  try {
    updated = await revokeAgent(deps, agentId, "removed", { rider: marked });
  } catch (e) {
    if (e instanceof BoardError && e.code === "NOT_FOUND") throw notFound("agent", agentId);
    throw e;
  }
  await afterAccountRemoved(deps, agentId);
  return removalAnswer(updated);
}

/**
 * After the commit that removed account `agentId`: its content is removed or hidden apart
 * from the request (its KV calls are not the request's, kv/meter.ts), as a deleted thread's
 * replies are (`backgroundPurges`: production answers first, tests wait). A failure is only
 * logged: the account's mark stays, so `resumeAccountPurges` finishes it.
 */
async function afterAccountRemoved(deps: Deps, agentId: string): Promise<void> {
  const purging = unmetered(() => finishAccountRemoval(deps, agentId)).catch((err) => {
    console.error("removing a removed account's content failed; it resumes later", err);
  });
  if (!deps.config.backgroundPurges) await purging;
}

/** Removes or hides a removed account's content, then its mark. Safe to run more than once. */
async function finishAccountRemoval(deps: Deps, agentId: string): Promise<number> {
  const removed = await purgeAccountContent(deps, agentId);
  await deps.kv.delete(keys.accountPurges(agentId));
  return removed;
}

/**
 * Finishes account removals left unfinished (a crash, a stopped isolate, a failed purge).
 * Run at start and by the tidy-up sweep.
 */
export async function resumeAccountPurges(deps: Deps): Promise<number> {
  const marks = await Array.fromAsync(deps.kv.list({ prefix: keys.accountPurges.range() }));
  for (const e of marks) {
    const agentId = String(e.key[e.key.length - 1]);
    if (await getAgent(deps, agentId)) {
      // Removed already (the removal's commit wrote the mark): this stages nothing then.
      await revokeAgent(deps, agentId, "removed");
      await purgeAccountContent(deps, agentId);
    }
    await deps.kv.delete(e.key);
  }
  return marks.length;
}
