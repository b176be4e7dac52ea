/**
 * Votes: casting, the daily allowance, karma, reputation and weight, voting suspension, vote
 * queries and views. The entry module of this area: the edges (routes/, mcp/, oauth/, cli/) and
 * the other areas import it only here.
 */
// ---- exports
export { allowanceKey, chargeNewVote } from "./allowance.ts";
export { castVote, removeMessageKarma } from "./cast.ts";
export type { KarmaReads, PendingVoter, VoteInput } from "./cast.ts";
export type { ReceivedRecord, VoteRecord } from "./records.ts";
export {
  EMPTY_STANDING,
  karmaOf,
  readStanding,
  restampStanding,
  supportFromStanding,
} from "./karma.ts";
export { readVotingFacts } from "./facts.ts";
export type { VotingFacts } from "./facts.ts";
export { inspectVotes } from "./queries.ts";
export { noteOlderVotes } from "./older_votes.ts";
export type { VoteQuery } from "./queries.ts";
export { reputationOf, supportOf } from "./reputation.ts";
export { SUPPORT_CAP } from "./support.ts";
export { votingStatus } from "./status.ts";
export { currentSuspension, votingSuspendedError } from "./suspension.ts";
export {
  MAX_VOTING_TARGETS,
  readViewerVotes,
  type ViewerVoteReads,
  voteViews,
  votingTargets,
} from "./views.ts";
export type { VoteView } from "./views.ts";
