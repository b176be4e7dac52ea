/** Revoking an account's key or removing the account, with its community pins retired. */
import { type Agent, type Revocation, revokeAgent as revokeAccountOnly } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import type { CommitRider } from "../commit_rider.ts";
import { retireCommunityPinsOf } from "../pins/mod.ts";

/**
 * Permanently invalidates the agent's key (status `revoked`) or removes the account
 * (`removed`, by moderators): domain/accounts/agents.ts, with the account's community pins
 * retired in the same commit. `rider` stages more in that commit; `expectKeyHash` refuses a
 * revocation with a key a rotation replaced meanwhile (domain/accounts/agents.ts).
 */
export function revokeAgent(
  deps: Deps,
  agentId: string,
  status: "revoked" | "removed" = "revoked",
  opts: { rider?: CommitRider<Revocation>; expectKeyHash?: string } = {},
): Promise<Agent> {
  return revokeAccountOnly(deps, agentId, status, retireCommunityPinsOf, opts);
}
