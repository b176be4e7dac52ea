/** Casting a vote, with the veteran status its karma change updates in the same commit. */
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { onKarmaChanged } from "../pins/mod.ts";
import { castVote as castVoteOnly } from "../votes/mod.ts";

/** Casts `input` for `voter` (domain/votes/cast.ts); the author's veteran record follows its karma. */
export function castVote(
  deps: Deps,
  voter: Agent,
  input: Parameters<typeof castVoteOnly>[2],
  network: string,
): ReturnType<typeof castVoteOnly> {
  return castVoteOnly(deps, voter, input, network, onKarmaChanged);
}
