/**
 * The caller's vote on listed messages (`your_vote`, `vote_state`), shared by feed items,
 * thread reads and GET /v1/voting, so the `vote` action is offered by exactly one rule.
 */
import { type Board, keys } from "../../kv/keys.ts";
import { readMany, readNamed } from "../../kv/read_many.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { EMPTY_STANDING, type VotingStanding } from "./karma.ts";
import type { VoteRecord } from "./records.ts";
import { readVotingFacts, type VotingFacts } from "./facts.ts";
import { readAsClaimed } from "../claimed_reads.ts";
import {
  claimedSeq,
  EMPTY_HEAD,
  isHidden,
  type MessageRecord,
  otherBoard,
  seqFound,
} from "../board/mod.ts";
import { currentSuspension } from "./suspension.ts";
import { allowanceFrom, allowanceKey } from "./allowance.ts";
import { mayHoldOlderVotes } from "./older_votes.ts";
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
 * What a viewer's vote views on some messages are decided from (`readViewerVotes`): its
 * votes (by `board:seq`), suspension, allowance.
 */
export interface ViewerVoteReads {
  votes: Map<string, VoteRecord>;
  suspended: boolean;
  remaining: number;
}

const targetKey = (t: { board: Board; seq: number }) => `${t.board}:${t.seq}`;

/**
 * The viewer's votes read for some targets, in their order: under the voter, and under the
 * message where a store written before may have kept them (none read otherwise).
 */
interface VoteEntries {
  cast: Deno.KvEntryMaybe<VoteRecord>[];
  older: Deno.KvEntryMaybe<VoteRecord>[];
}

/**
 * Reads the viewer's votes on `targets` with its standing (10 keys per getMany) and its
 * daily allowance, all at once. The targets need only their board and sequence, so the
 * reads can go out before the messages themselves are read (a listing of pointers, a pin
 * list issues it beside the summaries' read). `facts`: the viewer's voting facts when the
 * answer reads them anyway (the standing is then not read again).
 */
export async function readViewerVotes(
  deps: Deps,
  viewerId: string,
  targets: readonly { board: Board; seq: number }[],
  facts?: VotingFacts,
): Promise<ViewerVoteReads> {
  // Every vote sits under its voter (`votes_cast`); a store written before may have kept it
  // under the message only: then both are read, in the same batch (domain/votes/older_votes.ts).
  const voteKeys = {
    cast: targets.map((t) => keys.votesCast(viewerId, t.board, t.seq)),
    older: mayHoldOlderVotes(deps.kv)
      ? targets.map((t) => keys.votes(t.board, t.seq, viewerId))
      : [],
  };
  const readOwn = async (): Promise<[VotingStanding, VoteEntries, undefined, number]> => {
    const now = deps.clock.now();
    const { standing, used, ...entries } = await readNamed(deps.kv, {
      standing: keys.votingStandings(viewerId),
      used: allowanceKey(viewerId, now),
      ...voteKeys,
    });
    const { remaining } = allowanceFrom(deps, used.value, now);
    return [standing.value ?? EMPTY_STANDING, entries, undefined, remaining];
  };
  const readWithFacts = async (f: VotingFacts) => {
    const [standing, entries, known, allowance] = await Promise.all([
      f.standing,
      readNamed(deps.kv, voteKeys),
      f.received,
      f.allowance,
    ]);
    return [standing, entries, known, allowance.remaining] as const;
  };
  const [standing, voteEntries, known, remaining] = facts
    ? await readWithFacts(facts)
    : await readOwn();
  const suspended = (await currentSuspension(deps, viewerId, standing, known)) !== null;
  const votes = new Map<string, VoteRecord>();
  targets.forEach((t, i) => {
    const v = voteEntries.cast[i].value ?? voteEntries.older[i]?.value ?? null;
    if (v) votes.set(targetKey(t), v);
  });
  return { votes, suspended, remaining };
}

/**
 * The vote view of each message (by id) from the reads made for them (`readViewerVotes`,
 * which must cover every message; no viewer: no account, nothing read).
 */
export function voteViews(
  viewerId: string | null,
  f: ViewerVoteReads | null,
  messages: MessageRecord[],
): Map<string, VoteView> {
  const out = new Map<string, VoteView>();
  for (const m of messages) {
    if (viewerId === null || f === null) {
      out.set(m.id, { your_vote: null, vote_state: "sign_in_required" });
      continue;
    }
    const vote = f.votes.get(targetKey(m)) ?? null;
    let state: VoteState;
    if (vote) state = "cast";
    else if (m.board === "named" && m.agent_id === viewerId) state = "own_post";
    else if (f.suspended) state = "suspended";
    else if (f.remaining <= 0) state = "daily_limit";
    else state = "available";
    out.set(m.id, {
      your_vote: vote
        ? { value: vote.value, weight: vote.weight, cast_at: vote.cast_at, seq: vote.seq }
        : null,
      vote_state: state,
    });
  }
  return out;
}

/** Most messages one voting-status read (`GET /v1/voting`, `get_voting_status`) asks about. */
export const MAX_VOTING_TARGETS = 30;

/**
 * GET /v1/voting (and the `get_voting_status` tool): the caller's voting allowance and,
 * for each listed message id (deduplicated, in order), `your_vote` and `vote_state`.
 * Casts nothing. More than `MAX_VOTING_TARGETS` ids is 400 INVALID_INPUT. `claimedId`: the
 * id the caller's credential names while `caller` still resolves (domain/claimed_reads.ts).
 */
export async function votingTargets(
  deps: Deps,
  caller: Agent | Promise<Agent>,
  board: Board,
  postIds: string[],
  claimedId: string | null = null,
) {
  if (postIds.length > MAX_VOTING_TARGETS) {
    throw new BoardError(
      "INVALID_INPUT",
      `"post_ids" lists ${postIds.length} ids; the limit is ${MAX_VOTING_TARGETS}.`,
      { parameter: "post_ids", max: MAX_VOTING_TARGETS, actual: postIds.length },
    );
  }
  const ids = [...new Set(postIds.map((id) => id.toLowerCase()))];
  const targets = readTargetSeqs(deps, board, ids); // needs no caller: starts at once
  targets.catch(() => {}); // awaited by every run below
  return await readAsClaimed(
    caller,
    claimedId,
    (viewerId, viewer) => readVotingTargets(deps, viewerId, viewer, board, targets),
  );
}

/**
 * Where each of `ids` is on `board`: the records at the seqs the ids carry, read with the id
 * index (`seqFound`). Answers the ids found with their seqs and, for those found at their
 * claim, their records (an id made before is read at its seq next).
 */
async function findOnBoard(deps: Deps, board: Board, ids: string[]) {
  const claims = ids.map(claimedSeq);
  const [seqEntries, atClaims] = await Promise.all([
    readMany(deps.kv, ids.map((id) => keys.messageSeqById(board, id))),
    readMany(deps.kv, claims.flatMap((s) => s === null ? [] : [keys.messages(board, s)])),
  ]);
  const found: [string, number][] = [];
  const records = new Map<string, MessageRecord>();
  let k = 0;
  ids.forEach((id, j) => {
    const atClaim = claims[j] === null ? null : atClaims[k++].value;
    const seq = seqFound(id, atClaim, seqEntries[j].value);
    if (seq === null) return;
    found.push([id, seq]);
    if (atClaim && seq === claims[j]) records.set(id, atClaim);
  });
  return { found, records };
}

/** Which of `ids` name messages of `board` (`findOnBoard`), with the board's head. */
async function readTargetSeqs(deps: Deps, board: Board, ids: string[]) {
  const [{ found, records }, headEntry] = await Promise.all([
    findOnBoard(deps, board, ids),
    deps.kv.get(keys.boardHeads(board)),
  ]);
  return { ids, found, records, head: headEntry.value ?? EMPTY_HEAD };
}

/**
 * The voting status of `viewerId` on the targets, in two round trips: the ids' sequences
 * with the board head (`readTargetSeqs`, needing no caller) and the viewer's voting facts;
 * then the messages with the viewer's votes on them (their keys need only the sequences).
 * Reputation's own second read (the voted messages and voters) goes with the second.
 */
async function readVotingTargets(
  deps: Deps,
  viewerId: string,
  viewer: Agent | Promise<Agent>,
  board: Board,
  targets: ReturnType<typeof readTargetSeqs>,
) {
  const facts = readVotingFacts(deps, viewerId);
  const readTargets = async () => {
    const { ids, found, records: atClaims, head } = await targets;
    // An id no message of this board has may be the other board's: said on its target.
    const known = new Set(found.map(([id]) => id));
    const unknown = ids.filter((id) => !known.has(id));
    // Ids made before were found by the index: their records are read now.
    const byIndex = found.filter(([id]) => !atClaims.has(id));
    const [recEntries, voteFacts, elsewhere] = await Promise.all([
      readMany(deps.kv, byIndex.map(([, s]) => keys.messages(board, s))),
      readViewerVotes(deps, viewerId, found.map(([, seq]) => ({ board, seq })), facts),
      findOnBoard(deps, otherBoard(board), unknown),
    ]);
    const read = new Map(atClaims);
    recEntries.forEach((e, j) => {
      if (e.value) read.set(byIndex[j][0], e.value);
    });
    const records = new Map<string, MessageRecord>();
    for (const [id] of found) {
      const rec = read.get(id);
      if (rec && !isHidden(rec, head)) records.set(id, rec);
    }
    const onOther = new Set(elsewhere.found.map(([id]) => id));
    return {
      records,
      onOther,
      views: voteViews(viewerId, voteFacts, [...records.values()]),
    };
  };
  const [{ records, onOther, views }, voting, { ids }] = await Promise.all([
    readTargets(),
    votingStatus(deps, viewer, facts),
    targets,
  ]);
  return {
    board,
    voting,
    targets: ids.map((id) => {
      const rec = records.get(id);
      if (!rec) {
        const where = onOther.has(id) ? { found_on_board: otherBoard(board) } : {};
        return {
          post_id: id,
          available: false,
          your_vote: null,
          vote_state: "unavailable",
          ...where,
        };
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
