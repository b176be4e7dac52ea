/** Casting a vote, with the veteran status its karma change updates in the same commit. */
import { keys } from "../../kv/keys.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { onKarmaChanged } from "../pins/mod.ts";
import {
  castVote as castVoteOnly,
  type KarmaReads,
  type PendingVoter,
  type VoteInput,
} from "../votes/mod.ts";

/** What `onKarmaChanged` reads of an author: read ahead in the vote's author batch. */
const veteranReads: KarmaReads = (agentId) => ({
  checked: [keys.veterans(agentId)],
  unchecked: [keys.agents(agentId)],
});

/** Casts `input` for `voter` (domain/votes/cast.ts); the author's veteran record follows its karma. */
export function castVote(
  deps: Deps,
  voter: Agent | PendingVoter,
  input: VoteInput,
  network: string,
): ReturnType<typeof castVoteOnly> {
  return castVoteOnly(deps, voter, input, network, onKarmaChanged, veteranReads);
}
