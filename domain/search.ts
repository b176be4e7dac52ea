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
import { toItems } from "./feeds.ts";
import { type BoardHead, EMPTY_HEAD, isHidden, type MessageRecord } from "./messages.ts";
import type { Page, PageParams } from "./paging.ts";
import { parseSearchQuery } from "./search_tokens.ts";
import type { MessageItem } from "./views.ts";

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
 * A listed index entry costs 1 unit, a point read POINT_READ_COST units.
 */
export const SEARCH_WORK_BUDGET = 6000;
const POINT_READ_COST = 4;
const RANGE_READ_OVERHEAD = 16;
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

class Scanner {
  work = 0;
  constructor(readonly kv: Deno.Kv, readonly span: number) {}

  /** Keeps the seqs that `list` also holds (order preserved). */
  async narrow(list: PostingList, seqs: number[]): Promise<number[]> {
    let lo = seqs[0];
    let hi = seqs[0];
    for (const s of seqs) {
      if (s < lo) lo = s;
      if (s > hi) hi = s;
    }
    const pointCost = seqs.length * POINT_READ_COST;
    const expected = (list.count * (hi - lo + 1)) / this.span;
    if (expected + RANGE_READ_OVERHEAD >= pointCost) return await this.#probe(list, seqs);
    // Dense enough: one range read over the window, capped at what probing would cost.
    const found = new Set<number>();
    const cap = Math.max(1, pointCost - RANGE_READ_OVERHEAD);
    let lastListed = lo - 1;
    let listed = 0;
    const iter = this.kv.list(
      { start: [...list.prefix, lo], end: [...list.prefix, hi + 1] },
      { limit: cap, batchSize: Math.min(cap, 500) },
    );
    for await (const e of iter) {
      lastListed = seqOf(e.key);
      found.add(lastListed);
      listed++;
    }
    this.work += listed + RANGE_READ_OVERHEAD;
    const complete = listed < cap;
    const kept = seqs.filter((s) => found.has(s));
    if (complete) return kept;
    // The cap was hit: seqs beyond the listed part still need point reads.
    const rest = await this.#probe(list, seqs.filter((s) => s > lastListed));
    const keep = new Set([...kept, ...rest]);
    return seqs.filter((s) => keep.has(s));
  }

  async #probe(list: PostingList, seqs: number[]): Promise<number[]> {
    if (seqs.length === 0) return [];
    this.work += seqs.length * POINT_READ_COST;
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
      this.work += part.length * POINT_READ_COST;
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

async function scan(
  scanner: Scanner,
  lists: PostingList[],
  head: BoardHead,
  params: PageParams,
  budget: number,
): Promise<ScanResult> {
  const kv = scanner.kv;
  const ascending = params.after !== undefined;
  const need = params.limit + 1;
  const [driver, ...others] = lists;
  const matches: MessageRecord[] = [];
  // Ascending: the next seq to read (inclusive). Descending: the exclusive upper bound.
  let cursor = ascending ? params.after! + 1 : params.before;
  let chunk = Math.min(Math.max(need, MIN_CHUNK), MAX_CHUNK);
  if (others.length === 0) chunk = need;
  while (true) {
    const p = driver.prefix;
    const selector: Deno.KvListSelector = ascending
      ? { prefix: p, start: [...p, cursor!] }
      : cursor !== undefined
      ? { prefix: p, end: [...p, cursor] }
      : { prefix: p };
    const seqs: number[] = [];
    for await (
      const e of kv.list(selector, { limit: chunk, batchSize: chunk, reverse: !ascending })
    ) seqs.push(seqOf(e.key));
    scanner.work += seqs.length;
    let survivors = seqs;
    for (const list of others) {
      if (survivors.length === 0) break;
      survivors = await scanner.narrow(list, survivors);
    }
    matches.push(...await scanner.materialise(survivors, head, need - matches.length));
    if (matches.length >= need) return { matches, more: true, resumeAt: null };
    if (seqs.length < chunk) return { matches, more: false, resumeAt: null };
    const last = seqs[seqs.length - 1];
    if (scanner.work >= budget) return { matches, more: false, resumeAt: last };
    cursor = ascending ? last + 1 : last;
    chunk = Math.min(chunk * 2, MAX_CHUNK);
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
