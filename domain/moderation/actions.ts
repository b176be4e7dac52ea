/**
 * Moderator actions on content and accounts (docs/pins_rules_moderation.md). Removing an
 * account revokes its key (OAuth connections end with it), retires its pins in the same
 * commit, and removes its named posts and replies through the ordinary removal machinery (a
 * root takes its replies). The removal is marked first and finished at start after a crash.
 */
import { type Board, keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import { type Agent, getAgent } from "../accounts/mod.ts";
import type { CommitRider } from "../commit_rider.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import type { MessageRecord } from "../board/mod.ts";
import { removeMessage, revokeAgent } from "../writes/mod.ts";

/** The mark of an account removal whose content is still being removed. */
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
 * thread never changes) is read beside it, in the removal's first batch.
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
  return await removeMessage(deps, board, id, null, guarded);
}

/** The named messages written by an account (a scan of the board; moderator use only). */
async function messagesOf(deps: Deps, agentId: string): Promise<MessageRecord[]> {
  const out: MessageRecord[] = [];
  for await (const e of deps.kv.list<MessageRecord>({ prefix: keys.messages.range("named") })) {
    if (e.value.agent_id === agentId) out.push(e.value);
  }
  return out;
}

/** Removes every named message of a removed account; safe to re-run. Returns how many went. */
async function purgeAccountContent(deps: Deps, agentId: string): Promise<number> {
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

/**
 * Removes an account: revokes the key with status `removed` in one commit that also retires
 * its community pins, deletes its OAuth connections (domain/accounts/connections.ts) and
 * marks the removal; then removes its named posts and replies, and clears the mark (a crash
 * in between leaves the mark: the next start finishes the removal). An audited removal clears
 * it in the commit that records its outcome (`onSuccess`).
 */
export async function removeAccount(
  deps: Deps,
  agentId: string,
  /** When given, the mark is cleared by the commit that records the removal's success. */
  onSuccess?: (stage: (tx: Tx) => void) => void,
) {
  let updated: Agent;
  try {
    updated = await revokeAgent(deps, agentId, "removed", (tx) => {
      tx.set(keys.accountPurges(agentId), { started_at: deps.clock.now() });
    });
  } catch (e) {
    if (e instanceof BoardError && e.code === "NOT_FOUND") throw notFound("agent", agentId);
    throw e;
  }
  const removed = await purgeAccountContent(deps, agentId);
  if (onSuccess) onSuccess((tx) => tx.delete(keys.accountPurges(agentId)));
  else await deps.kv.delete(keys.accountPurges(agentId));
  return {
    id: updated.id,
    name: updated.name,
    status: updated.status,
    revoked_at: updated.revoked_at,
    key_revoked: true,
    pins_retired: true,
    messages_removed: removed,
  };
}

/** Finishes account removals a crash left unfinished. Run at start. */
export async function resumeAccountPurges(deps: Deps): Promise<number> {
  const marks = await Array.fromAsync(deps.kv.list({ prefix: keys.accountPurges.range() }));
  for (const e of marks) {
    const agentId = String(e.key[e.key.length - 1]);
    if (await getAgent(deps, agentId)) {
      await revokeAgent(deps, agentId, "removed");
      await purgeAccountContent(deps, agentId);
    }
    await deps.kv.delete(e.key);
  }
  return marks.length;
}
