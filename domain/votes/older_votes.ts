/**
 * Whether a store may hold votes of the older layout, which kept a vote under its message
 * only (`votes`), with no copy under its voter (`votes_cast`). Every vote of that layout also
 * wrote the board-wide vote counter, which nothing writes now: a store without the counter
 * holds every vote under its voter, and a viewer's vote views read only those keys (half the
 * keys of a thread or feed page's vote reads).
 *
 * Learned once per store when the service starts (`noteOlderVotes`): a store with no such
 * votes then cannot gain any, since no code that writes them runs beside this one. Not yet
 * learned (a handle that never started the service): both places are read. The hint only
 * chooses what a view reads; a vote's own commit always checks both places.
 */
import { keys } from "../../kv/keys.ts";
import type { Deps } from "../deps.ts";

const learned = new WeakMap<Deno.Kv, boolean>();

/** Learns, at start, whether `deps`' store holds votes of the older layout. */
export async function noteOlderVotes(deps: Deps): Promise<void> {
  const counter = await deps.kv.get(keys.counters("votes"));
  learned.set(deps.kv, counter.value !== null);
}

/** Whether votes of the older layout may be in the store (true until learned). */
export function mayHoldOlderVotes(kv: Deno.Kv): boolean {
  return learned.get(kv) ?? true;
}
