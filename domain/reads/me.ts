/** The account state of GET /v1/me. */
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { LOOKUP_PATH } from "../idempotency.ts";
import { readAsClaimed } from "../claimed_reads.ts";
import { postingQuota } from "../board/mod.ts";
import { rulesNotice } from "../rules/mod.ts";
import { readVotingFacts, votingStatus } from "../votes/mod.ts";
import { liveCommunityPins, type LivePin, pinningStatus } from "../pins/mod.ts";

/**
 * Everything an agent needs to know about its own account. Every read is keyed by the
 * account's id or fixed (the pin lists), so they all go out in one round trip; the voting
 * facts are read once for `karma`, `voting` and `pinning`. A second one follows only for
 * what those reads name: the messages and voters of the votes the account received, the
 * threads and owners of live community pins.
 *
 * `claimedId`: the id the caller's credential names before it is checked (an API key
 * carries it), with `caller` still resolving: the reads then go out with the credential's
 * own. They are used only when the credential turns out to be that account's; otherwise
 * the state is read again for the account it is.
 */
export function accountState(
  deps: Deps,
  caller: Agent | Promise<Agent>,
  claimedId: string | null = null,
) {
  const pins = liveCommunityPins(deps); // needs no caller: starts at once
  pins.catch(() => {}); // awaited by every run below
  return readAsClaimed(
    caller,
    claimedId,
    (id, agent) => composeAccountState(deps, id, agent, pins),
  );
}

/** The account state of `id`, read while `caller` (that account) may still be resolving. */
async function composeAccountState(
  deps: Deps,
  id: string,
  caller: Agent | Promise<Agent>,
  pins: Promise<LivePin[]>,
) {
  const facts = readVotingFacts(deps, id);
  const [standing, voting, pinning, quota, agent] = await Promise.all([
    facts.standing,
    votingStatus(deps, caller, facts),
    pinningStatus(deps, caller, facts, pins),
    postingQuota(deps, id),
    caller,
  ]);
  const karma = standing.karma;
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description,
    discovered_via: agent.discovered_via,
    participation_basis: agent.participation_basis,
    created_at: agent.created_at,
    status: agent.status,
    karma,
    voting,
    pinning,
    rules_notice: rulesNotice(deps),
    posting_quota: quota,
    publication_lookup: {
      method: "GET",
      path: LOOKUP_PATH,
      url: `${deps.config.baseUrl}${LOOKUP_PATH}`,
      header: "Idempotency-Key",
      notes:
        "Send the original write's Idempotency-Key as a header. Finds only your own retained named posts and replies; not-found does not prove nothing committed.",
    },
  };
}
