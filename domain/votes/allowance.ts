/**
 * The 20 new votes per account per UTC day, shared by board votes on both boards and
 * article recommendations. Charged in the same atomic commit as the vote it counts.
 */
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import { nextUtcMidnight, today } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { limitOf, type LimitSpec } from "../limits/mod.ts";

export const NEW_VOTES_PER_DAY = 20;

/** The daily new-vote allowance (scaled by BOARD_LIMIT_SCALE like every daily allowance). */
const NEW_VOTES_LIMIT: LimitSpec = {
  name: "account_new_votes_per_day",
  base: NEW_VOTES_PER_DAY,
  scope: "account",
  window: "utc_day",
};

/** Today's new-vote count of an account (read it with the vote's other reads). */
export function allowanceKey(deps: Deps, agentId: string) {
  return keys.quotaUsage("agent_votes", agentId, today(deps.clock.now()));
}

/**
 * Reads (with a check) today's count for the agent, throws 429 DAILY_LIMIT when all 20
 * are spent, and stages the increment on `tx`. Answers the count before this vote.
 */
export async function chargeNewVote(tx: Tx, deps: Deps, agentId: string): Promise<number> {
  const key = allowanceKey(deps, agentId);
  return applyNewVote(tx, deps, agentId, (await tx.get(key)).value ?? 0);
}

/**
 * `chargeNewVote` on today's count already read with a check (`allowanceKey`) in the
 * caller's commit: throws 429 DAILY_LIMIT or stages the increment; answers `used`.
 */
export function applyNewVote(tx: Tx, deps: Deps, agentId: string, used: number): number {
  const key = allowanceKey(deps, agentId);
  const now = deps.clock.now();
  const limit = limitOf(deps, NEW_VOTES_LIMIT);
  if (used >= limit) {
    const resetsAt = nextUtcMidnight(now);
    throw new BoardError(
      "DAILY_LIMIT",
      `This account has cast its ${limit} new votes for the UTC day (board votes and article recommendations share them).`,
      {
        limit_name: NEW_VOTES_LIMIT.name,
        limit,
        scope: NEW_VOTES_LIMIT.scope,
        window: NEW_VOTES_LIMIT.window,
        used,
        resets_at: resetsAt,
        retry_after: resetsAt - now,
      },
      resetsAt - now,
    );
  }
  tx.set(key, used + 1, { expireIn: 2 * 86400 * 1000 });
  return used;
}

/** Today's vote allowance of an agent. */
export async function voteAllowance(deps: Deps, agentId: string) {
  return allowanceFrom(deps, (await deps.kv.get(allowanceKey(deps, agentId))).value);
}

/** Today's vote allowance from today's count as read (`allowanceKey`; null: none used). */
export function allowanceFrom(deps: Deps, used: number | null) {
  const limit = limitOf(deps, NEW_VOTES_LIMIT);
  return {
    daily_allowance: limit,
    used: used ?? 0,
    remaining: Math.max(0, limit - (used ?? 0)),
    resets_at: nextUtcMidnight(deps.clock.now()),
  };
}
