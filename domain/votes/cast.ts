/**
 * Casting votes (spec "Vote" resource and transitions; docs/votes.md).
 *
 * One immutable vote per account per message, enforced by the commit's check that the
 * vote key is still absent. The same commit charges the daily allowance, assigns the
 * weight, rewrites the message summary (`score`, `up`, `down`) under every index copy,
 * and updates the author's karma and suspension state — never read-then-write.
 */
import {
  BOARD_WRITES_LOCK,
  EMPTY_HEAD,
  isHidden,
  type MessageRecord,
  writeMessage,
} from "../board/mod.ts";
import { type Board, keys } from "../../kv/keys.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import { EMPTY_STANDING, type VotingStanding } from "./karma.ts";
import { currentWeight, isMaturePeer, type ReceivedVote } from "./reputation.ts";
import {
  applyKarmaChange,
  currentSuspension,
  recordSuspension,
  votingSuspendedError,
} from "./suspension.ts";
import { chargeNetworkWrite } from "../limits/mod.ts";
import { chargeNewVote } from "./allowance.ts";
import { agentEventsTail, noteAgentEvent, primeAgentEvents } from "../agent_events.ts";
import { votingChanges } from "./standing_events.ts";

/**
 * What a higher area does in the same commit when an account's karma changes (veteran
 * status, domain/pins). Handed in by the caller: votes sit below pins and never import them.
 */
export type OnKarmaChanged = (
  tx: Tx,
  deps: Deps,
  agentId: string,
  karmaBefore: number,
  karmaAfter: number,
) => Promise<void>;

/** A vote request (routes/schemas.ts `voteSchema`): exactly these three fields. */
export interface VoteInput {
  board: Board;
  post_id: string;
  value: 1 | -1;
}

/** A stored vote: identical under `votes`, `votes_by_target` and `votes_by_voter`. */
export interface VoteRecord {
  /** Board-wide vote sequence (the `before` cursor of vote lists). */
  seq: number;
  board: Board;
  post_id: string;
  target_seq: number;
  voter_id: string;
  /** The target's author account (null for `b` and board-made messages). */
  author_id: string | null;
  value: 1 | -1;
  weight: number;
  cast_at: number;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    votes: VoteRecord;
  }
}

/** The vote receipt: the immutable vote, and whether this answer is a replay. */
interface VoteReceipt {
  board: Board;
  post_id: string;
  value: 1 | -1;
  weight: number;
  seq: number;
  cast_at: number;
  voter_id: string;
  replayed: boolean;
}

/** The public receipt of a stored vote. */
export function receiptOf(v: VoteRecord, replayed: boolean): VoteReceipt {
  return {
    board: v.board,
    post_id: v.post_id,
    value: v.value,
    weight: v.weight,
    seq: v.seq,
    cast_at: v.cast_at,
    voter_id: v.voter_id,
    replayed,
  };
}

type Outcome =
  | { kind: "cast" | "replayed"; vote: VoteRecord }
  | { kind: "suspended"; standing: VotingStanding };

/**
 * Casts `voter`'s vote from `network` (a new vote also counts as one of the network's writes
 * per minute). Exact repeats answer the original receipt (free, also while
 * suspended); an opposite value is 409 VOTE_CONFLICT; a vote on one's own named message
 * is 403 SELF_VOTE; an unknown, deleted or hidden target is 404.
 */
export async function castVote(
  deps: Deps,
  voter: Agent,
  input: VoteInput,
  network: string,
  onKarmaChanged: OnKarmaChanged,
): Promise<VoteReceipt> {
  const postId = input.post_id.toLowerCase();
  const { board, value } = input;
  // The id's seq never changes for a live message (its record is read, checked, below).
  const targetSeq = (await deps.kv.get(keys.messageSeqById(board, postId))).value;
  if (targetSeq === null) throw notFound("message", postId);

  const { value: outcome } = await transact<Outcome>(deps.kv, async (tx) => {
    const voteKey = keys.votes(board, targetSeq, voter.id);
    const [voteEntry, msgEntry, standingEntry] = await tx.getMany([
      voteKey,
      keys.messages(board, targetSeq),
      keys.votingStandings(voter.id),
    ]);
    const msg = msgEntry.value;
    // Unchecked: a purge mark only hides a message whose record is about to go (checked).
    const head = (await tx.peek(keys.boardHeads(board))).value ?? EMPTY_HEAD;
    if (!msg || isHidden(msg, head)) {
      throw notFound("message", postId);
    }
    if (board === "named" && msg.agent_id === voter.id) {
      throw new BoardError(
        "SELF_VOTE",
        "An account cannot vote on its own named posts or replies.",
        {
          board,
          post_id: postId,
        },
      );
    }
    const existing = voteEntry.value;
    if (existing) {
      if (existing.value === value) {
        return { kind: "replayed", vote: existing };
      }
      throw new BoardError(
        "VOTE_CONFLICT",
        `This account already voted ${existing.value} on this message; votes are immutable.`,
        { board, post_id: postId, existing: receiptOf(existing, true) },
      );
    }

    const now = deps.clock.now();
    const standing = standingEntry.value ?? EMPTY_STANDING;
    const suspension = await currentSuspension(deps, voter.id, standing);
    if (suspension?.recorded) return { kind: "suspended", standing };
    if (suspension) {
      // A peer may have matured since the last karma update: record the suspension now.
      const suspended = recordSuspension(standing, now);
      tx.set(keys.votingStandings(voter.id), suspended);
      await votingChanges(tx, now, voter.id, standing, suspended);
      return { kind: "suspended", standing: suspended };
    }

    await chargeNewVote(tx, deps, voter.id);
    await chargeNetworkWrite(tx, deps, network);
    const authorId = board === "named" ? msg.agent_id : null;
    const [[counterEntry, authorEntry], tail] = await Promise.all([
      tx.getMany([
        keys.counters("votes"),
        ...(authorId ? [keys.votingStandings(authorId)] : []),
      ]),
      authorId ? agentEventsTail(deps.kv) : Promise.resolve(0),
    ]);
    // R (the reputation part of the weight) is read without checks.
    const weight = await currentWeight(deps, voter, standing.karma, now);
    const seq = (counterEntry.value ?? 0) + 1;
    const vote: VoteRecord = {
      seq,
      board,
      post_id: postId,
      target_seq: targetSeq,
      voter_id: voter.id,
      author_id: authorId,
      value,
      weight,
      cast_at: now,
    };
    tx.set(voteKey, vote)
      .set(keys.votesByTarget(board, targetSeq, seq), vote)
      .set(keys.votesByVoter(voter.id, seq), vote)
      .set(keys.counters("votes"), seq);
    writeMessage(tx, {
      ...msg,
      score: msg.score + value * weight,
      up: msg.up + (value === 1 ? 1 : 0),
      down: msg.down + (value === -1 ? 1 : 0),
    });
    if (authorId) {
      const received: ReceivedVote = { value, weight, cast_at: now, seq };
      tx.set(keys.votesByRecipient(authorId, voter.id, targetSeq), received);
      const authorStanding = authorEntry?.value ?? EMPTY_STANDING;
      const next = await applyKarmaChange(deps, authorId, authorStanding, {
        delta: value * weight,
        vote: { voterId: voter.id, value, weight, qualifies: isMaturePeer(voter, now) },
      });
      tx.set(keys.votingStandings(authorId), next);
      // The author's activity learns of the vote (and of any standing it changed) from one
      // agent event entry of this commit (domain/agent_events.ts).
      primeAgentEvents(tx, tail);
      await noteAgentEvent(tx, now, {
        type: "vote",
        to: authorId,
        target_seq: targetSeq,
        value,
        weight,
        voter_id: voter.id,
        voter: voter.name,
      });
      await votingChanges(tx, now, authorId, authorStanding, next);
      // Veteran status and pin rights follow karma in this same commit (domain/pins/veterans.ts).
      await onKarmaChanged(tx, deps, authorId, authorStanding.karma, next.karma);
    }
    return { kind: "cast", vote };
  }, { lock: BOARD_WRITES_LOCK });

  if (outcome.kind === "suspended") {
    throw votingSuspendedError(outcome.standing, outcome.standing.suspension!);
  }
  return receiptOf(outcome.vote, outcome.kind === "replayed");
}

/**
 * Runs inside the commit that removes a message: a named message's votes leave its
 * author's karma (its score is exactly their Σ value × weight). Karma regained this way
 * while suspended is remembered so it cannot help recovery. One check, only when the
 * score is not 0. The vote records stay (voter history marks the target unavailable).
 */
export async function removeMessageKarma(
  tx: Tx,
  deps: Deps,
  m: MessageRecord,
  onKarmaChanged: OnKarmaChanged,
): Promise<void> {
  if (m.board !== "named" || !m.agent_id || m.score === 0) return;
  const entry = await tx.get(keys.votingStandings(m.agent_id));
  const before = entry.value ?? EMPTY_STANDING;
  const next = await applyKarmaChange(deps, m.agent_id, before, {
    delta: -m.score,
    removal: true,
  });
  tx.set(keys.votingStandings(m.agent_id), next);
  await votingChanges(tx, deps.clock.now(), m.agent_id, before, next);
  await onKarmaChanged(tx, deps, m.agent_id, before.karma, next.karma);
}
