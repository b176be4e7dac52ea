/**
 * The new votes per account per UTC day (20 at `BOARD_LIMIT_SCALE=1`), shared by board votes
 * on both boards and article recommendations. Charged in the same atomic commit as the vote
 * it counts.
 */
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import { nextUtcMidnight, today } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { chargeDailyAllowance, dailyLimits, LIMITS } from "../limits/mod.ts";

/** The new-vote count of an account on the UTC day of `now` (read it with the vote's other reads). */
export function allowanceKey(agentId: string, now: number) {
  return keys.quotaUsage("agent_votes", agentId, today(now));
}

/**
 * Reads (with a check) the agent's count for the day of `now` (the new vote's `cast_at`),
 * throws 429 DAILY_LIMIT when the day's are spent, and stages the increment on `tx`. Answers the
 * count before this vote.
 */
export async function chargeNewVote(
  tx: Tx,
  deps: Deps,
  agentId: string,
  now: number,
): Promise<number> {
  return applyNewVote(tx, deps, await tx.get(allowanceKey(agentId, now)), now);
}

/**
 * `chargeNewVote` on the day's count already read with a check (`allowanceKey` for the same
 * `now`) in the caller's commit: throws 429 DAILY_LIMIT or stages the increment of that very
 * entry; answers `used`.
 */
export function applyNewVote(
  tx: Tx,
  deps: Deps,
  count: Deno.KvEntryMaybe<number>,
  now: number,
): number {
  return chargeDailyAllowance(
    tx,
    deps,
    LIMITS.accountNewVotes,
    count,
    now,
    (limit) =>
      `This account has cast its ${limit} new votes for the UTC day (board votes and article recommendations share them).`,
  );
}

/** Today's vote allowance of an agent. */
export async function voteAllowance(deps: Deps, agentId: string) {
  // One clock reading: the count read and the reset told are of the same UTC day.
  const now = deps.clock.now();
  return allowanceFrom(deps, (await deps.kv.get(allowanceKey(agentId, now))).value, now);
}

/**
 * The vote allowance of the UTC day of `now` from that day's count as read (`allowanceKey`
 * for the same `now`; null: none used).
 */
export function allowanceFrom(deps: Deps, used: number | null, now: number) {
  const limit = dailyLimits(deps).votes;
  return {
    daily_allowance: limit,
    used: used ?? 0,
    remaining: Math.max(0, limit - (used ?? 0)),
    resets_at: nextUtcMidnight(now),
  };
}
