/**
 * The intersection behind search (domain/reads/search_page.ts): walks the rarest posting list from a
 * cursor and keeps the seqs every other list also holds, within a per-page work budget.
 *
 * Work is counted in units measured on the embedded store (docs/search.md, "Work
 * budget"): one listed posting block is a unit (about 3 µs), a read of a message's term
 * list or summary 6, and every KV round trip 30.
 *
 * Posting lists are stored in blocks (domain/search/postings.ts): `[...prefix, first]` holds
 * the sorted seqs of one sealed batch, from `first` up to `first + batch`, so listing
 * blocks in key order yields seqs in order. Messages above the sealed marker (the tail)
 * have no postings yet: `tail` lists their term filters (filters.ts), and the messages a
 * filter lets through are checked against their exact term lists (held in their body
 * entries) when their summaries are read.
 */
import { keys } from "../../kv/keys.ts";
import { type BoardHead, isHidden, type MessageRecord } from "../board/mod.ts";
import type { PageParams } from "../paging.ts";
import {
  decodeBlock,
  filtersFrom,
  type IndexedTerms,
  type PostingListKey,
  type SealedState,
  storedTerms,
  termListsOf,
} from "./postings.ts";
import { filterHashes, filterMayHold, filterThread } from "./filters.ts";
import { listTyped, readMany, type TypedListSelector } from "../../kv/read_many.ts";
import type { ValueOf } from "../../kv/key_values.ts";

const TERMS_READ_COST = 6;
/** A term filter (or, on a store from before filters, a term list) listed in the tail. */
const TAIL_READ_COST = 2;
const SUMMARY_READ_COST = 6;
const ROUND_TRIP_COST = 30;
const MIN_CHUNK = 16;
const MAX_CHUNK = 256;
/** Least share of driver entries assumed to match when sizing a page's first chunk. */
const FIRST_SHARE = 0.15;
/** Weight, in driver entries, of the independence estimate against what a page observed. */
const PRIOR_WEIGHT = 8;
/** A chunk is sized for this many times the matches still wanted. */
const SLACK = 1.25;
/** A chunk is at most this many times the one before. */
const GROWTH = 4;
const LIST_BATCH = 500;

/**
 * Work units one page may spend: 300 plus 150 per posting list (query token or topic),
 * counting at most four lists. A page that needs more returns what it found with a
 * cursor; the next page resumes there.
 */
export function searchWorkBudget(lists: number): number {
  return 300 + 150 * Math.min(Math.max(lists, 1), 4);
}

/** One posting list: a query token's or the topic filter's. */
export interface PostingList {
  prefix: PostingListKey;
  count: number;
  /** The token (unset for the topic list). */
  term?: string;
  /** The topic (unset for a token list). */
  topic?: string;
}

/** The lists a tail listing keeps the entries of (those whose term list holds them all). */
type TailWanted = readonly Pick<PostingList, "term" | "topic">[];

/** What `Scanner.materialise` kept, and how many leading candidates it decided. */
export interface Materialised {
  records: MessageRecord[];
  decided: number;
}

export interface ScanResult {
  /** Matches in scan order (newest first, or oldest first with `after`). */
  matches: MessageRecord[];
  /** True when `limit + 1` matches were found. */
  more: boolean;
  /** Last driver seq decided when the budget ran out before the list did. */
  resumeAt: number | null;
}

interface Narrowed {
  /** The decided seqs that passed, in scan order. */
  kept: number[];
  /** How many leading seqs (in scan order) were decided. */
  decided: number;
}

/** True when a message's term list holds every one of `lists`. */
function holds(lists: TailWanted, e: IndexedTerms): boolean {
  return lists.every((
    l,
  ) => (l.term !== undefined ? e.terms.includes(l.term) : e.topic === l.topic));
}

/** A block's seqs (ascending as stored) in scan order. */
function inScanOrder(seqs: number[], ascending: boolean): number[] {
  return ascending ? seqs : [...seqs].reverse();
}

/**
 * Reads the index and summaries for one page, counting the work it spends. Every
 * narrowing step decides only the leading candidates (in scan order) that its allowance
 * pays for, so the budget is a cap, not a target.
 */
export class Scanner {
  work = 0;
  trips = 0;
  /** Work spent listing the tail's term lists (outside the page's budget). */
  tailWork = 0;
  /** Highest sealed seq: list counts over it estimate densities. */
  readonly span: number;
  /**
   * Called with the seqs whose summaries are about to be read (`materialise`), so that what
   * a page needs of them next (the caller's votes) is read in the same round trip.
   */
  onMaterialise: (seqs: number[]) => void = () => {};
  /**
   * The reply count of each thread read beside the replies of it that `materialise` read (a
   * thread not on the page: what a reply shows as `thread_reply_count`).
   */
  readonly threadCounts = new Map<number, number>();
  /** The thread of each reply the index named (term filters and posting blocks read). */
  readonly #threads = new Map<number, number>();
  /** Seqs a term filter let through, checked against their term lists as they are read. */
  readonly #unchecked = new Set<number>();
  /** The lists the tail was asked for: what those checks look for. */
  #tailLists: TailWanted = [];
  constructor(
    readonly kv: Deno.Kv,
    /** How far posting blocks reach; seqs above `upTo` found in blocks are ignored. */
    readonly sealed: SealedState,
    readonly budget: number,
    readonly ascending: boolean,
  ) {
    this.span = Math.max(1, sealed.upTo);
  }

  get left(): number {
    return this.budget - this.work;
  }

  /** True when `blocks` listed blocks and one read of `summaries` summaries fit the budget. */
  affords(blocks: number, summaries: number): boolean {
    return blocks + ROUND_TRIP_COST + summaries * SUMMARY_READ_COST <= this.left;
  }

  /** Notes the threads of replies that the index named (seq → its thread's seq). */
  noteThreads(threads: ReadonlyMap<number, number>): void {
    for (const [seq, thread] of threads) this.#threads.set(seq, thread);
  }

  /** The seqs of a driver block read (every candidate comes from one), its replies' threads noted. */
  #seqsOf(value: ValueOf<PostingListKey>): number[] {
    const block = decodeBlock(value);
    if (block.threads) this.noteThreads(block.threads);
    return block.seqs;
  }

  /** Adds work done without a round trip of its own (blocks read in the first batch). */
  charge(units: number): void {
    this.work += units;
  }

  #spend(units: number): void {
    this.trips++;
    this.work += ROUND_TRIP_COST + units;
  }

  /**
   * Reads up to `limit` driver seqs from `cursor` on, in scan order. The block that starts
   * before the cursor can still hold seqs past it: ascending, blocks are listed from a
   * batch before it; descending, the first block listed may hold seqs at or above it.
   * Seqs above the sealed marker (a batch being sealed right now) are left to the tail.
   */
  async driver(list: PostingList, cursor: number | undefined, limit: number): Promise<number[]> {
    const p = list.prefix;
    const selector: TypedListSelector<PostingListKey> = this.ascending
      ? { prefix: p, start: [...p, cursor! - this.sealed.batch + 1] }
      : cursor !== undefined
      ? { prefix: p, end: [...p, cursor] }
      : { prefix: p };
    const seqs: number[] = [];
    let listed = 0;
    // batchSize never above limit: a list reads a whole batch even when fewer are used.
    const options = { batchSize: Math.min(limit, LIST_BATCH), reverse: !this.ascending };
    for await (const e of listTyped(this.kv, selector, options)) {
      listed++;
      for (const s of inScanOrder(this.#seqsOf(e.value), this.ascending)) {
        if (cursor !== undefined && (this.ascending ? s < cursor : s >= cursor)) continue;
        if (s > this.sealed.upTo) continue;
        seqs.push(s);
      }
      if (seqs.length >= limit) break;
    }
    this.#spend(listed);
    return seqs.slice(0, limit);
  }

  /** Expected entries of `list` in the seq window of `seqs`. */
  #inWindow(list: PostingList, seqs: number[]): number {
    const window = Math.abs(seqs[seqs.length - 1] - seqs[0]) + 1;
    return (list.count * window) / this.span;
  }

  /**
   * True when `seqs` are sparse over `list`'s entries in their window: reading the term
   * lists of `seqs` beats a range read of the list.
   */
  #sparse(list: PostingList, seqs: number[]): boolean {
    return this.#inWindow(list, seqs) >= seqs.length * TERMS_READ_COST;
  }

  /**
   * True when reading the term lists of `seqs` (which checks every remaining list at once)
   * is expected to cost less than narrowing by `next` first and reading the term lists of
   * its survivors only (a share of `next.count / span`, assuming independence).
   */
  verifyPays(next: PostingList, seqs: number[]): boolean {
    const narrowing = Math.min(seqs.length * TERMS_READ_COST, this.#inWindow(next, seqs));
    const pass = Math.min(1, next.count / this.span);
    return seqs.length * TERMS_READ_COST * (1 - pass) <= narrowing + ROUND_TRIP_COST;
  }

  /**
   * Keeps the seqs that `list` also holds: by reading their term lists, or, when the list is
   * dense over the seqs' window, by one range read of that window in scan order, capped at
   * what reading term lists would cost and finished that way where the list is denser than
   * its count suggests. Decides the leading seqs `allowance` pays for, and at least `minimum`.
   */
  async narrow(
    list: PostingList,
    seqs: number[],
    allowance: number,
    minimum: number,
  ): Promise<Narrowed> {
    const cap = Math.min(seqs.length * TERMS_READ_COST, allowance - ROUND_TRIP_COST);
    if (this.#sparse(list, seqs) || cap < 1) {
      return await this.verify([list], seqs, allowance, minimum);
    }
    const first = seqs[0];
    const last = seqs[seqs.length - 1];
    const [lo, hi] = this.ascending ? [first, last] : [last, first];
    const found = new Set<number>();
    // Every seq in scan order up to `reached` is decided: the blocks listed hold all of them.
    let reached = first;
    let listed = 0;
    const start: PostingListKey = [...list.prefix, lo - this.sealed.batch + 1];
    const iter = listTyped(
      this.kv,
      { start, end: [...list.prefix, hi + 1] },
      { limit: cap, batchSize: Math.min(cap, LIST_BATCH), reverse: !this.ascending },
    );
    for await (const e of iter) {
      listed++;
      const held = decodeBlock(e.value).seqs; // every candidate's thread came with the driver
      for (const s of held) found.add(s);
      // Ascending, seqs up to the block's last are decided; descending, down to its first.
      reached = this.ascending ? held[held.length - 1] : e.key[e.key.length - 1] as number;
    }
    this.#spend(listed);
    if (listed < cap) return { kept: seqs.filter((s) => found.has(s)), decided: seqs.length };
    // The cap was hit: seqs up to `reached` are decided, the rest by their term lists.
    let decided = 0;
    while (
      decided < seqs.length &&
      (this.ascending ? seqs[decided] <= reached : seqs[decided] >= reached)
    ) decided++;
    const rest = await this.verify(
      [list],
      seqs.slice(decided),
      allowance - ROUND_TRIP_COST - listed,
      Math.max(0, minimum - decided),
    );
    const kept = seqs.slice(0, decided).filter((s) => found.has(s));
    return { kept: [...kept, ...rest.kept], decided: decided + rest.decided };
  }

  /**
   * Reads one key per seq for the leading seqs `allowance` pays for at `cost` each (at least
   * `minimum`), and spends it.
   */
  async #readPaid<K extends Deno.KvKey>(
    seqs: number[],
    allowance: number,
    minimum: number,
    cost: number,
    keyOf: (seq: number) => K,
  ): Promise<{ part: number[]; entries: Deno.KvEntryMaybe<ValueOf<K>>[] }> {
    const affordable = Math.floor((allowance - ROUND_TRIP_COST) / cost);
    const part = seqs.slice(0, Math.max(minimum, Math.min(seqs.length, affordable)));
    if (part.length === 0) return { part, entries: [] };
    this.#spend(part.length * cost);
    return { part, entries: await readMany(this.kv, part.map(keyOf)) };
  }

  /**
   * Keeps the seqs whose stored term list (what the message was indexed under, written in
   * the same commits as its postings) holds every one of `lists`: one read per message
   * checks all the lists at once. Decides what `allowance` pays for, at least `minimum`.
   */
  async verify(
    lists: PostingList[],
    seqs: number[],
    allowance: number,
    minimum: number,
  ): Promise<Narrowed> {
    const { part, entries } = await this.#readPaid(
      seqs,
      allowance,
      minimum,
      TERMS_READ_COST,
      (s) => keys.bodies("named", s),
    );
    const terms = await termListsOf(this.kv, entries);
    const kept = part.filter((_, i) => terms[i] !== null && holds(lists, terms[i]!));
    return { kept, decided: part.length };
  }

  /**
   * The tail: seqs from `from` to `to` (inclusive, above the sealed marker) whose term filter
   * holds every one of `lists`, in scan order, from one range read of their filters (`early`:
   * the listing of the first batch, used when it reaches down to the range). Below the marker's
   * `filters` (a store from before filters), from one range read of their body entries.
   * Its work is counted apart (`tailWork`): the tail is at most about two batches long,
   * whatever the query, so it is a fixed cost outside the page's budget.
   */
  async tail(
    lists: PostingList[],
    from: number,
    to: number,
    early: ListedTail | null = null,
  ): Promise<number[]> {
    if (from > to) return [];
    this.#tailLists = lists;
    const filtered = Math.max(from, filtersFrom(this.sealed));
    const [byFilter, byBody] = await Promise.all([
      filtered > to
        ? null
        : early && early.from <= filtered
        ? early
        : listTail(this.kv, filtered, to, this.ascending, lists),
      from < filtered
        ? listTail(this.kv, from, Math.min(to, filtered - 1), this.ascending, lists, "bodies")
        : null,
    ]);
    if (byFilter) this.noteThreads(byFilter.threads);
    const fromFilters = (byFilter?.seqs ?? []).filter((seq) => seq >= filtered && seq <= to);
    for (const seq of fromFilters) this.#unchecked.add(seq);
    const fromBodies = byBody ? await this.#checkApart(lists, byBody) : [];
    // Reported, not charged: the tail is bounded by the batch size, not by the page.
    for (const listing of [byFilter, byBody]) {
      if (listing) this.tailWork += ROUND_TRIP_COST + listing.listed * TAIL_READ_COST;
    }
    return this.ascending ? [...fromBodies, ...fromFilters] : [...fromFilters, ...fromBodies];
  }

  /** A body listing's seqs, with the whole-text bodies of a store written before checked. */
  async #checkApart(lists: PostingList[], listing: TailListing): Promise<number[]> {
    // A whole-text body: its term list is kept apart, read here, then checked.
    const apart = listing.seqs.filter((seq) => listing.apart.has(seq));
    const refused = new Set<number>();
    if (apart.length > 0) {
      const asStored = apart.map((seq) => ({
        key: keys.bodies("named", seq),
        value: "",
        versionstamp: "",
      }));
      const terms = await termListsOf(this.kv, asStored);
      apart.forEach((seq, i) => {
        if (terms[i] === null || !holds(lists, terms[i]!)) refused.add(seq);
      });
    }
    return listing.seqs.filter((seq) => !refused.has(seq));
  }

  /**
   * Reads the summaries of candidates, in rounds; keeps live, visible ones up to `want`. A
   * candidate a term filter let through is read with its body entry and kept only when its
   * term list holds every list. Once one has failed that check (two words sharing a hash:
   * rare by chance, or messages written to share hashes with common words), each further
   * round is paid from the page's budget, and the page ends where it runs out: `decided`
   * says how many leading candidates were decided.
   */
  async materialise(seqs: number[], head: BoardHead, want: number): Promise<Materialised> {
    const records: MessageRecord[] = [];
    let i = 0;
    let refused = false;
    while (i < seqs.length && records.length < want) {
      const part = seqs.slice(i, i + Math.max(want - records.length, 1));
      const checks = part.filter((s) => this.#unchecked.has(s));
      const units = part.length * SUMMARY_READ_COST + checks.length * TERMS_READ_COST;
      if (refused && ROUND_TRIP_COST + units > this.left) break;
      this.#spend(units);
      this.onMaterialise(part);
      const threads = this.#threadsToRead(part);
      const [recs, bodies, threadRecs] = await Promise.all([
        readMany(this.kv, part.map((s) => keys.messages("named", s))),
        readMany(this.kv, checks.map((s) => keys.bodies("named", s))),
        readMany(this.kv, threads.map((s) => keys.messages("named", s))),
      ]);
      // A thread gone shows 0, as toItems (domain/reads/feeds.ts) answers it.
      threadRecs.forEach((e, j) => this.threadCounts.set(threads[j], e.value?.reply_count ?? 0));
      const terms = await termListsOf(this.kv, bodies);
      const failed = new Set<number>();
      checks.forEach((seq, j) => {
        const t = terms[j];
        if (t === null || !holds(this.#tailLists, t)) failed.add(seq);
        if (t !== null && failed.has(seq)) refused = true;
      });
      for (const [j, e] of recs.entries()) {
        i++;
        if (e.value && !failed.has(part[j]) && !isHidden(e.value, head)) records.push(e.value);
        if (records.length === want) break;
      }
    }
    return { records, decided: i };
  }

  /** The threads of the replies among `part` that are neither in it nor read before. */
  #threadsToRead(part: number[]): number[] {
    const threads = new Set<number>();
    for (const seq of part) {
      const t = this.#threads.get(seq);
      if (t !== undefined && !this.threadCounts.has(t)) threads.add(t);
    }
    for (const seq of part) threads.delete(seq);
    return [...threads];
  }
}

/**
 * Tail listings an instance runs at once. Each reads up to a batch or two of term filters
 * (up to about 520 bytes each; body entries of up to about 21 KB on a store from before filters);
 * searches beyond these wait their turn, so many searches at once cannot hold more of them
 * in memory than this many do.
 */
const TAIL_LISTINGS_AT_ONCE = 2;
let tailListings = 0;
const waitingListings: (() => void)[] = [];

/** Runs `list` as one of the instance's `TAIL_LISTINGS_AT_ONCE` tail listings. */
async function inListingTurn<T>(list: () => Promise<T>): Promise<T> {
  if (tailListings < TAIL_LISTINGS_AT_ONCE) tailListings++;
  else await new Promise<void>((turn) => waitingListings.push(turn));
  try {
    return await list();
  } finally {
    const next = waitingListings.shift();
    if (next) next(); // the turn passes on
    else tailListings--;
  }
}

/**
 * What a tail listing found, in listing order: the seqs whose term filter (or term list)
 * holds every wanted list, and, listing body entries, those whose list is kept apart
 * (`apart`: checked once it is read); how many entries it listed, and the last listed seq.
 */
interface TailListing {
  seqs: number[];
  /** The thread of each reply among `seqs` that its term filter names. */
  threads: Map<number, number>;
  apart: Set<number>;
  listed: number;
  last: number | null;
}

/** What a tail listing reads: term filters, or body entries (a store from before filters). */
type TailSource = "filters" | "bodies";

/** What a tail listing lists under: term filters or body entries. */
type TailKey = ReturnType<typeof keys.searchFilters.range> | ReturnType<typeof keys.bodies.range>;

/** The keys a tail listing of `source` reads. */
const tailKeys = {
  filters: { of: (seq: number) => keys.searchFilters(seq), range: keys.searchFilters.range() },
  bodies: { of: (seq: number) => keys.bodies("named", seq), range: keys.bodies.range("named") },
};

/**
 * Lists term filters or body entries in the instance's listing turn, keeping the seqs of
 * those that hold every `wanted` list (and of those whose list is kept apart): a search
 * holds the seqs of its matches, never the tail's filters, texts or term lists.
 */
function listTerms(
  kv: Deno.Kv,
  selector: TypedListSelector<TailKey>,
  options: Deno.KvListOptions,
  wanted: TailWanted,
  source: TailSource,
): Promise<TailListing> {
  const hashes = filterHashes(wanted);
  return inListingTurn(async () => {
    const out: TailListing = {
      seqs: [],
      threads: new Map(),
      apart: new Set(),
      listed: 0,
      last: null,
    };
    for await (const e of listTyped(kv, selector, options)) {
      const seq = e.key[e.key.length - 1] as number;
      out.listed++;
      out.last = seq;
      if (source === "filters") {
        if (!(e.value instanceof Uint8Array) || !filterMayHold(e.value, hashes)) continue;
        out.seqs.push(seq);
        const thread = filterThread(e.value, seq);
        if (thread !== undefined && thread < seq) out.threads.set(seq, thread);
        continue;
      }
      if (typeof e.value === "string") out.apart.add(seq);
      const terms = e.value instanceof Uint8Array ? null : storedTerms(e.value);
      if (out.apart.has(seq) || (terms !== null && holds(wanted, terms))) out.seqs.push(seq);
    }
    return out;
  });
}

/**
 * The term filters (or body entries) of named seqs `from` to `to` (inclusive; Infinity: to
 * the newest), in scan order: one range read.
 */
export function listTail(
  kv: Deno.Kv,
  from: number,
  to: number,
  ascending: boolean,
  wanted: TailWanted,
  source: TailSource = "filters",
): Promise<TailListing> {
  const k = tailKeys[source];
  const selector: TypedListSelector<TailKey> = to === Infinity
    ? { prefix: k.range, start: k.of(from) }
    : { start: k.of(from), end: k.of(to + 1) };
  const options = { reverse: !ascending, batchSize: LIST_BATCH };
  return listTerms(kv, selector, options, wanted, source);
}

/**
 * Expected work per driver entry (narrowing and materialising, round trips aside) and
 * expected share of driver entries that match every other list, assuming tokens occur
 * independently. Only a prior: words of one message correlate (long messages hold many),
 * so a page sizes its later chunks from the share it observed.
 */
function plan(driver: PostingList, others: PostingList[], span: number) {
  let perEntry = 1;
  let survive = 1;
  for (const list of others) {
    const ratio = list.count / Math.max(1, driver.count);
    perEntry += survive * Math.min(TERMS_READ_COST, ratio);
    survive *= Math.min(1, list.count / span);
  }
  return { perEntry: perEntry + survive * SUMMARY_READ_COST, survive };
}

/**
 * Walks the driver (rarest) list from the cursor in chunks, narrowing each chunk by the
 * other lists and materialising survivors, until `limit + 1` matches, the end of the
 * list, or the budget. A chunk is sized from the share of driver entries that matched so
 * far, so a page examines about as many entries as it needs. Each chunk is narrowed list
 * by list, rarest first (point reads or a range read); when two or more lists remain and
 * reading each candidate's term list is expected to cost less, that one read checks them
 * all. When the budget stops a step, the page ends after the last decided seq.
 */
export async function scan(
  scanner: Scanner,
  lists: PostingList[],
  head: BoardHead,
  params: PageParams,
): Promise<ScanResult> {
  const ascending = scanner.ascending;
  const need = params.limit + 1;
  const [driver, ...others] = lists;
  const matches: MessageRecord[] = [];
  const estimate = plan(driver, others, scanner.span);
  // Round trips of one chunk: driver, at most two narrowing steps, summaries.
  const trips = ROUND_TRIP_COST * (2 + Math.min(others.length, 2));
  let perEntry = estimate.perEntry;
  // Ascending: the next seq to read (inclusive). Descending: the exclusive upper bound.
  let cursor = ascending ? params.after! + 1 : params.before;
  let examined = 0;
  let lastExamined: number | null = null;
  let previous = 0;
  while (true) {
    const left = need - matches.length;
    // Kept back for reading the summaries of the matches still wanted.
    const reserve = ROUND_TRIP_COST + left * SUMMARY_READ_COST;
    let chunk = left;
    if (others.length > 0) {
      const share = examined === 0
        ? estimate.survive
        : (matches.length + PRIOR_WEIGHT * estimate.survive) / (examined + PRIOR_WEIGHT);
      // Before any observation, the share is floored: real words correlate.
      const sizing = examined === 0 ? Math.max(share, FIRST_SHARE) : share;
      chunk = Math.ceil((left / Math.max(sizing, 1e-9)) * SLACK);
      const most = previous ? Math.min(MAX_CHUNK, previous * GROWTH) : MAX_CHUNK;
      chunk = Math.max(MIN_CHUNK, Math.min(chunk, most));
      // The rest of the list is read at once when it is short, or expected not to fill the
      // page anyway: another round trip for a few more entries costs more than they do.
      const remaining = Math.min(MAX_CHUNK, driver.count - examined);
      if (remaining <= chunk * 1.5 || remaining * share < left) {
        chunk = Math.max(chunk, remaining);
      }
    }
    const affordable = Math.floor((scanner.left - reserve - trips) / perEntry);
    if (examined > 0 && affordable < 1) return { matches, more: false, resumeAt: lastExamined };
    chunk = Math.max(1, Math.min(chunk, affordable));
    const seqs = await scanner.driver(driver, cursor, chunk);
    if (seqs.length === 0) return { matches, more: false, resumeAt: null };
    let decided = seqs.length;
    let survivors = seqs;
    for (let i = 0; i < others.length && survivors.length > 0; i++) {
      const rest = others.slice(i);
      const all = rest.length > 1 && scanner.verifyPays(rest[0], survivors);
      const allowance = scanner.left - reserve;
      // The first seq of a page is always decided, so every page moves on.
      const minimum = examined === 0 ? 1 : 0;
      const r = all
        ? await scanner.verify(rest, survivors, allowance, minimum)
        : await scanner.narrow(rest[0], survivors, allowance, minimum);
      if (r.decided < survivors.length) {
        decided = Math.min(decided, seqs.indexOf(survivors[r.decided]));
      }
      survivors = r.kept;
      if (all) break;
    }
    matches.push(...(await scanner.materialise(survivors, head, left)).records);
    if (matches.length >= need) return { matches, more: true, resumeAt: null };
    if (decided > 0) {
      examined += decided;
      lastExamined = seqs[decided - 1];
    }
    if (decided < seqs.length) return { matches, more: false, resumeAt: lastExamined };
    if (seqs.length < chunk) return { matches, more: false, resumeAt: null };
    const last = seqs[seqs.length - 1];
    cursor = ascending ? last + 1 : last;
    perEntry = Math.max(1, (scanner.work - ROUND_TRIP_COST * scanner.trips) / examined);
    previous = chunk;
  }
}

/** The newest term filters listed in a search's first batch, and how far down they reach. */
export interface ListedTail extends TailListing {
  /** Lowest seq covered: every term filter from here up to the listing's top was listed. */
  from: number;
}

/**
 * The newest `limit` term filters of named seqs up to `to` (inclusive; Infinity: to the
 * newest), newest first: one range read, for a search that does not know yet where the
 * sealed marker is.
 */
export async function listNewestTail(
  kv: Deno.Kv,
  to: number,
  limit: number,
  wanted: TailWanted,
): Promise<ListedTail> {
  const range = keys.searchFilters.range();
  const selector: TypedListSelector<TailKey> = to === Infinity
    ? { prefix: range }
    : { prefix: range, end: keys.searchFilters(to + 1) };
  const options = { reverse: true, limit, batchSize: Math.min(limit, LIST_BATCH) };
  const listing = await listTerms(kv, selector, options, wanted, "filters");
  return { ...listing, from: listing.listed < limit ? 1 : listing.last! };
}
