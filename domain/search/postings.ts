/**
 * The search index of named-board messages (docs/search.md, "How it works").
 *
 * The commit that stores a message writes its term list in the message's body entry
 * (domain/board/messages.ts, `StoredBody`; a store written before kept it apart, under
 * `search_terms_by_message`). Messages are then inverted in **sealed batches**: batch k
 * holds the seqs from `k * batch + 1` to `(k + 1) * batch`; once the board's head has
 * passed a batch's end, seal.ts writes, per term (and topic) of the batch, one
 * posting block `[..., term, first]` holding the batch's seqs with that term, sorted, and
 * the list's running total of postings up to this block (`encodeBlock`). `["search_sealed"]`
 * says how far the blocks reach (`upTo`); messages above it (the tail, fewer than about two
 * batches) are searched by their term lists. Blocks of one list never overlap and come in
 * seq order, so listing them in key order lists seqs in order.
 *
 * Removal takes a seq out of its blocks (the last one out deletes the block); the term list
 * goes with the body entry. The hooks add one check (the sealed marker) and no count.
 */
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import { listTyped, readMany } from "../../kv/read_many.ts";
import { bodyRest, type MessageRecord, type StoredBody } from "../board/mod.ts";
import { indexTerms } from "./tokens.ts";
import { termFilterOf } from "./filters.ts";

/** What a message was indexed under; stored so removal never depends on re-tokenising. */
export interface IndexedTerms {
  terms: string[];
  topic: string | null;
}

/**
 * The largest batch a store may be sealed with (`BOARD_SEARCH_BATCH`). A posting block holds
 * up to a whole batch's seqs (a topic's block in a batch whose messages are all in that topic),
 * one byte of gap each and, for a reply, its distance to its thread in up to five bytes (a
 * thread more than 2^28 seqs back), so a full block of this batch stays within Deno KV's
 * 65,536-byte value limit (8,192 × 6 bytes, about 49 KB). A larger batch can cut a block KV
 * refuses to store, and the batch then never seals.
 */
export const MAX_SEARCH_BATCH = 8192;

/** A posting block: a batch's seqs holding the term, and the list's total up to here. */
export interface PostingBlock {
  seqs: number[];
  total: number;
  /**
   * The thread (root seq) of each reply among `seqs`, by seq (it may name other seqs too): what
   * a search reads beside a reply. A seq it does not name is a thread, or a reply that a block
   * written before did not name.
   */
  threads?: ReadonlyMap<number, number>;
}

/** How far posting blocks reach, and the batch size they were cut with. */
export interface SealedState {
  upTo: number;
  batch: number;
  /**
   * Every named message from this seq up has a term filter (filters.ts). Unset on a marker
   * written by a version before filters: then none is known to have one, and the tail is
   * listed from the body entries until a start of this version sets it (`markTermFilters`).
   */
  filters?: number;
}

/** A posting block as stored: `encodeBlock`'s bytes, or an object in a store written before. */
type StoredBlock = Uint8Array | PostingBlock;

/** A posting list: the key prefix of one term's (or topic's) blocks, and the key of a block. */
export type PostingListKey = ReturnType<typeof keys.searchPostings.range>;

/** A block read (or staged) under its key. */
type FoundBlock = { key: PostingListKey; value: StoredBlock };

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    searchSealed: SealedState;
    searchPostings: StoredBlock;
    searchTopicPostings: StoredBlock;
    /** A message's term list as a store written before kept it (now in its body entry). */
    searchTermsByMessage: IndexedTerms;
    /** A term's count in a store written before sealed batches (only looked for, at start). */
    searchTermCounts: number;
  }
}

/** True for messages search covers: the named board only (never `b`, never articles). */
function isSearchable(m: MessageRecord): boolean {
  return m.board === "named";
}

/** The terms a message is indexed under: title and body of roots, body of replies. */
export function indexedTermsOf(m: MessageRecord, body: string): IndexedTerms {
  return { terms: indexTerms(m.kind === "root" ? m.title : null, body), topic: m.topic };
}

/**
 * A posting block as stored: unsigned LEB128 varints, the running total first, then each
 * seq as its gap from the one before (the first from 0): a block of one seq takes about
 * five bytes. A block holding replies whose threads are known starts with a 0 (a total is
 * never 0) and stores each gap doubled, plus one for a reply, whose distance to its thread
 * follows. A store written before holds `{ seqs, total }` objects; `decodeBlock` reads every
 * shape.
 */
export function encodeBlock(block: PostingBlock): Uint8Array {
  const out: number[] = [];
  const put = (n: number) => {
    while (n >= 0x80) {
      out.push((n % 0x80) | 0x80);
      n = Math.floor(n / 0x80);
    }
    out.push(n);
  };
  const thread = (s: number) => {
    const t = block.threads?.get(s);
    return t !== undefined && t < s ? t : null;
  };
  const named = block.seqs.some((s) => thread(s) !== null);
  if (named) put(0);
  put(block.total);
  let last = 0;
  for (const s of block.seqs) {
    const t = named ? thread(s) : null;
    put(named ? (s - last) * 2 + (t === null ? 0 : 1) : s - last);
    if (t !== null) put(s - t);
    last = s;
  }
  return new Uint8Array(out);
}

/** A stored posting block, in any shape. */
export function decodeBlock(value: StoredBlock): PostingBlock {
  if (!(value instanceof Uint8Array)) return value;
  const numbers: number[] = [];
  let n = 0;
  let scale = 1;
  for (const byte of value) {
    n += (byte & 0x7f) * scale;
    scale *= 0x80;
    if (byte < 0x80) {
      numbers.push(n);
      n = 0;
      scale = 1;
    }
  }
  if (numbers[0] !== 0) {
    const seqs = numbers.slice(1);
    for (let i = 1; i < seqs.length; i++) seqs[i] += seqs[i - 1];
    return { total: numbers[0], seqs };
  }
  const seqs: number[] = [];
  const threads = new Map<number, number>();
  let last = 0;
  for (let i = 2; i < numbers.length; i++) {
    last += Math.floor(numbers[i] / 2);
    seqs.push(last);
    if (numbers[i] % 2 === 1) threads.set(last, last - numbers[++i]);
  }
  return { total: numbers[1], seqs, threads };
}

/** The seqs a stored posting block holds. */
export function blockSeqs(value: StoredBlock): number[] {
  return decodeBlock(value).seqs;
}

/** The first seq of the sealed batch holding `seq`. */
export function batchFirst(seq: number, batch: number): number {
  return Math.floor((seq - 1) / batch) * batch + 1;
}

/**
 * The sealed state as stored, or, with no marker yet, the configured batch with nothing
 * sealed and a filter for every message (a store from before filters that has no marker gets
 * one at start, `markTermFilters`).
 */
export function sealedState(
  entry: Deno.KvEntryMaybe<SealedState>,
  configuredBatch: number,
): SealedState {
  return entry.value ?? { upTo: 0, batch: configuredBatch, filters: 1 };
}

/** The first seq whose term filter the tail listing can rely on (Infinity: none). */
export function filtersFrom(state: SealedState): number {
  return state.filters ?? Infinity;
}

/** The posting lists (term prefixes, then the topic's) an entry is indexed in. */
export function listsOf(entry: IndexedTerms): PostingListKey[] {
  const out: PostingListKey[] = entry.terms.map((t) => keys.searchPostings.range(t));
  if (entry.topic !== null) out.push(keys.searchTopicPostings.range(entry.topic));
  return out;
}

/**
 * What the commit that stores a message writes for its text: its body entry (the text after
 * its preview) and, when search covers the message, its term list in that entry and its term
 * filter. Also answers the term list (null when search does not cover the message).
 */
export function bodyEntries(m: MessageRecord, body: string) {
  const rest = bodyRest(m, body);
  if (!isSearchable(m)) {
    return { body: { rest } satisfies StoredBody, filter: null, terms: null };
  }
  const terms = indexedTermsOf(m, body);
  const stored: StoredBody = { rest, terms: terms.terms.join(" "), topic: terms.topic };
  const filter = termFilterOf(terms.terms, terms.topic, m.seq - m.root_seq);
  return { body: stored, filter, terms };
}

/** Stages `bodyEntries` of a message; answers its term list (null: not searched). */
export function stageBody(tx: Tx, m: MessageRecord, body: string): IndexedTerms | null {
  const e = bodyEntries(m, body);
  tx.set(keys.bodies(m.board, m.seq), e.body);
  if (e.filter) tx.set(keys.searchFilters(m.seq), e.filter);
  return e.terms;
}

/**
 * The term list a stored body entry holds: null when it holds none (not indexed, or gone),
 * undefined for a whole-text body of a store written before (its list is kept apart).
 */
function termsIn(stored: StoredBody | string | null): IndexedTerms | null | undefined {
  if (typeof stored === "string") return undefined;
  const t = stored?.terms;
  if (t === undefined) return null;
  return {
    terms: typeof t !== "string" ? t : t === "" ? [] : t.split(" "),
    topic: stored!.topic ?? null,
  };
}

/** True when the body entry as stored, or the term list kept apart, says the message is indexed. */
export function isIndexed(stored: StoredBody | string | null, apart: unknown): boolean {
  return termsIn(stored) !== null && (typeof stored !== "string" || apart !== null);
}

/**
 * The term lists of named-board body entries read (null where a message is gone or not
 * indexed); the lists of a store written before, kept apart, are read in one batch.
 */
export async function termListsOf(
  kv: Deno.Kv,
  entries: Deno.KvEntryMaybe<StoredBody | string>[],
): Promise<(IndexedTerms | null)[]> {
  const lists = entries.map((e) => termsIn(e.value));
  const apart = lists.flatMap((t, i) => t === undefined ? [i] : []);
  const seqOf = (i: number) => entries[i].key[entries[i].key.length - 1] as number;
  const found = apart.length
    ? await readMany(kv, apart.map((i) => keys.searchTermsByMessage(seqOf(i))))
    : [];
  let j = 0;
  return lists.map((t) => t === undefined ? found[j++].value : t);
}

/**
 * Reads the sealed marker with a check. A message not sealed yet gets the marker written
 * again (same value, new versionstamp): a batch being sealed from term lists read before
 * this commit then fails its check and starts over, so no block is cut from a term list
 * this commit replaces or removes.
 */
async function sealedFor(tx: Tx, m: MessageRecord, batch: number): Promise<SealedState> {
  const state = sealedState(await tx.get(keys.searchSealed()), batch);
  if (m.seq > state.upTo) tx.set(keys.searchSealed(), state);
  return state;
}

/**
 * Stages the index of a message indexed again (its text changed: the rules thread): its
 * body entry with its term list, and when its batch is sealed, its seq in the block of each
 * list.
 */
export async function reindexMessage(
  tx: Tx,
  m: MessageRecord,
  body: string,
  configuredBatch: number,
): Promise<void> {
  const entry = stageBody(tx, m, body);
  if (!entry) return;
  const state = await sealedFor(tx, m, configuredBatch);
  if (m.seq > state.upTo) return;
  const first = batchFirst(m.seq, state.batch);
  const lists = listsOf(entry);
  const found = await blocksAt(tx, lists, m.seq);
  lists.forEach((list, i) => addToBlock(tx, list, found[i], m, first));
}

/**
 * Stages `m`'s seq into the block of batch `first` of `list`; `block` is the list's newest
 * block at or below the seq (null: none).
 */
function addToBlock(
  tx: Tx,
  list: PostingListKey,
  block: FoundBlock | null,
  m: MessageRecord,
  first: number,
): void {
  const own = block && block.key[block.key.length - 1] === first;
  const held: PostingBlock = own ? decodeBlock(block.value) : { seqs: [], total: 0 };
  if (held.seqs.includes(m.seq)) return;
  const total = block ? decodeBlock(block.value).total + 1 : 1;
  const seqs = [...held.seqs, m.seq].sort((a, b) => a - b);
  const threads = new Map(held.threads).set(m.seq, m.root_seq);
  tx.set([...list, first], encodeBlock({ seqs, total, threads }));
}

/**
 * Stages the removal of a message from the index: its seq out of each block holding it
 * (the caller removes or rewrites the body entry that holds its term list; a list kept
 * apart by a store written before is deleted here). Blocks are read without checks: two
 * removals from one block at the same moment can leave one seq in it, which search skips
 * like any seq whose message is gone.
 */
export async function unindexMessage(
  tx: Tx,
  m: MessageRecord,
  configuredBatch: number,
): Promise<void> {
  const sealed = await unindexAllButBlocks(tx, m, configuredBatch);
  if (sealed) await retractPostings(tx, m.seq, sealed);
}

/**
 * Stages the removal of a message from the index but for its seq in the sealed posting
 * blocks: its term list goes with the body entry the caller removes (a list kept apart by a
 * store written before is deleted here), and a batch being sealed from it starts over
 * (`sealedFor`). Answers the term list whose blocks still hold the seq, for
 * `retractPostings` (null when no block does: not indexed, or its batch not sealed yet).
 * Until then search skips the seq, as any seq whose summary is gone.
 */
export async function unindexAllButBlocks(
  tx: Tx,
  m: MessageRecord,
  configuredBatch: number,
): Promise<IndexedTerms | null> {
  if (!isSearchable(m)) return null;
  tx.delete(keys.searchFilters(m.seq));
  const stored = await tx.peek(keys.bodies(m.board, m.seq));
  const [entry] = await termListsOf(tx.kv, [stored]);
  if (!entry) return null;
  if (typeof stored.value === "string") tx.delete(keys.searchTermsByMessage(m.seq));
  const state = await sealedFor(tx, m, configuredBatch);
  return m.seq > state.upTo ? null : entry;
}

/**
 * Stages `seq` out of the sealed posting blocks of `entry`'s lists (the last one out deletes
 * the block); a block that no longer holds it is left alone, so doing it twice is harmless.
 * Blocks are read without checks (see `unindexMessage`).
 */
export async function retractPostings(tx: Tx, seq: number, entry: IndexedTerms): Promise<void> {
  const rulesSeq = rulesThreadSeqs.get(tx.kv) ?? null;
  const [blocks] = await Promise.all([
    blocksAt(tx, listsOf(entry), seq),
    // The rules thread is the one message whose blocks change while it lives: a rules edit
    // rewrites them, read unchecked as these are. Its body entry, which every such edit
    // writes, is read with a check, so an edit landing meanwhile sends this commit round again
    // rather than being overwritten (a seq left behind is skipped; a rules term lost is not).
    rulesSeq !== null && rulesSeq !== seq ? tx.get(keys.bodies("named", rulesSeq)) : null,
  ]);
  for (const block of blocks) dropFromBlock(tx, block, seq);
}

/**
 * The rules thread's seq on each store, as the rules area tells it (at every start, and at
 * each rules read or edit): the thread is made once and kept. A handle that never learned it
 * (no start on it) retracts without the check.
 */
const rulesThreadSeqs = new WeakMap<Deno.Kv, number>();

/** Tells search which message of `kv` is the rules thread (`retractPostings` checks it). */
export function noteRulesThreadSeq(kv: Deno.Kv, seq: number): void {
  rulesThreadSeqs.set(kv, seq);
}

/** Stages the removal of `seq` from a posting block (the block goes when it empties). */
function dropFromBlock(tx: Tx, block: FoundBlock | null, seq: number) {
  if (!block) return;
  const { seqs, total, threads } = decodeBlock(block.value);
  if (!seqs.includes(seq)) return;
  const rest = seqs.filter((s) => s !== seq);
  if (rest.length) tx.set(block.key, encodeBlock({ seqs: rest, total, threads }));
  else tx.delete(block.key);
}

/** Lists read at once when looking blocks up. */
const LOOKUPS_AT_ONCE = 32;

/**
 * For each list, the newest block whose first seq is at or below `seq`, as this
 * transaction has staged it (null when there is none or it was deleted).
 */
async function blocksAt(
  tx: Tx,
  lists: PostingListKey[],
  seq: number,
): Promise<(FoundBlock | null)[]> {
  const out: (FoundBlock | null)[] = [];
  for (let i = 0; i < lists.length; i += LOOKUPS_AT_ONCE) {
    const part = await Promise.all(
      lists.slice(i, i + LOOKUPS_AT_ONCE).map((prefix) => newestBlock(tx.kv, prefix, seq + 1)),
    );
    for (const found of part) {
      const own = found ? tx.own(found.key) : undefined;
      if (!found) out.push(null);
      else if (!own) out.push(found);
      else out.push(own.value === null ? null : { key: found.key, value: own.value });
    }
  }
  return out;
}

/** The newest block of a list whose first seq is below `end` (no check), or null. */
export async function newestBlock(
  kv: Deno.Kv,
  prefix: PostingListKey,
  end?: number,
): Promise<FoundBlock | null> {
  const selector = end === undefined ? { prefix } : { prefix, end: [...prefix, end] };
  for await (const e of listTyped(kv, selector, { reverse: true, limit: 1 })) {
    return { key: e.key, value: e.value };
  }
  return null;
}

/** Each posting list's newest block at or below a seq, read without checks, by list. */
export type BlockLookups = Map<string, FoundBlock | null>;

const listId = (list: Deno.KvKey) => JSON.stringify(list);

/**
 * The lists a message's index changes in when its entry goes from `before` to `after`:
 * those it leaves and those it joins (a list in both keeps the seq and is not touched).
 */
export function changedLists(
  before: IndexedTerms,
  after: IndexedTerms,
): { leave: PostingListKey[]; join: PostingListKey[] } {
  const was = new Map(listsOf(before).map((l) => [listId(l), l]));
  const will = new Map(listsOf(after).map((l) => [listId(l), l]));
  return {
    leave: [...was].filter(([id]) => !will.has(id)).map(([, l]) => l),
    join: [...will].filter(([id]) => !was.has(id)).map(([, l]) => l),
  };
}

/**
 * Looks up, without checks, the newest block at or below `seq` of each list in `lists`
 * that `into` does not hold yet, all at once (callers bound how many), adding them to
 * `into`. Issued beside the caller's own read batch, they cost no round trip of their own.
 */
export async function lookupBlocks(
  kv: Deno.Kv,
  lists: PostingListKey[],
  seq: number,
  into: BlockLookups = new Map(),
): Promise<BlockLookups> {
  const todo = lists.filter((l) => !into.has(listId(l)));
  const found = await Promise.all(todo.map((prefix) => newestBlock(kv, prefix, seq + 1)));
  todo.forEach((l, j) => into.set(listId(l), found[j]));
  return into;
}

/** The term list a stored body entry holds (null: none, or a whole-text body of a store written before). */
export function storedTerms(stored: StoredBody | string | null): IndexedTerms | null {
  return termsIn(stored) ?? null;
}

/** True when the message at `seq` sits in a sealed batch (its postings are in blocks). */
export function isSealed(seq: number, sealed: Deno.KvEntryMaybe<SealedState>): boolean {
  return seq <= sealedState(sealed, 1).upTo;
}

/**
 * Stages a text change of an indexed message in one commit: its body entry with the new
 * term list, and when its batch is sealed, its seq out of the blocks of the lists it leaves
 * and into those of the lists it joins. `before` is the term list its stored body entry
 * holds, `sealed` the sealed marker read with a check, and `blocks` holds a lookup of
 * every list `changedLists(before, …)` names (`lookupBlocks`).
 */
export function stageIndexChange(
  tx: Tx,
  m: MessageRecord,
  body: string,
  before: IndexedTerms,
  sealed: Deno.KvEntryMaybe<SealedState>,
  configuredBatch: number,
  blocks: BlockLookups,
): void {
  const entry = stageBody(tx, m, body)!; // the rules thread: always indexed
  const state = sealedState(sealed, configuredBatch);
  if (m.seq > state.upTo) {
    tx.set(keys.searchSealed(), state);
    return;
  }
  const first = batchFirst(m.seq, state.batch);
  const { leave, join } = changedLists(before, entry);
  const blockOf = (list: PostingListKey) => {
    const found = blocks.get(listId(list));
    if (found === undefined) throw new Error("stageIndexChange: a list was not looked up");
    return found;
  };
  for (const list of leave) dropFromBlock(tx, blockOf(list), m.seq);
  for (const list of join) addToBlock(tx, list, blockOf(list), m, first);
}
