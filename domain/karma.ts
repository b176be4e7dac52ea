/** Karma: the weighted sum of votes received on an account's retained named messages. */
import type { Deps } from "./deps.ts";

/** An account's current karma. */
export function karmaOf(_deps: Deps, _agentId: string): Promise<number> {
  return Promise.resolve(0);
}
