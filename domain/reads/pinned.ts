/** Pinned notices shown on the initial page of a board's feeds. */
import type { Board } from "../../kv/keys.ts";
import type { Deps } from "../deps.ts";
import { livePinsOf, pinnedBy, readPinBook } from "../pins/mod.ts";
import { toItems, type ViewerSource, votesOn } from "./feeds.ts";

/**
 * Live pins of a board as feed items, official notices first (the rules thread leads),
 * then community pins newest first. Each is the thread's ordinary feed item plus `pin`.
 * They sit in the page's own `pinned` list: items and cursors are never affected.
 * Two batches: the stored pins, then their threads and owners with the caller's votes on
 * the pinned threads (their seqs are in the pins).
 */
export async function pinnedForFeed(deps: Deps, board: Board, viewerSource: ViewerSource) {
  const book = await readPinBook(deps.kv, board);
  const viewer = await viewerSource;
  const seqs = [...book.officials, ...book.community].map((p) => p.thread_seq);
  if (seqs.length === 0) return [];
  const [pins, votes] = await Promise.all([
    livePinsOf(deps, book),
    votesOn(deps, viewer, board, [...new Set(seqs)]),
  ]);
  if (pins.length === 0) return [];
  const items = await toItems(deps, viewer, pins.map((p) => p.thread), votes);
  return items.map((item, i) => {
    const p = pins[i];
    return {
      ...item,
      pin: {
        kind: p.kind,
        pinned_at: p.pin.created_at,
        expires_at: p.kind === "community" ? p.pin.expires_at : null,
        pinned_by: pinnedBy(p),
        rules: p.kind === "official" && p.pin.rules,
      },
    };
  });
}
