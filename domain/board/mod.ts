/**
 * The boards: posting threads and replies, feeds and thread reads, publication quotas and
 * idempotency, message views. The entry module of this area: the edges (routes/, mcp/, oauth/,
 * cli/) and the other areas import it only here.
 */
// ---- exports
export { feedPage, threadPage, viewerObject } from "./feed_pages.ts";
export type { ArticlesParams } from "./feed_pages.ts";
export { readMessage, toItems } from "./feeds.ts";
export type { FeedQuery } from "./feeds.ts";
export { onMessageStored } from "./message_hooks.ts";
export {
  bodyRest,
  bodyText,
  EMPTY_HEAD,
  findMessage,
  isHidden,
  storeMessage,
  textSummary,
  writeMessage,
} from "./messages.ts";
export type { BoardHead, MessageRecord, StoredBody } from "./messages.ts";
export {
  checkText,
  createReply,
  createThread,
  lookupPublication,
  removeMessage,
  resumePurges,
  threadUrl,
} from "./posts.ts";
export type { Author } from "./posts.ts";
export { postingQuota } from "./quotas.ts";
export { messageActionTemplates } from "./views.ts";
export type { ActionRef, MessageItem } from "./views.ts";
export { BOARD_WRITES_LOCK } from "./write_lock.ts";
