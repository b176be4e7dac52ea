/**
 * Search over the named board, answered from the inverted index (domain/search/postings.ts).
 *
 * Every query token (and the topic filter, when given) is a posting list of sealed
 * blocks; messages not sealed yet (the tail) are checked from their term lists. In the
 * blocks the rarest list drives: it is read newest first (oldest first with
 * `after`) in chunks, each chunk narrowed by the other lists (domain/search/scan.ts), and
 * survivors are materialised from the message summaries: a missing summary is a removed
 * message, and messages of roots still being purged are hidden. A page stops after
 * `limit + 1` matches, so a common token costs no more than a rare one; when matches are
 * sparse, a work budget caps the page and the cursor says where the next page resumes
 * (docs/search.md). Newest first, the first read batch lists each list's newest blocks too,
 * and a page they decide reads only its candidates' summaries next (`blocksFirst`).
 */
import { keys } from "../../kv/keys.ts";
import { readNamed } from "../../kv/read_many.ts";
import type { Deps } from "../deps.ts";
import {
  type BoardHead,
  EMPTY_HEAD,
  messageActionTemplates,
  type MessageRecord,
} from "../board/mod.ts";
import type { Page, PageParams } from "../paging.ts";
import {
  intersectListed,
  type ListedBlocks,
  type ListedTail,
  listNewestBlocks,
  listNewestTail,
  listTail,
  type Materialised,
  noteSealedMarker,
  parseSearchQuery,
  type PostingList,
  prefetchBlocks,
  scan,
  Scanner,
  type ScanResult,
  sealedMarkerSeen,
  sealedState,
  searchWorkBudget,
} from "../search/mod.ts";
import { checkAfter, toItems, type ViewerSource, votesOn } from "./feeds.ts";
import type { ViewerVoteReads } from "../votes/mod.ts";
import { viewerObject } from "./feed_pages.ts";
import type { MessageItem } from "./message_items.ts";

export interface SearchQuery extends PageParams {
  /** The raw query text (validated here, before anything is read). */
  q: string | undefined;
  topic?: string;
}

interface SearchOptions {
  /** Work units the page may spend (default: `searchWorkBudget` of its list count). */
  workBudget?: number;
  /** Told the seqs whose summaries are read, as they are read (`Scanner.onMaterialise`). */
  onMaterialise?: (seqs: number[]) => void;
  /** When given, receives the reply counts of the threads of replies read beside them. */
  threadCounts?: Map<number, number>;
  /** When given, receives the work units and KV round trips the page spent. */
  stats?: { work: number; trips?: number; tailWork?: number };
}

const EMPTY_PAGE: Page<MessageRecord> = {
  items: [],
  next_before: null,
  next_after: null,
  newest_cursor: null,
};

/**
 * Finds named messages (roots and replies) holding every query token, newest first,
 * paged by message seq exactly like the feeds. Validates `q` before any read. Newest
 * first, the tail (messages above the sealed marker) comes first, then the posting
 * blocks; oldest first (`after`), the blocks first, then the tail.
 */
export async function searchRecords(
  deps: Deps,
  query: SearchQuery,
  options: SearchOptions = {},
): Promise<Page<MessageRecord>> {
  const terms = parseSearchQuery(query.q);
  const wanted: Omit<PostingList, "count">[] = terms.map((t) => ({
    prefix: keys.searchPostings.range(t),
    term: t,
  }));
  if (query.topic !== undefined) {
    wanted.push({ prefix: keys.searchTopicPostings.range(query.topic), topic: query.topic });
  }
  const ascending = query.after !== undefined;
  const batch = deps.config.searchBatch;
  // Newest first, the tail's term filters are listed in the first batch, beside the marker:
  // above a marker seen before (the marker only moves up, so the tail starts above it), or,
  // with none seen yet, the newest filters up to a batch and some (the tail is about that
  // long; the listing says how far down it reached, and a longer tail is listed again below).
  const seenMarker = sealedMarkerSeen(deps.kv);
  const earlyTo = (query.before ?? Infinity) - 1;
  const early: Promise<ListedTail> | null = ascending || earlyTo < 1
    ? null
    : seenMarker === undefined
    ? listNewestTail(deps.kv, earlyTo, batch + TAIL_SLACK, wanted)
    : seenMarker + 1 > earlyTo
    ? Promise.resolve({
      seqs: [],
      threads: new Map(),
      apart: new Set<number>(),
      listed: 0,
      last: null,
      from: seenMarker + 1,
    })
    : listTail(deps.kv, seenMarker + 1, earlyTo, false, wanted).then((listing) => ({
      ...listing,
      from: seenMarker + 1,
    }));
  early?.catch(() => {}); // awaited below, unless a read beside it failed first
  // Newest first with a marker seen before, each list's newest blocks are listed too, so that
  // a page they decide only reads its candidates' summaries next (`blocksFirst`); else its
  // newest block only, for its count: the running total of its newest block.
  const fast = early !== null && seenMarker !== undefined;
  const perList = fast ? prefetchBlocks(batch) : 1;
  const [{ headEntry, sealedEntry }, listed, earlyTail] = await Promise.all([
    readNamed(deps.kv, { headEntry: keys.boardHeads("named"), sealedEntry: keys.searchSealed() }),
    Promise.all(wanted.map((w) => listNewestBlocks(deps.kv, w.prefix, perList))),
    early,
  ]);
  const lists: PostingList[] = wanted
    .map((w, i) => ({ ...w, count: listed[i].count }))
    .sort((a, b) => a.count - b.count);
  const head = headEntry.value ?? EMPTY_HEAD;
  checkAfter("named", query, head);
  const sealed = sealedState(sealedEntry, deps.config.searchBatch);
  noteSealedMarker(deps.kv, sealed.upTo);
  const { limit } = query;
  const budget = options.workBudget ?? searchWorkBudget(lists.length);
  const scanner = new Scanner(deps.kv, sealed, budget, ascending);
  if (options.onMaterialise) scanner.onMaterialise = options.onMaterialise;
  // A seq the listings decide is in every one of them: the threads of the shortest cover it.
  const held = (l: ListedBlocks) => l.blocks.reduce((n, b) => n + b.seqs.length, 0);
  scanner.noteThreads(listed.reduce((a, b) => (held(b) < held(a) ? b : a)).threads);
  // The sealed part can match only when every list has postings.
  const blocksMatch = lists[0].count > 0;
  const found: ScanResult = { matches: [], more: false, resumeAt: null };
  const tailPart = async (from: number, to: number) => {
    const seqs = await scanner.tail(lists, from, to, earlyTail);
    materialised(seqs, await scanner.materialise(seqs, head, limit + 1 - found.matches.length));
  };
  /** Adds what `materialise` kept of `seqs`; where it stopped short, the page ends. */
  const materialised = (seqs: number[], m: Materialised) => {
    found.matches.push(...m.records);
    found.more = found.matches.length > limit;
    if (!found.more && m.decided < seqs.length) found.resumeAt = seqs[m.decided - 1];
  };
  const blockPart = async (params: PageParams) => {
    const r = await scan(scanner, lists, head, { ...params, limit: limit - found.matches.length });
    found.matches.push(...r.matches);
    found.more = found.matches.length > limit;
    found.resumeAt = r.resumeAt;
  };
  const below = query.before ?? head.seq + 1;
  const decided = fast
    ? await blocksFirst(scanner, {
      lists,
      listed,
      blocksMatch,
      trusted: Math.min(seenMarker!, sealed.upTo),
      top: Math.min(below - 1, head.seq),
      tail: earlyTail!,
      head,
      limit,
      materialised,
    })
    : null;
  if (decided !== null) {
    // The blocks listed first decided every seq from `decided` up: the scan goes on below.
    const stopped = found.more || found.resumeAt !== null;
    if (!stopped && blocksMatch && decided > 1) await blockPart({ limit, before: decided });
  } else if (ascending) {
    const after = query.after!;
    if (blocksMatch && after < sealed.upTo) await blockPart({ limit, after });
    if (!found.more && found.resumeAt === null) {
      await tailPart(Math.max(after, sealed.upTo) + 1, head.seq);
    }
  } else {
    await tailPart(Math.max(sealed.upTo + 1, 1), Math.min(below - 1, head.seq));
    if (!found.more && found.resumeAt === null && blocksMatch && sealed.upTo >= 1) {
      await blockPart({ limit, before: Math.min(below, sealed.upTo + 1) });
    }
  }
  for (const [seq, count] of scanner.threadCounts) options.threadCounts?.set(seq, count);
  if (options.stats) {
    Object.assign(options.stats, {
      work: scanner.work,
      trips: scanner.trips,
      tailWork: scanner.tailWork,
    });
  }
  if (found.matches.length === 0 && found.resumeAt === null) return EMPTY_PAGE;
  if (ascending) {
    const page = found.matches.slice(0, limit);
    const highest = page.length ? page[page.length - 1].seq : null;
    return {
      items: page.reverse(),
      next_before: null,
      next_after: found.more ? highest : found.resumeAt,
      newest_cursor: highest,
    };
  }
  const items = found.matches.slice(0, limit);
  return {
    items,
    next_before: found.more ? items[items.length - 1].seq : found.resumeAt,
    next_after: null,
    newest_cursor: items.length ? items[0].seq : null,
  };
}

/** Body entries listed past a batch when no marker was seen yet: a tail a little longer. */
const TAIL_SLACK = 32;

/** What `blocksFirst` decides a newest-first page from. */
interface FirstBatch {
  lists: PostingList[];
  /** Each wanted list's newest blocks as listed in the first batch (any order). */
  listed: ListedBlocks[];
  blocksMatch: boolean;
  /** Blocks up to here were committed before the first batch went out (a marker seen before). */
  trusted: number;
  /** Highest seq the page may hold. */
  top: number;
  /** The term filters listed from `trusted + 1` up. */
  tail: ListedTail;
  head: BoardHead;
  limit: number;
  /** Takes what the candidates' read kept. */
  materialised: (seqs: number[], m: Materialised) => void;
}

/**
 * A newest-first page from its first batch: the seqs above `trusted` from their term filters
 * (the tail listing), those below from the blocks listed, intersected in memory down to where
 * every list's listing reaches; then the candidates' summaries in one read. Returns the
 * lowest seq decided (the scan goes on below it when the page is not full; 1: nothing is
 * left), or null when the intersection would cost more than the page's work budget (the
 * page is then read as before).
 */
async function blocksFirst(scanner: Scanner, f: FirstBatch): Promise<number | null> {
  const lo = f.blocksMatch ? Math.max(1, ...f.listed.map((l) => l.from)) : 1;
  const hi = Math.min(f.trusted, f.top);
  const inBlocks = f.blocksMatch && lo <= hi
    ? intersectListed(f.listed, lo, hi)
    : { seqs: [], blocks: 0 };
  if (!scanner.affords(inBlocks.blocks, f.limit + 1)) return null;
  scanner.charge(inBlocks.blocks);
  const tailSeqs = await scanner.tail(f.lists, f.trusted + 1, f.top, f.tail);
  const candidates = [...tailSeqs, ...inBlocks.seqs];
  f.materialised(candidates, await scanner.materialise(candidates, f.head, f.limit + 1));
  return Math.min(lo, hi + 1);
}

/** A search result page as feed items for a viewer. */
async function searchMessages(
  deps: Deps,
  viewerSource: ViewerSource,
  query: SearchQuery,
  options: SearchOptions = {},
): Promise<Page<MessageItem>> {
  // The caller's votes on candidates are read beside their summaries.
  const voteReads: Promise<ViewerVoteReads | null>[] = [];
  const onMaterialise = (seqs: number[]) => {
    const read = (async () => votesOn(deps, await viewerSource, "named", seqs))();
    read.catch(() => {}); // awaited below, unless the search failed first
    voteReads.push(read);
  };
  // So are the threads of replies, where the index names them.
  const threadCounts = new Map<number, number>();
  const page = await searchRecords(deps, query, { ...options, onMaterialise, threadCounts });
  const viewer = await viewerSource;
  if (page.items.length === 0) return { ...page, items: [] };
  const reads = await Promise.all(voteReads);
  const votes = mergeVoteReads(reads);
  return { ...page, items: await toItems(deps, viewer, page.items, votes, threadCounts) };
}

/** The vote reads of several batches as one (null without a caller). */
function mergeVoteReads(reads: (ViewerVoteReads | null)[]): ViewerVoteReads | null {
  const present = reads.filter((r) => r !== null);
  if (present.length === 0) return null;
  const votes = new Map(present.flatMap((r) => [...r.votes]));
  return { ...present[present.length - 1], votes };
}

/**
 * The whole search response for every door (REST route, MCP tool): the page with the
 * feeds' cursors, `content_is_untrusted`, action templates and viewer. No pinned notices,
 * rules notice or articles block.
 */
export async function searchPage(
  deps: Deps,
  viewer: ViewerSource,
  query: SearchQuery,
  options: SearchOptions = {},
) {
  const [page, viewerObj] = await Promise.all([
    searchMessages(deps, viewer, query, options),
    viewerObject(deps, viewer),
  ]);
  return {
    items: page.items,
    next_before: page.next_before,
    next_after: page.next_after,
    newest_cursor: page.newest_cursor,
    content_is_untrusted: true as const,
    action_templates: messageActionTemplates("named"),
    viewer: viewerObj,
  };
}
