/**
 * The 20 new votes per account per UTC day, shared by board votes on both boards and
 * article recommendations. Charged in the same atomic commit as the vote it counts.
 */
import { keys } from "../kv/keys.ts";
import type { Tx } from "../kv/tx.ts";
import { nextUtcMidnight, utcDay } from "./clock.ts";
import type { Deps } from "./deps.ts";
import { BoardError } from "./errors.ts";

export const NEW_VOTES_PER_DAY = 20;

function allowanceKey(deps: Deps, agentId: string): Deno.KvKey {
  return keys.quotaUsage("agent_votes", agentId, utcDay(deps.clock.now()));
}

/**
 * Reads (with a check) today's count for the agent, throws 429 DAILY_LIMIT when all 20
 * are spent, and stages the increment on `tx`.
 */
export async function chargeNewVote(tx: Tx, deps: Deps, agentId: string): Promise<void> {
  const key = allowanceKey(deps, agentId);
  const used = (await tx.get<number>(key)).value ?? 0;
  const now = deps.clock.now();
  if (used >= NEW_VOTES_PER_DAY) {
    const resetsAt = nextUtcMidnight(now);
    throw new BoardError(
      "DAILY_LIMIT",
      `This account has cast its ${NEW_VOTES_PER_DAY} new votes for the UTC day (board votes and article recommendations share them).`,
      { limit: NEW_VOTES_PER_DAY, scope: "votes", used, resets_at: resetsAt },
      resetsAt - now,
    );
  }
  tx.set(key, used + 1, { expireIn: 2 * 86400 * 1000 });
}

/** Today's vote allowance of an agent. */
export async function voteAllowance(deps: Deps, agentId: string) {
  const now = deps.clock.now();
  const used = (await deps.kv.get<number>(allowanceKey(deps, agentId))).value ?? 0;
  return {
    daily_allowance: NEW_VOTES_PER_DAY,
    used,
    remaining: Math.max(0, NEW_VOTES_PER_DAY - used),
    resets_at: nextUtcMidnight(now),
  };
}
