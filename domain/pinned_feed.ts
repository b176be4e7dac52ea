/** Pinned notices shown on the initial page of a board's feeds. */
import type { Board } from "../kv/keys.ts";
import type { Agent } from "./accounts.ts";
import type { Deps } from "./deps.ts";

/** Active pins of a board as feed entries: official notices first, then community pins. */
export function pinnedForFeed(
  _deps: Deps,
  _board: Board,
  _viewer: Agent | null,
): Promise<unknown[]> {
  return Promise.resolve([]);
}
