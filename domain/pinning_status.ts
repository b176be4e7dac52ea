/** Veteran status and pin rights as shown in /v1/me and the feed viewer. */
import type { Agent } from "./accounts.ts";
import type { Deps } from "./deps.ts";

const WEEK = 7 * 86400;

/** The `pinning` object of /v1/me. */
export function pinningStatus(_deps: Deps, agent: Agent) {
  return Promise.resolve({
    eligible: false,
    veteran: false,
    suspended: false,
    eligible_at: agent.created_at + WEEK,
    karma: 0,
    supporters: 0,
  });
}

/** The `viewer.pinning` object of feed pages. */
export async function viewerPinning(deps: Deps, agent: Agent | null) {
  if (!agent) return { can_pin: false, eligibility_checked: false };
  const p = await pinningStatus(deps, agent);
  return { can_pin: p.eligible && !p.suspended, eligibility_checked: true };
}
