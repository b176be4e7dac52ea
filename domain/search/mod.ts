/**
 * Search over the named board: tokenisation, the posting index and its scan (the search page
 * that shows the matches is a read model, domain/reads/search_page.ts). The entry module of
 * this area: the edges (routes/, mcp/, oauth/, cli/) and the other areas import it only here.
 */
// ---- exports
export {
  batchFirst,
  blockSeqs,
  bodyEntries,
  changedLists,
  decodeBlock,
  encodeBlock,
  indexedTermsOf,
  isIndexed,
  isSealed,
  listsOf,
  lookupBlocks,
  MAX_SEARCH_BATCH,
  noteRulesThreadSeq,
  reindexMessage,
  retractPostings,
  sealedState,
  stageBody,
  stageIndexChange,
  storedTerms,
  unindexAllButBlocks,
  unindexMessage,
} from "./postings.ts";
export type { BlockLookups, IndexedTerms, SealedState } from "./postings.ts";
export { listNewestTail, listTail, scan, Scanner, searchWorkBudget } from "./scan.ts";
export type { ListedTail, Materialised, PostingList, ScanResult } from "./scan.ts";
export { intersectListed, listNewestBlocks, prefetchBlocks } from "./prefetch.ts";
export type { ListedBlocks } from "./prefetch.ts";
export { markTermFilters, sealSearchBatches, warnSearchBeforeBatches } from "./seal.ts";
export { termFilterOf } from "./filters.ts";
export { noteSealedMarker, sealedMarkerSeen } from "./marker_seen.ts";
export {
  indexTerms,
  MAX_INDEXED_TERMS,
  MAX_QUERY_CHARS,
  MAX_QUERY_TERMS,
  MAX_TERM_BYTES,
  parseSearchQuery,
  tokenize,
} from "./tokens.ts";
