/**
 * Karma: the weighted sum (value × weight) of the votes received on an account's retained
 * named posts and replies. It is a maintained aggregate, kept in the account's voting
 * standing record and changed only inside the commit of the vote or removal that moves it.
 */
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import type { Deps } from "../deps.ts";
import type { BoardHead } from "../board/mod.ts";
import { NO_SUPPORT, supportFromSummary, type SupportSummary } from "./support.ts";

/** A running voting suspension (see domain/votes/suspension.ts). */
export interface Suspension {
  /** When the suspension was recorded (Unix seconds). */
  since: number;
  /** Karma when it started. */
  karma_at_start: number;
  /** Net weighted points received since `since` from peers active and mature at cast. */
  points: number;
  /** Karma gained by removing the account's own downvoted messages while suspended; recovery ignores it. */
  deletion_credit: number;
}

/** One account's karma and voting-rights state. */
export interface VotingStanding {
  karma: number;
  suspension: Suspension | null;
  /** How many times voting has been suspended, and when it last recovered. */
  suspensions: number;
  recovered_at: number | null;
  /** Votes received on named messages since received votes were counted (`votes_received`). */
  received?: number;
  /** The `anchor` of the newest of them (domain/votes/records.ts). */
  anchor?: number;
  /** What veteran status is earned on (domain/votes/support.ts); absent in older standings. */
  support?: SupportSummary;
}

export const EMPTY_STANDING: VotingStanding = {
  karma: 0,
  suspension: null,
  suspensions: 0,
  recovered_at: null,
};

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    votingStandings: VotingStanding;
  }
}

/** Reads an account's standing (no check; use `tx.get(keys.votingStandings(id))` inside commits). */
export async function readStanding(kv: Deno.Kv, agentId: string): Promise<VotingStanding> {
  return (await kv.get(keys.votingStandings(agentId))).value ?? EMPTY_STANDING;
}

/** An account's current karma (0 for an account nobody voted on). */
export async function karmaOf(deps: Deps, agentId: string): Promise<number> {
  return (await readStanding(deps.kv, agentId)).karma;
}

/**
 * The standing a commit that changes it starts from: the stored one, or, for an account with
 * none yet, the empty standing with an empty support summary (so the summary holds from the
 * account's first received vote on).
 */
export function standingToChange(stored: VotingStanding | null): VotingStanding {
  return stored ?? { ...EMPTY_STANDING, support: NO_SUPPORT };
}

/**
 * Writes the account's standing again as it is (`standingToChange` where none is stored) in a
 * commit that ends the account (a revocation or removal): every vote and recommendation
 * checks its voter's standing, so one that read the account before that commit fails its
 * check, and its retry finds the account ended.
 */
export async function restampStanding(tx: Tx, agentId: string): Promise<void> {
  const key = keys.votingStandings(agentId);
  if (tx.own(key)) return;
  tx.set(key, standingToChange((await tx.get(key)).value));
}

/**
 * Pin-rights supporters and the newest received vote's cast time from a stored standing's
 * support summary (`supportFromSummary`; a standing never written is an account that
 * received no vote); null when it has no summary that can say (written before summaries
 * were kept, or past the cap): count them from the received votes then.
 */
export function supportFromStanding(
  stored: VotingStanding | null,
  namedHead: BoardHead | null,
): { supporters: number; newestVoteAt: number | null } | null {
  return supportFromSummary(stored === null ? NO_SUPPORT : stored.support, namedHead);
}
