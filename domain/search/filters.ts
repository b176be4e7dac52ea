/**
 * Term filters (docs/search.md, "The tail"): a named message's indexed terms and topic as
 * sorted 16-bit hashes, stored under `["search_filters", seq]` by the commit that stores the
 * message. A search lists these, not the body entries, over the messages not sealed yet: a
 * filter takes 2 bytes a term (at most about 520 bytes), where a body entry holds the text
 * after the preview and the whole term list (up to about 21 KB). A filter never misses a term
 * the message holds; a hash shared by two words lets a message through that lacks one (about
 * one message in a thousand for a query word, by chance), so every message a filter lets
 * through is checked against its exact term list (in its body entry) before it is shown
 * (`Scanner.materialise`, scan.ts). Two bytes a term keep a post's commit within its byte
 * goal (docs/benchmarks.md, "Cost per operation").
 *
 * After the hashes, five bytes name the message's thread: its distance below the message
 * (0 for a thread, 4 bytes) and a byte 1, so that a search reads a reply's thread beside the
 * reply (`filterThread`). A filter written before holds the hashes alone (an even length).
 */
import { fnv1a32 } from "../hashing.ts";

/** A term's 16-bit hash: its FNV-1a hash folded in half. */
function hash16(s: string): number {
  const h = fnv1a32(s);
  return (h ^ (h >>> 16)) & 0xffff;
}

/** The hash a topic is filtered under: tokens never hold U+0000, so none shares it by design. */
const topicHash = (topic: string) => hash16("\u0000" + topic);

/** What a filter is asked for: a query token, or the topic filter. */
interface FilterWanted {
  term?: string;
  topic?: string;
}

/** Bytes after the hashes that name the thread (odd, so a filter without them is told apart). */
const THREAD_BYTES = 5;

/**
 * The filter of a message indexed under `terms` and `topic`; `threadBelow` is how far below
 * the message its thread is (its seq less the thread's: 0 for a thread).
 */
export function termFilterOf(
  terms: readonly string[],
  topic: string | null,
  threadBelow = 0,
): Uint8Array {
  const hashes = new Set(terms.map(hash16));
  if (topic !== null) hashes.add(topicHash(topic));
  const sorted = [...hashes].sort((a, b) => a - b);
  const out = new Uint8Array(sorted.length * 2 + THREAD_BYTES);
  const view = new DataView(out.buffer);
  sorted.forEach((h, i) => view.setUint16(i * 2, h));
  view.setUint32(sorted.length * 2, threadBelow);
  out[out.length - 1] = 1;
  return out;
}

/** Bytes of a filter's hashes. */
function hashBytes(filter: Uint8Array): number {
  return filter.byteLength % 2 === 0 ? filter.byteLength : filter.byteLength - THREAD_BYTES;
}

/**
 * The seq of the thread of the message at `seq` whose filter this is (`seq` itself for a
 * thread), or undefined from a filter written before filters named it.
 */
export function filterThread(filter: Uint8Array, seq: number): number | undefined {
  if (filter.byteLength % 2 === 0) return undefined;
  const view = new DataView(filter.buffer, filter.byteOffset, filter.byteLength);
  return seq - view.getUint32(hashBytes(filter));
}

/** The hashes a filter must hold for a message to match every one of `wanted`. */
export function filterHashes(wanted: readonly FilterWanted[]): number[] {
  return wanted.map((w) => w.term !== undefined ? hash16(w.term) : topicHash(w.topic!));
}

/** True when `filter` holds every one of `hashes` (binary search: the filter is sorted). */
export function filterMayHold(filter: Uint8Array, hashes: readonly number[]): boolean {
  const view = new DataView(filter.buffer, filter.byteOffset, filter.byteLength);
  const n = hashBytes(filter) / 2;
  return hashes.every((h) => {
    let lo = 0;
    let hi = n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = view.getUint16(mid * 2);
      if (at === h) return true;
      if (at < h) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  });
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    searchFilters: Uint8Array;
  }
}
