/**
 * The voting facts of one account that several parts of one answer show (GET /v1/me shows
 * them in `karma`, `voting` and `pinning`): its standing, its received-vote stats and its
 * daily vote allowance, each read once. They need only the account's id, so the reads start
 * when the facts are made, even before the caller's account is read, and go out with the
 * answer's other reads in one round trip (the stats add one more only when the account has
 * received votes: the voted messages and the voters).
 */
import type { Deps } from "../deps.ts";
import { voteAllowance } from "./allowance.ts";
import { readStanding, type VotingStanding } from "./karma.ts";
import { type ReceivedStats, receivedStats } from "./reputation.ts";

export interface VotingFacts {
  agentId: string;
  standing: Promise<VotingStanding>;
  received: Promise<ReceivedStats>;
  allowance: ReturnType<typeof voteAllowance>;
}

/** Starts reading an account's voting facts (no checks: for reads, never to decide a write). */
export function readVotingFacts(deps: Deps, agentId: string): VotingFacts {
  return {
    agentId,
    standing: readStanding(deps.kv, agentId),
    received: receivedStats(deps, agentId),
    allowance: voteAllowance(deps, agentId),
  };
}
