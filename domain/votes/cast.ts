/**
 * Casting votes (spec "Vote" resource and transitions; docs/votes.md).
 *
 * One immutable vote per account per message, enforced by the commit's check that the
 * vote key is still absent. The same commit charges the daily allowance, assigns the
 * weight, rewrites the message summary (`score`, `up`, `down`), and updates the author's
 * karma and suspension state — never read-then-write. Nothing every vote shares is both
 * read and written (no board-wide counter, no process lock): votes by different voters on
 * messages of different authors never touch the same key, in one process or many.
 */
import {
  authorHint,
  type BoardHead,
  claimedSeq,
  EMPTY_HEAD,
  isHidden,
  type MessageRecord,
  messageSeqById,
  writeMessage,
} from "../board/mod.ts";
import { type Board, keys } from "../../kv/keys.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import { type Agent, stillActive } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import { EMPTY_STANDING, standingToChange, type VotingStanding } from "./karma.ts";
import { holdsMessage, withoutMessage, withVote } from "./support.ts";
import { currentWeight, isMaturePeer, receivedStats } from "./reputation.ts";
import {
  applyKarmaChange,
  currentSuspension,
  recordSuspension,
  votingSuspendedError,
} from "./suspension.ts";
import { applyNetworkWrite, networkWriteKey } from "../limits/mod.ts";
import { allowanceKey, applyNewVote } from "./allowance.ts";
import { agentEventsTail, captureAgentEvents, primeAgentEvents } from "../agent_events.ts";
import { votingChanges } from "./standing_events.ts";
import {
  receiptOf,
  type ReceivedRecord,
  storedVoteOf,
  type VoteReceipt,
  type VoteRecord,
  voteSeq,
} from "./records.ts";

/**
 * What a higher area does in the same commit when an account's karma changes (veteran
 * status, domain/pins). Handed in by the caller: votes sit below pins and never import them.
 */
type OnKarmaChanged = (
  tx: Tx,
  deps: Deps,
  agentId: string,
  karmaBefore: number,
  karmaAfter: number,
  /** The named board's head, when the caller has read it. */
  namedHead?: BoardHead,
) => Promise<void>;

/**
 * The keys of an author that `OnKarmaChanged` reads, so the vote reads them in its own batch
 * (the transaction answers them again from what it read): `checked` as `tx.get` reads them,
 * `unchecked` as `tx.peek` does.
 */
export type KarmaReads = (agentId: string) => { checked: Deno.KvKey[]; unchecked: Deno.KvKey[] };

/** A vote request (routes/schemas.ts `voteSchema`): exactly these three fields. */
export interface VoteInput {
  board: Board;
  post_id: string;
  value: 1 | -1;
}

/**
 * A voter whose credential is still resolving: the account its credential claims (an API
 * key's or access token's agent id; null when it names none), used only to choose which keys
 * to read at once, and the account once the credential is admitted (`ready` rejects with the
 * refusal: nothing is written then).
 */
export interface PendingVoter {
  claimedId: string | null;
  ready: Promise<Agent>;
}

type Outcome =
  | { kind: "cast" | "replayed"; vote: VoteRecord }
  | { kind: "suspended"; standing: VotingStanding };

/**
 * Casts `voter`'s vote from `network` (a new vote also counts as one of the network's writes
 * per minute). Exact repeats answer the original receipt (free, also while
 * suspended); an opposite value is 409 VOTE_CONFLICT; a vote on one's own named message
 * is 403 SELF_VOTE; an unknown, deleted or hidden target is 404.
 *
 * Read plan: one batch of every key the ids name (the message at the seq its id carries with
 * the id index, the vote keys, the voter's standing, allowance and network window; unchecked,
 * the board head, the event log's tail and the voter's received votes), sent while the voter's
 * credential resolves when `voter` is pending (planned for the id it claims); on a named
 * message of an account, the author's keys the message names (the standing, `karmaReads`): in
 * that first batch when this instance has seen the message (`authorHint`), else in a batch of
 * their own once the message is read; then one commit. Nothing is decided before the voter is
 * known, and every read that decides the write is a checked read of the commit. Votes on one
 * message queue in this process (they all rewrite its summary): many voters on one popular
 * message then conflict only with the other processes' votes on it, never with each other's
 * retries.
 */
export async function castVote(
  deps: Deps,
  voterOrPending: Agent | PendingVoter,
  input: VoteInput,
  network: string,
  onKarmaChanged: OnKarmaChanged,
  karmaReads: KarmaReads = () => ({ checked: [], unchecked: [] }),
): Promise<VoteReceipt> {
  const postId = input.post_id.toLowerCase();
  const { board, value } = input;
  const pending: PendingVoter = "ready" in voterOrPending
    ? voterOrPending
    : { claimedId: voterOrPending.id, ready: Promise.resolve(voterOrPending) };
  // The seq the id carries; the id index decides only when the record there is another's.
  const claimed = claimedSeq(postId);
  const voterKeys = (voterId: string, seq: number, now: number) => ({
    vote: keys.votesCast(voterId, board, seq),
    // A vote of a store written before sits under the message on every board.
    older: keys.votes(board, seq, voterId),
    standing: keys.votingStandings(voterId),
    // The day of this attempt's one clock reading, which `cast_at` carries too.
    allowance: allowanceKey(voterId, now),
  });

  const { value: outcome } = await transact<Outcome>(deps.kv, async (tx) => {
    const now = deps.clock.now();
    const guess = pending.claimedId;
    // The message's author as this instance last saw it: its keys ride in the first batch.
    const hinted = board === "named" && claimed !== null ? authorHint(deps.kv, claimed) : null;
    const early = tx.prefetch([
      keys.messageSeqById(board, postId),
      keys.boardHeads(board),
      networkWriteKey(network),
      ...(claimed === null ? [] : [keys.messages(board, claimed)]),
      ...(guess === null ? [] : [keys.agents(guess)]),
      ...(claimed === null || guess === null ? [] : Object.values(voterKeys(guess, claimed, now))),
      ...(hinted === null || hinted === guess ? [] : authorKeys(hinted, karmaReads)),
    ]);
    // Unchecked: where a received vote sits among the log's entries (its `anchor`).
    const tailRead = board === "named" ? agentEventsTail(deps.kv) : Promise.resolve(null);
    // Unchecked, as the weight's reputation part and a pending suspension always were.
    const statsRead = guess === null ? null : receivedStats(deps, guess);
    const settled = Promise.allSettled([early, tailRead, statsRead]);
    let voter: Agent;
    try {
      // Nothing is decided, and nothing written, before the credential is admitted.
      voter = await pending.ready;
    } catch (refusal) {
      await settled; // the reads started early end before the refusal is answered
      throw refusal;
    }
    // Both keys were planned in the first batch; the record at the answer is read checked after.
    const targetSeq = await messageSeqById(tx, board, postId);
    if (targetSeq === null) {
      await settled; // the unchecked reads started early end before the answer
      throw notFound("message", postId);
    }
    const gotRead = tx.getNamed({
      message: keys.messages(board, targetSeq),
      ...voterKeys(voter.id, targetSeq, now),
      network: networkWriteKey(network),
    });
    // The author's keys go out as soon as the message names them, beside the voter's
    // received-vote reads (which take a second round when there are any).
    const authorPlanned = gotRead.then((g) => {
      const authorId = board === "named" ? g.message.value?.agent_id : null;
      if (!authorId || authorId === voter.id || g.vote.value || g.older.value) return;
      return tx.prefetch(authorKeys(authorId, karmaReads));
    });
    const [got, headEntry, tail, voterStats, , account] = await Promise.all([
      gotRead,
      // Unchecked: a purge mark only hides a message whose record is about to go (checked).
      tx.peek(keys.boardHeads(board)),
      tailRead,
      voter.id === guess && statsRead ? statsRead : receivedStats(deps, voter.id),
      authorPlanned,
      // Unchecked: a revocation or removal landing after the credential was admitted writes
      // the voter's standing again, so this commit fails its check, and the retry finds the
      // account ended here (401).
      tx.peek(keys.agents(voter.id)),
    ]);
    stillActive(account.value);
    const msg = got.message.value;
    const head = headEntry.value ?? EMPTY_HEAD;
    if (!msg || isHidden(msg, head)) throw notFound("message", postId);
    if (board === "named" && msg.agent_id === voter.id) {
      throw new BoardError(
        "SELF_VOTE",
        "An account cannot vote on its own named posts or replies.",
        { board, post_id: postId },
      );
    }
    const existing = got.vote.value ?? got.older.value;
    if (existing) {
      if (existing.value === value) return { kind: "replayed", vote: existing };
      throw new BoardError(
        "VOTE_CONFLICT",
        `This account already voted ${existing.value} on this message; votes are immutable.`,
        { board, post_id: postId, existing: storedVoteOf(existing) },
      );
    }

    const standing = standingToChange(got.standing.value);
    const suspension = await currentSuspension(deps, voter.id, standing, voterStats);
    if (suspension?.recorded) return { kind: "suspended", standing };
    if (suspension) {
      // A peer may have matured since the last karma update: record the suspension now.
      if (tail !== null) primeAgentEvents(tx, tail);
      const suspended = recordSuspension(standing, now);
      tx.set(keys.votingStandings(voter.id), suspended);
      await votingChanges(tx, now, voter.id, standing, suspended);
      return { kind: "suspended", standing: suspended };
    }

    const authorId = board === "named" ? msg.agent_id : null;
    const ahead = authorId ? await readAuthor(tx, authorId, karmaReads) : null;
    const used = applyNewVote(tx, deps, got.allowance, now);
    applyNetworkWrite(tx, deps, network, got.network);
    const weight = await currentWeight(deps, voter, standing.karma, now, voterStats);
    const seq = voteSeq(now, used, msg.up + msg.down);
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
    tx.set(keys.votesCast(voter.id, board, targetSeq), vote);
    writeMessage(tx, {
      ...msg,
      score: msg.score + value * weight,
      up: msg.up + (value === 1 ? 1 : 0),
      down: msg.down + (value === -1 ? 1 : 0),
    });
    if (!authorId || !ahead) {
      tx.set(keys.votes(board, targetSeq, voter.id), vote);
      return { kind: "cast", vote };
    }
    // The author's standing changes of this commit go into the received vote, which the
    // author's activity shows (domain/inbox), not into the event log every writer appends to.
    const events = captureAgentEvents(tx);
    const before = standingToChange(ahead.standing.value);
    const received = (before.received ?? 0) + 1;
    const anchor = Math.max(tail ?? 0, before.anchor ?? 0);
    const support = withVote(before.support, {
      voterId: voter.id,
      value,
      seq: targetSeq,
      rootSeq: msg.root_seq,
      castAt: now,
    });
    const next: VotingStanding = {
      ...await applyKarmaChange(deps, authorId, before, {
        delta: value * weight,
        vote: { voterId: voter.id, value, weight, qualifies: isMaturePeer(voter, now) },
      }),
      received,
      anchor,
      ...(support ? { support } : {}),
    };
    tx.set(keys.votingStandings(authorId), next);
    await votingChanges(tx, now, authorId, before, next);
    // Veteran status and pin rights follow karma in this same commit (domain/pins/veterans.ts).
    await onKarmaChanged(tx, deps, authorId, before.karma, next.karma, head);
    const record: ReceivedRecord = {
      ...vote,
      voter: voter.name,
      received,
      anchor,
      changes: events.flatMap((e) => e.type === "standing" && e.to === authorId ? [e.change] : []),
      ...(msg.kind === "reply" ? { target_root: msg.root_seq } : {}),
    };
    tx.set(keys.votesReceived(authorId, received), record);
    return { kind: "cast", vote };
  }, { queue: `votes on ${board} ${postId}` });

  if (outcome.kind === "suspended") {
    throw votingSuspendedError(outcome.standing, outcome.standing.suspension!);
  }
  return receiptOf(outcome.vote, outcome.kind === "replayed");
}

/** The author's keys a vote on their named message reads, for one planned batch. */
function authorKeys(authorId: string, karmaReads: KarmaReads): Deno.KvKey[] {
  const ahead = karmaReads(authorId);
  return [keys.votingStandings(authorId), ...ahead.checked, ...ahead.unchecked];
}

/**
 * The author's keys a vote on their named message reads (planned with `authorKeys`): the
 * standing (checked), and what `karmaReads` names for the karma effect.
 */
async function readAuthor(tx: Tx, authorId: string, karmaReads: KarmaReads) {
  const ahead = karmaReads(authorId);
  const [got] = await Promise.all([
    tx.getNamed({ standing: keys.votingStandings(authorId), ahead: ahead.checked }),
    ahead.unchecked.length ? tx.peekMany(ahead.unchecked) : Promise.resolve([]),
  ]);
  return got;
}

/**
 * Runs inside the commit that removes a message: a named message's votes leave its
 * author's karma (its score is exactly their Σ value × weight) and its upvotes leave the
 * author's support summary (domain/votes/support.ts). Karma regained this way while
 * suspended is remembered so it cannot help recovery. One check, only when the message has
 * a score or upvotes. The vote records stay (voter history marks the target unavailable).
 */
export async function removeMessageKarma(
  tx: Tx,
  deps: Deps,
  m: MessageRecord,
  onKarmaChanged: OnKarmaChanged,
): Promise<void> {
  if (m.board !== "named" || !m.agent_id || (m.score === 0 && m.up === 0)) return;
  const entry = await tx.get(keys.votingStandings(m.agent_id));
  // A standing is never missing under a voted message; an inconsistent store keeps the old way.
  const before = entry.value ?? EMPTY_STANDING;
  const support = withoutMessage(before.support, m.seq);
  if (m.score === 0) {
    if (holdsMessage(before.support, m.seq)) {
      tx.set(keys.votingStandings(m.agent_id), { ...before, support: support! });
    }
    return;
  }
  const next = await applyKarmaChange(deps, m.agent_id, before, {
    delta: -m.score,
    removal: true,
  });
  tx.set(keys.votingStandings(m.agent_id), { ...next, ...(support ? { support } : {}) });
  await votingChanges(tx, deps.clock.now(), m.agent_id, before, next);
  await onKarmaChanged(tx, deps, m.agent_id, before.karma, next.karma);
}
