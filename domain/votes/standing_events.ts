/** Voting suspensions and recoveries as agent events (domain/agent_events.ts). */
import type { Tx } from "../../kv/tx.ts";
import { noteStandingChanges } from "../agent_events.ts";
import type { VotingStanding } from "./karma.ts";

/** Stages `voting_suspended` / `voting_restored` when the standing's suspension flipped. */
export async function votingChanges(
  tx: Tx,
  at: number,
  agentId: string,
  before: VotingStanding,
  after: VotingStanding,
): Promise<void> {
  const was = before.suspension !== null;
  const is = after.suspension !== null;
  if (was === is) return;
  await noteStandingChanges(tx, at, agentId, [is ? "voting_suspended" : "voting_restored"]);
}
