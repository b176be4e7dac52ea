/**
 * The boards: posting threads and replies, feeds and thread reads, publication quotas and
 * idempotency, message views. The entry module of this area: routes/, mcp/, oauth/ and cli/
 * import the area only here.
 */
// ---- exports
export { feedPage, threadPage } from "./feed_pages.ts";
export type { ArticlesParams } from "./feed_pages.ts";
export { readMessage } from "./feeds.ts";
export type { FeedQuery } from "./feeds.ts";
export {
  checkText,
  createReply,
  createThread,
  lookupPublication,
  removeMessage,
  resumePurges,
} from "./posts.ts";
export type { Author } from "./posts.ts";
