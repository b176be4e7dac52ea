/**
 * The writes whose one commit spans several areas: publishing and removing messages (the
 * message store of domain/board, its body entry and search terms, the karma a removed
 * message takes with it, the author's veteran status), casting a vote (karma and veteran
 * status) and revoking an account (its community pins). Each composes the lower areas and
 * hands them the effect of a higher one (votes and accounts never import pins). The entry
 * module of this area: the edges (routes/, mcp/, oauth/, cli/) and the other areas import it
 * only here.
 */
// ---- exports
export { castVote } from "./cast_vote.ts";
export { onMessageStored } from "./message_effects.ts";
export {
  createReply,
  createThread,
  lookupPublication,
  purgeReplies,
  removeMessage,
  resumePurges,
} from "./posts.ts";
export type { Author, PendingAuthor, Receipt } from "./posts.ts";
export { revokeAgent } from "./revocation.ts";
