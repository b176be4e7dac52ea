/**
 * Search over the named board: tokenisation, the posting index and queries. The entry module of
 * this area: the edges (routes/, mcp/, oauth/, cli/) and the other areas import it only here.
 */
// ---- exports
export { indexEntryOf, isIndexed, reindexMessage, unindexMessage } from "./postings.ts";
export { searchPage } from "./query.ts";
export type { SearchQuery } from "./query.ts";
export { sealSearchBatches } from "./seal.ts";
export { MAX_QUERY_CHARS, MAX_QUERY_TERMS } from "./tokens.ts";
