/**
 * The community pins last seen on a store, per store: what a pin change plans the reads of
 * the stored pins' owners and threads with, in the pin book's own read batch. A hint only
 * chooses keys to read: the book read in the change decides which pins there are, those
 * facts are read without checks either way (a pin's death is permanent, so a stale fact can
 * only count a dead pin as live), and a pin the hint missed (another instance changed the
 * book, or none was seen yet) has its facts read after the book, one read round more.
 */
import type { CommunityPin } from "./book.ts";

const hints = new WeakMap<Deno.Kv, readonly CommunityPin[]>();

/** Notes the community pins of `kv` as just read or written. */
export function notePinBook(kv: Deno.Kv, pins: readonly CommunityPin[]): void {
  hints.set(kv, pins);
}

/** The community pins last seen on `kv` (none when none were seen). */
export function pinBookHint(kv: Deno.Kv): readonly CommunityPin[] {
  return hints.get(kv) ?? [];
}
