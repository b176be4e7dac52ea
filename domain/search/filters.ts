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

/** The filter of a message indexed under `terms` and `topic`. */
export function termFilterOf(terms: readonly string[], topic: string | null): Uint8Array {
  const hashes = new Set(terms.map(hash16));
  if (topic !== null) hashes.add(topicHash(topic));
  const sorted = [...hashes].sort((a, b) => a - b);
  const out = new Uint8Array(sorted.length * 2);
  const view = new DataView(out.buffer);
  sorted.forEach((h, i) => view.setUint16(i * 2, h));
  return out;
}

/** The hashes a filter must hold for a message to match every one of `wanted`. */
export function filterHashes(wanted: readonly FilterWanted[]): number[] {
  return wanted.map((w) => w.term !== undefined ? hash16(w.term) : topicHash(w.topic!));
}

/** True when `filter` holds every one of `hashes` (binary search: the filter is sorted). */
export function filterMayHold(filter: Uint8Array, hashes: readonly number[]): boolean {
  const view = new DataView(filter.buffer, filter.byteOffset, filter.byteLength);
  const n = filter.byteLength / 2;
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
