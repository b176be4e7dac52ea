/**
 * The highest sealed marker (`search_sealed`, postings.ts) this instance has read on each
 * store. The marker only moves up, so a search may list its tail from above the one seen,
 * beside its own read of the marker (domain/reads/search_page.ts): the listing then covers
 * the tail. Blocks a search lists beside its marker read are trusted up to the one seen only
 * (they were committed before it was read); the seqs above come from the tail listing.
 */
const seen = new WeakMap<Deno.Kv, number>();

/** Notes a marker read (or written) on `kv`. */
export function noteSealedMarker(kv: Deno.Kv, upTo: number): void {
  if (upTo > (seen.get(kv) ?? -1)) seen.set(kv, upTo);
}

/** The highest marker noted on `kv`, if any. */
export function sealedMarkerSeen(kv: Deno.Kv): number | undefined {
  return seen.get(kv);
}
