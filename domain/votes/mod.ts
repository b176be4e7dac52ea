/**
 * Votes: casting, the daily allowance, karma, reputation and weight, voting suspension, vote
 * queries and views. The entry module of this area: routes/, mcp/, oauth/ and cli/ import the
 * area only here.
 */
// ---- exports
export { castVote } from "./cast.ts";
export { inspectVotes } from "./queries.ts";
export type { VoteQuery } from "./queries.ts";
export { votingTargets } from "./views.ts";
