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
 * (docs/search.md).
 */
import { keys } from "../../kv/keys.ts";
import type { Deps } from "../deps.ts";
import { EMPTY_HEAD, messageActionTemplates, type MessageRecord } from "../board/mod.ts";
import type { Page, PageParams } from "../paging.ts";
import {
  decodeBlock,
  listTail,
  newestBlock,
  noteSealedMarker,
  parseSearchQuery,
  type PostingList,
  scan,
  Scanner,
  type ScanResult,
  sealedMarkerSeen,
  sealedState,
  searchWorkBudget,
} from "../search/mod.ts";
import { toItems, type ViewerSource, votesOn } from "./feeds.ts";
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
  // Newest first, the tail is read beside the marker when a marker seen before bounds it: the
  // marker only moves up, so the tail starts above the one seen (the listing is cut to the
  // tail once the marker is read).
  const seenMarker = sealedMarkerSeen(deps.kv);
  const earlyFrom = Math.max((seenMarker ?? 0) + 1, 1);
  const earlyTo = (query.before ?? Infinity) - 1;
  const early = !ascending && seenMarker !== undefined && earlyFrom <= earlyTo
    ? listTail(deps.kv, earlyFrom, earlyTo, false)
    : null;
  early?.catch(() => {}); // awaited below, unless a read beside it failed first
  // A list's count: the running total of its newest block (blocks cover sealed batches).
  const [[headEntry, sealedEntry], newest, earlyTail] = await Promise.all([
    deps.kv.getMany([keys.boardHeads("named"), keys.searchSealed()]),
    Promise.all(wanted.map((w) => newestBlock(deps.kv, w.prefix))),
    early,
  ]);
  const lists: PostingList[] = wanted
    .map((w, i) => ({ ...w, count: newest[i] ? decodeBlock(newest[i]!.value).total : 0 }))
    .sort((a, b) => a.count - b.count);
  const head = headEntry.value ?? EMPTY_HEAD;
  const sealed = sealedState(sealedEntry, deps.config.searchBatch);
  noteSealedMarker(deps.kv, sealed.upTo);
  const { limit } = query;
  const budget = options.workBudget ?? searchWorkBudget(lists.length);
  const scanner = new Scanner(deps.kv, sealed, budget, ascending);
  if (options.onMaterialise) scanner.onMaterialise = options.onMaterialise;
  // The sealed part can match only when every list has postings.
  const blocksMatch = lists[0].count > 0;
  const found: ScanResult = { matches: [], more: false, resumeAt: null };
  const tailPart = async (from: number, to: number) => {
    const need = limit + 1 - found.matches.length;
    const covered = earlyTail !== null && earlyFrom <= from;
    const seqs = await scanner.tail(lists, from, to, covered ? earlyTail : undefined);
    found.matches.push(...await scanner.materialise(seqs, head, need));
    found.more = found.matches.length > limit;
  };
  const blockPart = async (params: PageParams) => {
    const r = await scan(scanner, lists, head, {
      ...params,
      limit: limit - found.matches.length,
    });
    found.matches.push(...r.matches);
    found.more = found.matches.length > limit;
    found.resumeAt = r.resumeAt;
  };
  if (ascending) {
    const after = query.after!;
    if (blocksMatch && after < sealed.upTo) await blockPart({ limit, after });
    if (!found.more && found.resumeAt === null) {
      await tailPart(Math.max(after, sealed.upTo) + 1, head.seq);
    }
  } else {
    const below = query.before ?? head.seq + 1;
    await tailPart(Math.max(sealed.upTo + 1, 1), Math.min(below - 1, head.seq));
    if (!found.more && blocksMatch && sealed.upTo >= 1) {
      await blockPart({ limit, before: Math.min(below, sealed.upTo + 1) });
    }
  }
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
  const page = await searchRecords(deps, query, { ...options, onMaterialise });
  const viewer = await viewerSource;
  if (page.items.length === 0) return { ...page, items: [] };
  const reads = await Promise.all(voteReads);
  return { ...page, items: await toItems(deps, viewer, page.items, mergeVoteReads(reads)) };
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
