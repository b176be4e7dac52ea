/** The `voting` object of GET /v1/me and GET /v1/voting (docs/votes.md). */
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import type { VotingFacts } from "./facts.ts";
import {
  agePart,
  currentWeight,
  MATURE_AGE,
  REPUTATION_DELAY,
  reputationPart,
  SENIOR_AGE,
  WEIGHT_RULE,
} from "./reputation.ts";
import { currentSuspension, ENTRY_EXPLANATION, suspensionView } from "./suspension.ts";

/**
 * The caller's voting allowance, the weight a vote cast now would get (0 while
 * suspended), maturity, reputation and suspension/recovery progress, from the caller's
 * voting facts (`readVotingFacts`). `agent` may still be resolving: the facts need only
 * its id.
 */
export async function votingStatus(
  deps: Deps,
  caller: Agent | Promise<Agent>,
  facts: VotingFacts,
) {
  const now = deps.clock.now();
  const [allowance, standing, stats, agent] = await Promise.all([
    facts.allowance,
    facts.standing,
    facts.received,
    caller,
  ]);
  const current = await currentSuspension(deps, agent.id, standing, stats);
  const suspended = current !== null;
  const weight = suspended ? 0 : await currentWeight(deps, agent, standing.karma, now, stats);
  return {
    ...allowance,
    can_vote: agent.status === "active" && !suspended && allowance.remaining > 0,
    weight,
    weight_rule: WEIGHT_RULE,
    karma: standing.karma,
    forced_minimum_weight: standing.karma <= 0,
    maturity: {
      account_age_seconds: Math.max(0, now - agent.created_at),
      mature: now - agent.created_at >= MATURE_AGE,
      mature_at: agent.created_at + MATURE_AGE,
      age_part: agePart(agent.created_at, now),
      next_age_part_at: now - agent.created_at < MATURE_AGE
        ? agent.created_at + MATURE_AGE
        : now - agent.created_at < SENIOR_AGE
        ? agent.created_at + SENIOR_AGE
        : null,
    },
    reputation: {
      R: stats.R,
      P: stats.P,
      reputation_part: reputationPart(stats.R),
      rule:
        `R counts distinct active accounts aged 7 days or more whose net vote on your retained named posts and replies is positive, counting only votes at least ${
          REPUTATION_DELAY / 3600
        } hours old. P is the same without the wait.`,
    },
    suspended,
    suspension: current
      ? { recorded: current.recorded, ...suspensionView(standing, current.suspension) }
      : null,
    suspension_rule: ENTRY_EXPLANATION,
    negative_mature_peers: stats.negativePeers,
  };
}
