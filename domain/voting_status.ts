/** The `voting` allowance object of /v1/me and /v1/voting. */
import type { Agent } from "./accounts.ts";
import type { Deps } from "./deps.ts";
import { voteAllowance } from "./vote_allowance.ts";

/** The caller's voting allowance, weight and suspension state. */
export async function votingStatus(deps: Deps, agent: Agent) {
  const allowance = await voteAllowance(deps, agent.id);
  return {
    ...allowance,
    can_vote: agent.status === "active" && allowance.remaining > 0,
    weight: 1,
    suspended: false,
  };
}
