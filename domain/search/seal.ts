/**
 * Sealing search batches (docs/search.md, "How it works"): turns the term lists (in the body
 * entries) of one complete batch of named messages into posting blocks, one per term and
 * topic of the batch, naming the threads of its replies (from their term filters), and moves
 * the sealed marker past it. Runs after the publication that completes a
 * batch, and from the tidy-up cron for any batch left behind (a crash, another instance).
 *
 * Safe across instances: every commit checks the marker it started from, so two sealers of
 * one batch cannot both finish it, and a message removed or re-indexed meanwhile (its
 * commit writes the marker, `stageIndexChange` in postings.ts) makes the sealer start the batch over. A
 * block written for a seq whose message is gone is skipped by search like any such seq.
 */
import { keys } from "../../kv/keys.ts";
import { keySize, KV_LIMITS, valueSize } from "../../kv/atomic_limits.ts";
import { isLockedError } from "../../kv/tx.ts";
import { listTyped, readNamed } from "../../kv/read_many.ts";
import type { Deps } from "../deps.ts";
import { EMPTY_HEAD } from "../board/mod.ts";
import {
  decodeBlock,
  encodeBlock,
  listsOf,
  newestBlock,
  type SealedState,
  sealedState,
  termListsOf,
} from "./postings.ts";

import { noteSealedMarker } from "./marker_seen.ts";
import { filterThread } from "./filters.ts";
import { fnv1a32 } from "../hashing.ts";

/** Share of each portable atomic limit (kv/atomic_limits.ts) one commit of blocks may use. */
const FILL = 0.8;
/**
 * Blocks per commit at most: small commits let the publications arriving meanwhile go
 * between them (one commit of 800 blocks held them up for tens of milliseconds).
 */
const BLOCKS_PER_COMMIT = 200;
/** Lists whose previous block is looked up at once. */
const LOOKUPS_AT_ONCE = 64;

/**
 * Seals every complete batch not sealed yet. Returns how many this call sealed.
 * `listsPerPass` (tests) sizes the passes of a batch (`LISTS_PER_PASS`).
 */
export async function sealSearchBatches(
  deps: Deps,
  listsPerPass = LISTS_PER_PASS,
): Promise<number> {
  let sealed = 0;
  for (let attempt = 0; attempt < 1000; attempt++) {
    const { markerE, headE } = await readNamed(deps.kv, {
      markerE: keys.searchSealed(),
      headE: keys.boardHeads("named"),
    });
    const state = sealedState(markerE, deps.config.searchBatch);
    noteSealedMarker(deps.kv, state.upTo);
    const head = headE.value ?? EMPTY_HEAD;
    if (head.seq < state.upTo + state.batch) return sealed;
    try {
      if (await sealBatch(deps.kv, markerE, state, listsPerPass)) sealed++;
    } catch (e) {
      // The embedded store was busy with another connection's write: start the batch over.
      if (!isLockedError(e)) throw e;
      await new Promise((r) => setTimeout(r, 1 + Math.random() * 20));
    }
  }
  return sealed;
}

/**
 * Start-up work: a store whose sealed marker does not say from which seq its messages have
 * term filters (a marker written by a version before filters, or no marker on a store that
 * holds messages but no filter) is told the next seq. Every message stored from then on has
 * one (filters.ts); the messages below it that are not sealed yet are searched from their body
 * entries until their batch is sealed. A store with no marker that holds a filter was written
 * by this version: every message it holds has one, and it is left alone. Run this version
 * alone on a store: a message an older version stores afterwards has no filter, and search
 * does not see it before it is sealed.
 */
export async function markTermFilters(deps: Deps): Promise<void> {
  while (true) {
    const [{ markerE, headE }, holdsFilters] = await Promise.all([
      readNamed(deps.kv, { markerE: keys.searchSealed(), headE: keys.boardHeads("named") }),
      holdsAny(deps.kv, keys.searchFilters.range()),
    ]);
    const seq = headE.value?.seq ?? 0;
    if (markerE.value?.filters !== undefined) return;
    if (markerE.value === null && (seq === 0 || holdsFilters)) return;
    const state = { ...sealedState(markerE, deps.config.searchBatch), filters: seq + 1 };
    const op = deps.kv.atomic().check(markerE, headE).set(keys.searchSealed(), state);
    if ((await op.commit()).ok) return;
  }
}

/**
 * Tells the operator, at start, when the store was written before sealed batches (it holds
 * `search_term_counts` rows): such a store's searches miss messages once a batch is sealed,
 * silently, until the repair of docs/search.md ("Older stores") is made. True when it warned.
 */
export async function warnSearchBeforeBatches(deps: Deps): Promise<boolean> {
  if (!(await holdsAny(deps.kv, keys.searchTermCounts.range()))) return false;
  console.warn(
    'search: this store was written before sealed batches (it holds search_term_counts rows); once a batch is sealed its searches miss messages. Repair it as docs/search.md says under "Older stores".',
  );
  return true;
}

/** True when some entry is stored under `prefix`. */
async function holdsAny(kv: Deno.Kv, prefix: Deno.KvKey): Promise<boolean> {
  for await (const _ of kv.list({ prefix }, { limit: 1 })) return true;
  return false;
}

/**
 * Posting lists one pass of a batch holds in memory (about): a batch whose messages hold
 * many distinct words (up to 256 each) is sealed in several passes, each over the lists
 * whose hash falls in it, so sealing's memory stays bounded whatever the batch holds.
 */
const LISTS_PER_PASS = 4096;

/** Seals the batch after `state.upTo`; false when another commit moved the marker first. */
async function sealBatch(
  kv: Deno.Kv,
  marker: Deno.KvEntryMaybe<SealedState>,
  state: SealedState,
  listsPerPass: number,
): Promise<boolean> {
  const first = state.upTo + 1;
  const end = state.upTo + state.batch + 1;
  const { lists, seqs, threads } = await batchPostings(kv, first, end);
  const passes = Math.max(1, Math.ceil(lists.length / listsPerPass));
  for (let pass = 0; pass < passes; pass++) {
    const part = new Map<string, number[]>();
    lists.forEach((id, i) => {
      if (passes > 1 && fnv1a32(id) % passes !== pass) return;
      const held = part.get(id);
      if (held) held.push(seqs[i]);
      else part.set(id, [seqs[i]]);
    });
    if (!(await writeBlocks(kv, marker, first, part, threads))) return false;
  }
  const done = await kv.atomic().check(marker)
    .set(keys.searchSealed(), { ...state, upTo: end - 1 } satisfies SealedState)
    .commit();
  return done.ok;
}

/**
 * The postings of the batch `first` to `end` (exclusive) from its term lists: for each, its
 * list (the key prefix, as JSON) and its seq, in seq order; and the threads of its replies,
 * from their term filters (filters.ts `filterThread`). The entries read are let go.
 */
async function batchPostings(kv: Deno.Kv, first: number, end: number) {
  const [entries, filters] = await Promise.all([
    Array.fromAsync(listTyped(kv, {
      start: keys.bodies("named", first),
      end: keys.bodies("named", end),
    })),
    Array.fromAsync(listTyped(kv, {
      start: keys.searchFilters(first),
      end: keys.searchFilters(end),
    })),
  ]);
  const threads = new Map<number, number>();
  for (const f of filters) {
    const seq = f.key[f.key.length - 1] as number;
    const thread = f.value instanceof Uint8Array ? filterThread(f.value, seq) : undefined;
    if (thread !== undefined && thread < seq) threads.set(seq, thread);
  }
  const terms = await termListsOf(kv, entries);
  const lists: string[] = [];
  const seqs: number[] = [];
  entries.forEach((e, i) => {
    if (terms[i] === null) return;
    const seq = e.key[e.key.length - 1] as number;
    for (const prefix of listsOf(terms[i]!)) {
      lists.push(JSON.stringify(prefix));
      seqs.push(seq);
    }
  });
  return { lists, seqs, threads };
}

/**
 * Writes the blocks of batch `first` for `part` (list → its seqs), each with the running
 * total of its list and the threads of its replies, in commits that check the marker; false
 * when one found it moved.
 */
async function writeBlocks(
  kv: Deno.Kv,
  marker: Deno.KvEntryMaybe<SealedState>,
  first: number,
  part: Map<string, number[]>,
  threads: ReadonlyMap<number, number>,
): Promise<boolean> {
  const all = [...part].map(([id, seqs]) => ({ prefix: JSON.parse(id) as Deno.KvKey, seqs }));
  const blocks: [Deno.KvKey, Uint8Array][] = [];
  for (let i = 0; i < all.length; i += LOOKUPS_AT_ONCE) {
    const lookups = all.slice(i, i + LOOKUPS_AT_ONCE);
    const before = await Promise.all(lookups.map((l) => newestBlock(kv, l.prefix, first)));
    lookups.forEach((l, j) => {
      const total = (before[j] ? decodeBlock(before[j]!.value).total : 0) + l.seqs.length;
      blocks.push([[...l.prefix, first], encodeBlock({ seqs: l.seqs, total, threads })]);
    });
  }
  for (const commit of commitsOf(blocks)) {
    const op = kv.atomic().check(marker);
    for (const [key, block] of commit) op.set(key, block);
    if (!(await op.commit()).ok) return false;
  }
  return true;
}

/** Splits blocks into commits that stay inside the portable atomic limits. */
function commitsOf(blocks: [Deno.KvKey, Uint8Array][]): [Deno.KvKey, Uint8Array][][] {
  const out: [Deno.KvKey, Uint8Array][][] = [];
  let part: [Deno.KvKey, Uint8Array][] = [];
  let keyBytes = 0;
  let bytes = 0;
  for (const [key, block] of blocks) {
    const k = keySize(key);
    const v = valueSize(block);
    if (
      part.length &&
      (part.length + 1 > Math.min(BLOCKS_PER_COMMIT, KV_LIMITS.mutationsPerAtomic * FILL) ||
        keyBytes + k > KV_LIMITS.keyBytesPerAtomic * FILL ||
        bytes + k + v > KV_LIMITS.bytesPerAtomic * FILL)
    ) {
      out.push(part);
      part = [];
      keyBytes = bytes = 0;
    }
    part.push([key, block]);
    keyBytes += k;
    bytes += k + v;
  }
  if (part.length) out.push(part);
  return out;
}
