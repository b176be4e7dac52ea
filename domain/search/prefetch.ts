/**
 * The first read batch of a search (domain/reads/search_page.ts): the newest posting blocks
 * of every list, read beside the sealed marker and the tail, and the in-memory intersection
 * that decides a page from them when they reach far enough, so that the page only reads its
 * candidates' summaries next (docs/search.md, "Round trips").
 *
 * Blocks read beside the marker are trusted only up to a marker committed before the batch
 * started (`sealedMarkerSeen`): the batches sealed since may have been written after a
 * listing went out, so the seqs above it are checked from their term lists (the tail
 * listing starts there).
 */
import { listTyped } from "../../kv/read_many.ts";
import { decodeBlock, type PostingListKey } from "./postings.ts";

/** Sealed seqs whose blocks a search lists per list in its first batch (about). */
const PREFETCH_SEQS = 2048;
/** Blocks listed per list at least and at most. */
const MIN_BLOCKS = 2;
const MAX_BLOCKS = 64;

/** The newest blocks of one posting list as listed, newest first. */
export interface ListedBlocks {
  blocks: { first: number; seqs: number[] }[];
  /** The list's running total at its newest block (0 when it has none). */
  count: number;
  /** Lowest seq the listing covers: every block of the list from here up was listed. */
  from: number;
  /** The thread of each reply the blocks name (`PostingBlock.threads`). */
  threads: Map<number, number>;
}

/** How many blocks of each list the first batch lists, for a batch size. */
export function prefetchBlocks(batch: number): number {
  return Math.max(MIN_BLOCKS, Math.min(MAX_BLOCKS, Math.ceil(PREFETCH_SEQS / batch)));
}

/** Lists the newest `limit` blocks of a list (one range read, no check). */
export async function listNewestBlocks(
  kv: Deno.Kv,
  prefix: PostingListKey,
  limit: number,
): Promise<ListedBlocks> {
  const blocks: ListedBlocks["blocks"] = [];
  let count = 0;
  const threads = new Map<number, number>();
  for await (const e of listTyped(kv, { prefix }, { reverse: true, limit, batchSize: limit })) {
    const block = decodeBlock(e.value);
    if (blocks.length === 0) count = block.total;
    blocks.push({ first: e.key[e.key.length - 1] as number, seqs: block.seqs });
    for (const [seq, thread] of block.threads ?? []) threads.set(seq, thread);
  }
  const from = blocks.length < limit ? 1 : blocks[blocks.length - 1].first;
  return { blocks, count, from, threads };
}

/**
 * The seqs from `lo` to `hi` (inclusive) that every listing holds, newest first, and the
 * blocks they were cut from (the work the intersection stands for). Every listing must
 * cover `lo` (`from <= lo`).
 */
export function intersectListed(
  listed: ListedBlocks[],
  lo: number,
  hi: number,
): { seqs: number[]; blocks: number } {
  let blocks = 0;
  const sets = listed.map((l) => {
    const out: number[] = [];
    for (const b of l.blocks) {
      if (b.first > hi || b.seqs.every((s) => s < lo)) continue;
      blocks++;
      for (const s of b.seqs) if (s >= lo && s <= hi) out.push(s);
    }
    return out;
  });
  sets.sort((a, b) => a.length - b.length);
  const [driver, ...others] = sets;
  const held = others.map((s) => new Set(s));
  const seqs = driver.filter((s) => held.every((h) => h.has(s))).sort((a, b) => b - a);
  return { seqs, blocks };
}
