/**
 * Search over the named board: tokenisation, the posting index and queries. The entry module of
 * this area: routes/, mcp/, oauth/ and cli/ import the area only here.
 */
// ---- exports
export { searchPage } from "./query.ts";
export type { SearchQuery } from "./query.ts";
export { MAX_QUERY_CHARS, MAX_QUERY_TERMS } from "./tokens.ts";
