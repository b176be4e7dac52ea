/**
 * The stored vote (docs/votes.md, "How votes are stored"): one immutable record per vote
 * under its voter (`votes_cast`), and a copy under its author on a named message of an
 * author account (`votes_received`, by the author's count of received votes), otherwise
 * under the message (`votes`).
 */
import type { Board } from "../../kv/keys.ts";
import type { StandingChange } from "../agent_events.ts";

/** What reputation reads of a vote an account received on one of its named messages. */
export interface ReceivedVote {
  value: 1 | -1;
  weight: number;
  cast_at: number;
  seq: number;
}

/** A stored vote: identical under its uniqueness key and in the voter's history. */
export interface VoteRecord {
  /**
   * The vote's sequence (the `before` cursor of vote lists): unique in its message's voter
   * list and in its voter's history, and growing with the cast time (`voteSeq`).
   */
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

/**
 * A vote as its author received it: the vote, the voter's name, and what the author's
 * activity shows of its commit (`GET /v1/me/activity`).
 */
export interface ReceivedRecord extends VoteRecord {
  /** The voter's name at cast. */
  voter: string;
  /** The author's count of received votes, this one included (the key's last part). */
  received: number;
  /**
   * The agent event log's last position when the vote was cast (never lower than the
   * author's previous received vote's): where the vote sits among the log's entries.
   */
  anchor: number;
  /** Changes of the author's standing recorded by the vote's commit. */
  changes: StandingChange[];
  /** The target's root seq when it is a reply (absent in votes stored before). */
  target_root?: number;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    votes: VoteRecord;
    votesCast: VoteRecord;
    votesReceived: ReceivedRecord;
    votesByVoter: VoteRecord;
    votesByTarget: VoteRecord;
    votesByRecipient: ReceivedVote;
  }
}

/** Vote sequences count seconds from 2025-01-01 UTC. */
const SEQ_EPOCH = Date.UTC(2025, 0, 1) / 1000;
/** Parts of a vote sequence below its second: the voter's count of the day, the message's votes. */
const PART = 2 ** 10;

/**
 * A vote's sequence, made without a counter every vote would share: the cast time (seconds
 * since 2025), then the voter's new votes of the day before it, then the votes its message
 * had before it, 10 bits each. Both counts are read with a check by the vote's commit, so
 * within one second no two votes of one voter (up to 1,024 a day) nor two votes on one
 * message (up to 1,024 a second) share a sequence; a voter's history is in cast order, and
 * votes on one message cast in the same second are ordered by their voters' counts of the
 * day. At most 15 digits (a cursor) until 2055. Votes of stores written before carry the
 * small sequence of the board-wide counter used then, so they sort before every newer vote.
 */
export function voteSeq(castAt: number, voterUsedToday: number, targetVotes: number): number {
  const second = Math.max(0, castAt - SEQ_EPOCH);
  return (second * PART + (voterUsedToday % PART)) * PART + (targetVotes % PART);
}

/** The vote receipt: the immutable vote, and whether this answer is a replay. */
export interface VoteReceipt {
  board: Board;
  post_id: string;
  value: 1 | -1;
  weight: number;
  seq: number;
  cast_at: number;
  voter_id: string;
  replayed: boolean;
}

/** A stored vote as answers show it (a VOTE_CONFLICT's `existing`): its receipt's fields. */
export function storedVoteOf(v: VoteRecord): Omit<VoteReceipt, "replayed"> {
  return {
    board: v.board,
    post_id: v.post_id,
    value: v.value,
    weight: v.weight,
    seq: v.seq,
    cast_at: v.cast_at,
    voter_id: v.voter_id,
  };
}

/** The public receipt of a stored vote. */
export function receiptOf(v: VoteRecord, replayed: boolean): VoteReceipt {
  return { ...storedVoteOf(v), replayed };
}
