/** Revoking an account's key or removing the account, with its community pins retired. */
import { type Agent, type Revocation, revokeAgent as revokeAccountOnly } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import type { CommitRider } from "../commit_rider.ts";
import { retireCommunityPinsOf } from "../pins/mod.ts";
import { restampHead } from "../board/mod.ts";
import { restampStanding } from "../votes/mod.ts";
import type { Tx } from "../../kv/tx.ts";

/**
 * What a revocation ends in its own commit besides the key: the account's community pins, and
 * any post or vote whose batch read the account before the commit (the named board head and
 * the account's voting standing are written again, so that write's commit fails its check and
 * its retry finds the account ended).
 */
async function retireHoldings(tx: Tx, agentId: string): Promise<void> {
  await Promise.all([
    retireCommunityPinsOf(tx, agentId),
    restampHead(tx, "named"),
    restampStanding(tx, agentId),
  ]);
}

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
): Promise<Agent & { revoked_at: number }> {
  return revokeAccountOnly(deps, agentId, status, retireHoldings, opts);
}
