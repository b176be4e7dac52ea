/**
 * The support summary: what veteran status is earned on (pin-rights supporters and the newest
 * received vote, domain/pins/veterans.ts), kept in the author's voting standing by the
 * commits that change it — every vote on the author's named messages adds to it, every
 * removal of one of them takes the message out — so a write that needs the supporters reads
 * them with the standing instead of listing the received votes.
 *
 * The upvotes are kept while they are few (`SUPPORT_CAP`); beyond that the summary says it
 * no longer holds them (`upvotes: null`), and the supporters are counted from the received
 * votes as before. A standing written before the summary existed has none (the same).
 */
import { type BoardHead, EMPTY_HEAD } from "../board/mod.ts";

/** Upvotes the summary holds at most (then `upvotes` becomes null). */
export const SUPPORT_CAP = 24;

/** The support summary of an account (kept in `VotingStanding.support`). */
export interface SupportSummary {
  /**
   * Voter id → [message seq, its root seq] of every upvote on the account's named messages
   * still stored; null once more than `SUPPORT_CAP` were held.
   */
  upvotes: Record<string, Array<[number, number]>> | null;
  /** Cast time of the newest vote another account cast on the account (null: none). */
  newest_vote_at: number | null;
}

/** The summary of an account nobody has voted on. */
export const NO_SUPPORT: SupportSummary = { upvotes: {}, newest_vote_at: null };

/** The summary after a vote on the account's named message `seq` (root `rootSeq`). */
export function withVote(
  s: SupportSummary | undefined,
  vote: { voterId: string; value: 1 | -1; seq: number; rootSeq: number; castAt: number },
): SupportSummary | undefined {
  if (!s) return s;
  const newest = Math.max(s.newest_vote_at ?? vote.castAt, vote.castAt);
  let upvotes = s.upvotes;
  if (upvotes && vote.value === 1) {
    const held = Object.values(upvotes).reduce((n, list) => n + list.length, 0);
    upvotes = held >= SUPPORT_CAP ? null : {
      ...upvotes,
      [vote.voterId]: [...(upvotes[vote.voterId] ?? []), [vote.seq, vote.rootSeq]],
    };
  }
  return { upvotes, newest_vote_at: newest };
}

/** The summary after the account's named message `seq` was removed (its upvotes leave). */
export function withoutMessage(
  s: SupportSummary | undefined,
  seq: number,
): SupportSummary | undefined {
  if (!s?.upvotes) return s;
  const upvotes: Record<string, Array<[number, number]>> = {};
  for (const [voter, list] of Object.entries(s.upvotes)) {
    const kept = list.filter(([m]) => m !== seq);
    if (kept.length) upvotes[voter] = kept;
  }
  return { ...s, upvotes };
}

/** True when removing message `seq` changes the summary (it holds an upvote on it). */
export function holdsMessage(s: SupportSummary | undefined, seq: number): boolean {
  return !!s?.upvotes && Object.values(s.upvotes).some((list) => list.some(([m]) => m === seq));
}

/**
 * Supporters (distinct other accounts with an upvote on a retained named message: stored,
 * and not in a thread the named board's `head` is purging) and the newest received vote's
 * cast time, from the summary; null when it cannot say (count them from the received votes).
 */
export function supportFromSummary(
  s: SupportSummary | undefined,
  namedHead: BoardHead | null,
): { supporters: number; newestVoteAt: number | null } | null {
  if (!s?.upvotes) return null;
  const purging = (namedHead ?? EMPTY_HEAD).purging;
  const supporters = Object.values(s.upvotes)
    .filter((list) => list.some(([, root]) => !purging.includes(root))).length;
  return { supporters, newestVoteAt: s.newest_vote_at };
}
