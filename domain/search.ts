/**
 * Search over the named board, answered from the inverted index (search_index.ts).
 *
 * Every query token (and the topic filter, when given) is a posting list keyed by
 * message seq. The rarest list drives: it is read newest first (oldest first with
 * `after`) in growing chunks, and each chunk is narrowed by the other lists, rarest
 * first, either by point reads of the chunk's keys or, when that list is dense enough,
 * by one range read over the chunk's seq window. Survivors are materialised from the
 * message summaries: a missing summary is a removed message, and messages of roots
 * still being purged are hidden. A page stops after `limit + 1` matches, so a common
 * token costs no more than a rare one; when matches are sparse, a work budget caps
 * the page and the cursor says where the next page resumes (docs/search.md).
 */
import { keys } from "../kv/keys.ts";
import type { Agent } from "./accounts.ts";
import type { Deps } from "./deps.ts";
import { viewerObject } from "./feed_pages.ts";
import { toItems } from "./feeds.ts";
import { type BoardHead, EMPTY_HEAD, isHidden, type MessageRecord } from "./messages.ts";
import type { Page, PageParams } from "./paging.ts";
import { parseSearchQuery } from "./search_tokens.ts";
import { messageActionTemplates, type MessageItem } from "./views.ts";

export interface SearchQuery extends PageParams {
  /** The raw query text (validated here, before anything is read). */
  q: string | undefined;
  topic?: string;
}

export interface SearchOptions {
  /** Work units one page may spend (see SEARCH_WORK_BUDGET). */
  workBudget?: number;
  /** When given, receives the work units the page spent (for tests and benchmarks). */
  stats?: { work: number };
}

/**
 * Work units one page may spend before it returns what it found with a resume cursor.
 * One unit is about one listed index entry (a few microseconds on the embedded store);
 * a point read costs POINT_READ_COST units and every KV round trip ROUND_TRIP_COST.
 */
export const SEARCH_WORK_BUDGET = 1000;
const POINT_READ_COST = 3;
const ROUND_TRIP_COST = 16;
const MIN_CHUNK = 16;
const MAX_CHUNK = 256;
const GET_MANY = 10;

interface PostingList {
  prefix: Deno.KvKey;
  count: number;
}

interface ScanResult {
  /** Matches in scan order (newest first, or oldest first with `after`). */
  matches: MessageRecord[];
  /** True when `limit + 1` matches were found. */
  more: boolean;
  /** Last driver seq examined when the budget ran out before the list did. */
  resumeAt: number | null;
}

function seqOf(key: Deno.KvKey): number {
  return key[key.length - 1] as number;
}

/** Reads keys in getMany batches of 10, all batches at once. */
async function readMany<T>(kv: Deno.Kv, keyList: Deno.KvKey[]): Promise<Deno.KvEntryMaybe<T>[]> {
  const parts: Promise<Deno.KvEntryMaybe<T>[]>[] = [];
  for (let i = 0; i < keyList.length; i += GET_MANY) {
    parts.push(kv.getMany<T[]>(keyList.slice(i, i + GET_MANY)) as Promise<Deno.KvEntryMaybe<T>[]>);
  }
  return (await Promise.all(parts)).flat();
}

/** Reads the index and summaries for one page, counting the work it spends. */
class Scanner {
  work = 0;
  constructor(readonly kv: Deno.Kv, readonly span: number) {}

  /** Reads up to `limit` driver seqs from `cursor` on (see `scan`). */
  async driver(
    list: PostingList,
    cursor: number | undefined,
    ascending: boolean,
    limit: number,
  ): Promise<number[]> {
    const p = list.prefix;
    const selector: Deno.KvListSelector = ascending
      ? { prefix: p, start: [...p, cursor!] }
      : cursor !== undefined
      ? { prefix: p, end: [...p, cursor] }
      : { prefix: p };
    const seqs: number[] = [];
    for await (
      const e of this.kv.list(selector, { limit, batchSize: limit, reverse: !ascending })
    ) {
      seqs.push(seqOf(e.key));
    }
    this.work += ROUND_TRIP_COST + seqs.length;
    return seqs;
  }

  /**
   * Keeps the seqs that `list` also holds (order preserved): by point reads, or, when the
   * list is dense enough over the seqs' window, by one range read of that window.
   */
  async narrow(list: PostingList, seqs: number[]): Promise<number[]> {
    let lo = seqs[0];
    let hi = seqs[0];
    for (const s of seqs) {
      if (s < lo) lo = s;
      if (s > hi) hi = s;
    }
    const pointCost = seqs.length * POINT_READ_COST;
    const expected = (list.count * (hi - lo + 1)) / this.span;
    if (expected >= pointCost) return await this.#probe(list, seqs);
    // One range read over the window, capped at what probing would cost.
    const found = new Set<number>();
    const cap = Math.max(1, pointCost);
    let lastListed = lo - 1;
    const iter = this.kv.list(
      { start: [...list.prefix, lo], end: [...list.prefix, hi + 1] },
      { limit: cap, batchSize: Math.min(cap, 500) },
    );
    for await (const e of iter) {
      lastListed = seqOf(e.key);
      found.add(lastListed);
    }
    this.work += ROUND_TRIP_COST + found.size;
    const kept = seqs.filter((s) => found.has(s));
    if (found.size < cap) return kept;
    // The cap was hit: seqs beyond the listed part still need point reads.
    const rest = new Set(await this.#probe(list, seqs.filter((s) => s > lastListed)));
    return seqs.filter((s) => found.has(s) || rest.has(s));
  }

  async #probe(list: PostingList, seqs: number[]): Promise<number[]> {
    if (seqs.length === 0) return [];
    this.work += ROUND_TRIP_COST + seqs.length * POINT_READ_COST;
    const entries = await readMany(this.kv, seqs.map((s) => [...list.prefix, s]));
    return seqs.filter((_, i) => entries[i].versionstamp !== null);
  }

  /** Reads the summaries of candidates; keeps live, visible ones up to `want`. */
  async materialise(seqs: number[], head: BoardHead, want: number): Promise<MessageRecord[]> {
    const out: MessageRecord[] = [];
    let i = 0;
    while (i < seqs.length && out.length < want) {
      const part = seqs.slice(i, i + Math.max(want - out.length, 1));
      i += part.length;
      this.work += ROUND_TRIP_COST + part.length * POINT_READ_COST;
      const recs = await readMany<MessageRecord>(
        this.kv,
        part.map((s) => keys.messages("named", s)),
      );
      for (const e of recs) {
        if (e.value && !isHidden(e.value, head)) out.push(e.value);
        if (out.length === want) break;
      }
    }
    return out;
  }
}

/**
 * Expected work per driver entry and expected share of driver entries that match all
 * other lists, assuming tokens occur independently (a planning estimate only).
 */
function plan(driver: PostingList, others: PostingList[], span: number) {
  let perEntry = 1;
  let survive = 1;
  for (const list of others) {
    const ratio = list.count / Math.max(1, driver.count);
    perEntry += survive * Math.min(POINT_READ_COST, ratio);
    survive *= Math.min(1, list.count / span);
  }
  return { perEntry, survive };
}

/**
 * Walks the driver list in chunks from the cursor, narrowing each chunk by the other
 * lists and materialising survivors, until `limit + 1` matches, the end of the list, or
 * the budget. Chunks grow while matches are scarce and shrink to fit the budget left.
 */
async function scan(
  scanner: Scanner,
  lists: PostingList[],
  head: BoardHead,
  params: PageParams,
  budget: number,
): Promise<ScanResult> {
  const ascending = params.after !== undefined;
  const need = params.limit + 1;
  const [driver, ...others] = lists;
  const matches: MessageRecord[] = [];
  const estimate = plan(driver, others, scanner.span);
  let perEntry = estimate.perEntry;
  // Ascending: the next seq to read (inclusive). Descending: the exclusive upper bound.
  let cursor = ascending ? params.after! + 1 : params.before;
  let chunk = others.length === 0
    ? need
    : Math.min(MAX_CHUNK, Math.max(MIN_CHUNK, Math.ceil(need / Math.max(estimate.survive, 1e-9))));
  chunk = Math.max(1, Math.min(chunk, Math.floor((budget - scanner.work) / perEntry)));
  while (true) {
    const before = scanner.work;
    const seqs = await scanner.driver(driver, cursor, ascending, chunk);
    let survivors = seqs;
    for (const list of others) {
      if (survivors.length === 0) break;
      survivors = await scanner.narrow(list, survivors);
    }
    matches.push(...await scanner.materialise(survivors, head, need - matches.length));
    if (matches.length >= need) return { matches, more: true, resumeAt: null };
    if (seqs.length < chunk) return { matches, more: false, resumeAt: null };
    const last = seqs[seqs.length - 1];
    cursor = ascending ? last + 1 : last;
    perEntry = Math.max(1, (scanner.work - before - ROUND_TRIP_COST) / seqs.length);
    const affordable = Math.floor((budget - scanner.work - ROUND_TRIP_COST) / perEntry);
    if (affordable < 1) return { matches, more: false, resumeAt: last };
    chunk = Math.min(chunk * 2, MAX_CHUNK, affordable);
  }
}

async function readCounts(kv: Deno.Kv, countKeys: Deno.KvKey[]): Promise<number[]> {
  const entries = await readMany<Deno.KvU64>(kv, countKeys);
  return entries.map((e) => (e.value ? Number(e.value.value) : 0));
}

const EMPTY_PAGE: Page<MessageRecord> = {
  items: [],
  next_before: null,
  next_after: null,
  newest_cursor: null,
};

/**
 * Finds named messages (roots and replies) holding every query token, newest first,
 * paged by message seq exactly like the feeds. Validates `q` before any read.
 */
export async function searchRecords(
  deps: Deps,
  query: SearchQuery,
  options: SearchOptions = {},
): Promise<Page<MessageRecord>> {
  const terms = parseSearchQuery(query.q);
  const wanted = terms.map((t) => ({
    prefix: keys.searchPostingsPrefix(t) as Deno.KvKey,
    countKey: keys.searchTermCounts(t) as Deno.KvKey,
  }));
  if (query.topic !== undefined) {
    wanted.push({
      prefix: keys.searchTopicPostingsPrefix(query.topic),
      countKey: keys.searchTopicCounts(query.topic),
    });
  }
  const [headEntry, counts] = await Promise.all([
    deps.kv.get<BoardHead>(keys.boardHeads("named")),
    readCounts(deps.kv, wanted.map((w) => w.countKey)),
  ]);
  if (counts.some((n) => n === 0)) return EMPTY_PAGE;
  const lists = wanted
    .map((w, i) => ({ prefix: w.prefix, count: counts[i] }))
    .sort((a, b) => a.count - b.count);
  const head = headEntry.value ?? EMPTY_HEAD;
  const { limit } = query;
  const scanner = new Scanner(deps.kv, Math.max(1, head.seq));
  const budget = options.workBudget ?? SEARCH_WORK_BUDGET;
  const found = await scan(scanner, lists, head, query, budget);
  if (options.stats) options.stats.work = scanner.work;
  if (query.after !== undefined) {
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
export async function searchMessages(
  deps: Deps,
  viewer: Agent | null,
  query: SearchQuery,
  options: SearchOptions = {},
): Promise<Page<MessageItem>> {
  const page = await searchRecords(deps, query, options);
  return { ...page, items: page.items.length ? await toItems(deps, viewer, page.items) : [] };
}

/**
 * The whole search response for every door (REST route, MCP tool): the page with the
 * feeds' cursors, `content_is_untrusted`, action templates and viewer. No pinned notices,
 * rules notice or articles block.
 */
export async function searchPage(
  deps: Deps,
  viewer: Agent | null,
  query: SearchQuery,
  options: SearchOptions = {},
) {
  const page = await searchMessages(deps, viewer, query, options);
  return {
    items: page.items,
    next_before: page.next_before,
    next_after: page.next_after,
    newest_cursor: page.newest_cursor,
    content_is_untrusted: true as const,
    action_templates: messageActionTemplates("named"),
    viewer: await viewerObject(deps, viewer),
  };
}
