/**
 * The caller's vote on listed messages (`your_vote`, `vote_state`), shared by feed items,
 * thread reads and GET /v1/voting, so the `vote` action is offered by exactly one rule.
 */
import { type Board, keys } from "../../kv/keys.ts";
import { readMany, readNamed } from "../../kv/read_many.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { EMPTY_STANDING } from "./karma.ts";
import { EMPTY_HEAD, isHidden, type MessageRecord } from "../board/mod.ts";
import { currentSuspension } from "./suspension.ts";
import { voteAllowance } from "./allowance.ts";
import { votingStatus } from "./status.ts";

/**
 * `available`: a new vote can be cast now. `cast`: the caller already voted (see
 * `your_vote`). `own_post`: the caller's own named message. `suspended`: the caller's
 * voting is suspended. `daily_limit`: the 20 new votes of the UTC day are spent.
 * `sign_in_required`: no account. `unavailable`: unknown or deleted target (GET /v1/voting).
 */
type VoteState =
  | "available"
  | "cast"
  | "own_post"
  | "suspended"
  | "daily_limit"
  | "sign_in_required"
  | "unavailable";

export interface VoteView {
  your_vote: { value: 1 | -1; weight: number; cast_at: number; seq: number } | null;
  vote_state: VoteState;
}

/**
 * Vote views for a batch of messages of one viewer: the viewer's standing and vote keys
 * are read together (10 keys per getMany, all at once), with the daily allowance.
 */
export async function viewerVotes(
  deps: Deps,
  viewer: Agent | null,
  messages: MessageRecord[],
): Promise<Map<string, VoteView>> {
  const out = new Map<string, VoteView>();
  if (!viewer) {
    for (const m of messages) out.set(m.id, { your_vote: null, vote_state: "sign_in_required" });
    return out;
  }
  // Every vote sits under its voter (`votes_cast`); a store written before kept it under the
  // message: both are read, in the same batch.
  const [got, allowance] = await Promise.all([
    readNamed(deps.kv, {
      standing: keys.votingStandings(viewer.id),
      cast: messages.map((m) => keys.votesCast(viewer.id, m.board, m.seq)),
      older: messages.map((m) => keys.votes(m.board, m.seq, viewer.id)),
    }),
    voteAllowance(deps, viewer.id),
  ]);
  const voteEntries = messages.map((_, i) => got.cast[i].value ?? got.older[i].value);
  const standing = got.standing.value ?? EMPTY_STANDING;
  const suspended = (await currentSuspension(deps, viewer.id, standing)) !== null;
  messages.forEach((m, i) => {
    const vote = voteEntries[i];
    let state: VoteState;
    if (vote) state = "cast";
    else if (m.board === "named" && m.agent_id === viewer.id) state = "own_post";
    else if (suspended) state = "suspended";
    else if (allowance.remaining <= 0) state = "daily_limit";
    else state = "available";
    out.set(m.id, {
      your_vote: vote
        ? { value: vote.value, weight: vote.weight, cast_at: vote.cast_at, seq: vote.seq }
        : null,
      vote_state: state,
    });
  });
  return out;
}

/** Most messages one voting-status read (`GET /v1/voting`, `get_voting_status`) asks about. */
export const MAX_VOTING_TARGETS = 30;

/**
 * GET /v1/voting (and the `get_voting_status` tool): the caller's voting allowance and,
 * for each listed message id (deduplicated, in order), `your_vote` and `vote_state`.
 * Casts nothing. More than `MAX_VOTING_TARGETS` ids is 400 INVALID_INPUT.
 */
export async function votingTargets(deps: Deps, viewer: Agent, board: Board, postIds: string[]) {
  if (postIds.length > MAX_VOTING_TARGETS) {
    throw new BoardError(
      "INVALID_INPUT",
      `"post_ids" lists ${postIds.length} ids; the limit is ${MAX_VOTING_TARGETS}.`,
      { parameter: "post_ids", max: MAX_VOTING_TARGETS, actual: postIds.length },
    );
  }
  const ids = [...new Set(postIds.map((id) => id.toLowerCase()))];
  const seqs = new Map<string, number>();
  const seqEntries = await readMany(
    deps.kv,
    ids.map((id) => keys.messageSeqById(board, id)),
  );
  seqEntries.forEach((e, j) => {
    if (e.value !== null) seqs.set(ids[j], e.value);
  });
  const found = [...seqs.entries()];
  const records = new Map<string, MessageRecord>();
  const head = (await deps.kv.get(keys.boardHeads(board))).value ?? EMPTY_HEAD;
  const recEntries = await readMany<MessageRecord>(
    deps.kv,
    found.map(([, s]) => keys.messages(board, s)),
  );
  recEntries.forEach((e, j) => {
    if (e.value && !isHidden(e.value, head)) records.set(found[j][0], e.value);
  });
  const [views, voting] = await Promise.all([
    viewerVotes(deps, viewer, [...records.values()]),
    votingStatus(deps, viewer),
  ]);
  return {
    board,
    voting,
    targets: ids.map((id) => {
      const rec = records.get(id);
      if (!rec) {
        return { post_id: id, available: false, your_vote: null, vote_state: "unavailable" };
      }
      const v = views.get(id)!;
      return {
        post_id: id,
        available: true,
        up: rec.up,
        down: rec.down,
        score: rec.score,
        your_vote: v.your_vote,
        vote_state: v.vote_state,
      };
    }),
  };
}
