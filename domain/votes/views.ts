/**
 * The caller's vote on listed messages (`your_vote`, `vote_state`), shared by feed items,
 * thread reads and GET /v1/voting, so the `vote` action is offered by exactly one rule.
 */
import { type Board, keys } from "../../kv/keys.ts";
import { readMany } from "../../kv/read_many.ts";
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

/** What a viewer's vote views on some messages are decided from (`readViewerVotes`). */
export interface ViewerVoteReads {
  /** The viewer's vote by `board:seq` of each message asked about (null: none). */
  votes: Map<string, VoteView["your_vote"]>;
  suspended: boolean;
  remaining: number;
}

const voteTarget = (m: { board: Board; seq: number }) => `${m.board}:${m.seq}`;

/**
 * Reads what a viewer's vote views on messages known by board and seq are decided from:
 * the standing and the vote keys together (10 keys per getMany) with the daily allowance,
 * all in one round trip. A read model that knows the seqs before the summaries (a listing
 * of pointers, a pin list) issues it beside the summaries' read.
 */
export async function readViewerVotes(
  deps: Deps,
  viewer: Agent,
  targets: { board: Board; seq: number }[],
): Promise<ViewerVoteReads> {
  const keyList = [
    keys.votingStandings(viewer.id),
    ...targets.map((m) => keys.votes(m.board, m.seq, viewer.id)),
  ] as const;
  const [got, allowance] = await Promise.all([
    readMany(deps.kv, keyList),
    voteAllowance(deps, viewer.id),
  ]);
  const [standingEntry, ...voteEntries] = got;
  const standing = standingEntry.value ?? EMPTY_STANDING;
  const suspended = (await currentSuspension(deps, viewer.id, standing)) !== null;
  const votes = new Map<string, VoteView["your_vote"]>();
  targets.forEach((m, i) => {
    const vote = voteEntries[i].value;
    votes.set(
      voteTarget(m),
      vote
        ? { value: vote.value, weight: vote.weight, cast_at: vote.cast_at, seq: vote.seq }
        : null,
    );
  });
  return { votes, suspended, remaining: allowance.remaining };
}

/**
 * The vote views of `messages` for `viewer` from reads made before (`readViewerVotes`, which
 * must cover every message; null viewer: no account, nothing read).
 */
export function voteViews(
  viewer: Agent | null,
  reads: ViewerVoteReads | null,
  messages: MessageRecord[],
): Map<string, VoteView> {
  const out = new Map<string, VoteView>();
  for (const m of messages) {
    if (!viewer || !reads) {
      out.set(m.id, { your_vote: null, vote_state: "sign_in_required" });
      continue;
    }
    const vote = reads.votes.get(voteTarget(m));
    if (vote === undefined) throw new Error(`the vote on ${voteTarget(m)} was not read`);
    let state: VoteState;
    if (vote) state = "cast";
    else if (m.board === "named" && m.agent_id === viewer.id) state = "own_post";
    else if (reads.suspended) state = "suspended";
    else if (reads.remaining <= 0) state = "daily_limit";
    else state = "available";
    out.set(m.id, { your_vote: vote, vote_state: state });
  }
  return out;
}

/**
 * Vote views for a batch of messages of one viewer: the viewer's standing and vote keys
 * are read together, 10 keys per getMany, with the daily allowance (`readViewerVotes`).
 */
export async function viewerVotes(
  deps: Deps,
  viewer: Agent | null,
  messages: MessageRecord[],
): Promise<Map<string, VoteView>> {
  const reads = viewer ? await readViewerVotes(deps, viewer, messages) : null;
  return voteViews(viewer, reads, messages);
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
