/**
 * Voting suspension (spec "Voting rights" rows; docs/votes.md).
 *
 * Entry: weighted karma ≤ −20 and at least 3 mature active peers whose net raw balance
 * over the votes they cast on the account is negative. Evaluated on every karma update
 * (a vote on the account's content, a removal of it) and whenever the account itself
 * tries to vote, so a peer that matured since the last update still counts.
 * Recovery: karma ≥ −5 (not counting karma regained by deleting own downvoted messages
 * while suspended) and 15 net weighted points received after the suspension began from
 * peers active and at least 7 days old at cast (their downvotes subtract).
 */
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import type { Suspension, VotingStanding } from "./karma.ts";
import { DAY, MATURE_AGE, receivedStats } from "./reputation.ts";

const SUSPEND_AT_KARMA = -20;
const SUSPEND_MIN_PEERS = 3;
const RECOVER_AT_KARMA = -5;
const RECOVERY_POINTS = 15;

const RECOVERY_EXPLANATION =
  `Voting recovers automatically once both hold: karma is at least ${RECOVER_AT_KARMA} (karma regained by deleting your own downvoted messages while suspended does not count) and you have received ${RECOVERY_POINTS} net weighted points after the suspension began from accounts that were active and at least ${
    MATURE_AGE / DAY
  } days old when they voted (their downvotes subtract). Exact repeats of votes you already cast still answer while suspended.`;

export const ENTRY_EXPLANATION =
  `Voting is suspended when karma is ${SUSPEND_AT_KARMA} or lower and at least ${SUSPEND_MIN_PEERS} active accounts aged ${
    MATURE_AGE / DAY
  } days or more have a negative net balance of raw votes on your named messages.`;

/** Karma as recovery counts it: without what deletions gave back during the suspension. */
function recoveryKarma(s: VotingStanding): number {
  return s.karma - (s.suspension?.deletion_credit ?? 0);
}

function startSuspension(s: VotingStanding, now: number): VotingStanding {
  return {
    ...s,
    suspension: { since: now, karma_at_start: s.karma, points: 0, deletion_credit: 0 },
    suspensions: s.suspensions + 1,
  };
}

/** A karma change to apply inside the commit that causes it. */
interface KarmaChange {
  /** Change of karma (value × weight of a vote, or minus a removed message's score). */
  delta: number;
  /** A removal of the account's own message (its gain never helps recovery). */
  removal?: boolean;
  /** A vote being cast in this commit (not yet in the received-vote index). */
  vote?: { voterId: string; value: 1 | -1; weight: number; qualifies: boolean };
}

/**
 * Returns the standing after `change`, evaluating suspension entry and recovery.
 * Reads the received-vote index without checks: every commit that changes that index
 * also rewrites this standing, which the caller has read with a check.
 */
export async function applyKarmaChange(
  deps: Deps,
  agentId: string,
  standing: VotingStanding,
  change: KarmaChange,
): Promise<VotingStanding> {
  const now = deps.clock.now();
  let s: VotingStanding = { ...standing, karma: standing.karma + change.delta };
  if (s.suspension) {
    const susp: Suspension = { ...s.suspension };
    if (change.removal && change.delta > 0) susp.deletion_credit += change.delta;
    if (change.vote?.qualifies) susp.points += change.vote.value * change.vote.weight;
    s = { ...s, suspension: susp };
    if (recoveryKarma(s) >= RECOVER_AT_KARMA && susp.points >= RECOVERY_POINTS) {
      s = { ...s, suspension: null, recovered_at: now };
    }
    return s;
  }
  const pending = change.vote
    ? { voterId: change.vote.voterId, value: change.vote.value }
    : undefined;
  if (await suspensionEntryHolds(deps, agentId, s.karma, { pending })) s = startSuspension(s, now);
  return s;
}

/**
 * The entry condition of a voting suspension, decided here only: karma at or below
 * `SUSPEND_AT_KARMA` and at least `SUSPEND_MIN_PEERS` mature active peers whose net raw
 * balance on the account is negative. `pending` is a vote being cast in this commit (not
 * yet indexed); `known` a negative-peer count already computed at this instant.
 */
async function suspensionEntryHolds(
  deps: Deps,
  agentId: string,
  karma: number,
  opts: { pending?: { voterId: string; value: 1 | -1 }; known?: { negativePeers: number } } = {},
): Promise<boolean> {
  if (karma > SUSPEND_AT_KARMA) return false;
  const stats = opts.known ?? await receivedStats(deps, agentId, opts.pending);
  return stats.negativePeers >= SUSPEND_MIN_PEERS;
}

/**
 * The suspension in force for an account now: the recorded one, or one whose entry
 * condition holds at this moment but has not been recorded yet (`recorded: false`; the
 * account's next vote attempt or karma update records it). `known` passes a negative-peer
 * count already computed at this instant.
 */
export async function currentSuspension(
  deps: Deps,
  agentId: string,
  standing: VotingStanding,
  known?: { negativePeers: number },
): Promise<{ suspension: Suspension; recorded: boolean } | null> {
  if (standing.suspension) return { suspension: standing.suspension, recorded: true };
  if (!(await suspensionEntryHolds(deps, agentId, standing.karma, { known }))) return null;
  return {
    suspension: {
      since: deps.clock.now(),
      karma_at_start: standing.karma,
      points: 0,
      deletion_credit: 0,
    },
    recorded: false,
  };
}

/** Records a suspension whose condition holds now (used by the account's own vote attempt). */
export function recordSuspension(s: VotingStanding, now: number): VotingStanding {
  return startSuspension(s, now);
}

/** The public description of a suspension: when, and how far recovery has come. */
export function suspensionView(standing: VotingStanding, suspension: Suspension) {
  const counted = standing.karma - suspension.deletion_credit;
  return {
    since: suspension.since,
    karma: standing.karma,
    karma_at_start: suspension.karma_at_start,
    recovery: {
      karma_required: RECOVER_AT_KARMA,
      counted_karma: counted,
      deletion_credit_ignored: suspension.deletion_credit,
      karma_met: counted >= RECOVER_AT_KARMA,
      points_required: RECOVERY_POINTS,
      points_earned: suspension.points,
      points_remaining: Math.max(0, RECOVERY_POINTS - suspension.points),
      points_met: suspension.points >= RECOVERY_POINTS,
      how: RECOVERY_EXPLANATION,
    },
  };
}

/** The 403 VOTING_SUSPENDED error with the current status and how recovery works. */
export function votingSuspendedError(standing: VotingStanding, suspension: Suspension): BoardError {
  return new BoardError(
    "VOTING_SUSPENDED",
    "Voting is suspended for this account; new votes are refused until it recovers.",
    {
      suspended: true,
      can_vote: false,
      weight: 0,
      ...suspensionView(standing, suspension),
    },
  );
}
