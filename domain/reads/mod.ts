/**
 * The read models: the pages that compose several areas for one viewer. The account state
 * of GET /v1/me (me.ts), the feeds and thread reads (feeds.ts, feed_pages.ts, with the pinned
 * notices of pinned.ts and the message items of message_items.ts) and the search page
 * (search_page.ts). It sits above every area it reads and no area below imports it. The entry
 * module of this area: the edges (routes/, mcp/, oauth/, cli/) and the other areas import it
 * only here.
 */
// ---- exports
export { feedPage, threadPage } from "./feed_pages.ts";
export type { ArticlesParams } from "./feed_pages.ts";
export { readMessage, toItems } from "./feeds.ts";
export type { FeedQuery } from "./feeds.ts";
export { accountState } from "./me.ts";
export type { MessageItem } from "./message_items.ts";
export { searchPage, searchRecords } from "./search_page.ts";
export type { SearchQuery } from "./search_page.ts";
