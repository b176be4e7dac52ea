/**
 * Reputation and vote weight (docs/votes.md), computed from the named-board votes an
 * account received (`votes_received`) by comparing stored timestamps with the clock
 * at read time: a peer vote counts for reputation once it is 48 hours old, and only while
 * its voter is active and at least 7 days old. Nothing here depends on background work.
 */
import { listTyped, readMany } from "../../kv/read_many.ts";
import { type Board, keys } from "../../kv/keys.ts";
import type { Agent } from "../accounts/mod.ts";
import { reached } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { EMPTY_HEAD, isHidden } from "../board/mod.ts";
import type { ReceivedVote } from "./records.ts";

export const DAY = 86400;
/** A peer is mature from this account age on. */
export const MATURE_AGE = 7 * DAY;
/** Age from which the age part of a weight is 2. */
export const SENIOR_AGE = 30 * DAY;
/** A received vote counts for reputation once it is this old. */
export const REPUTATION_DELAY = 48 * 3600;
const MIN_WEIGHT = 1;
const MAX_WEIGHT = 5;

/** What the received-vote index says about one account (all counts are of distinct peers). */
export interface ReceivedStats {
  /** Mature active peers whose net vote (≥ 48 h old, retained content) is positive. */
  R: number;
  /** Mature active peers whose net vote on retained content is positive. */
  P: number;
  /** Other accounts (any status or age) with at least one upvote on retained content. */
  upvoters: number;
  /** Mature active peers whose net raw balance over every vote they cast on the account is negative. */
  negativePeers: number;
  /** Cast time of the newest vote another account cast on the account (null: none). */
  newestCastAt: number | null;
}

/** True for an active account at least 7 days old at `now`. */
export function isMaturePeer(agent: Agent | null | undefined, now: number): boolean {
  return !!agent && agent.status === "active" && reached(now, agent.created_at + MATURE_AGE);
}

/** 0 before 7 days, 1 from 7 to 29 days, 2 from 30 days. */
export function agePart(createdAt: number, now: number): number {
  const age = now - createdAt;
  return age < MATURE_AGE ? 0 : age < SENIOR_AGE ? 1 : 2;
}

/** R from which the reputation part of a weight is 1, and from which it is 2. */
const R_ONE = 3;
const R_TWO = 10;

/** 0 for R < 3, 1 for R 3–9, 2 for R ≥ 10. */
export function reputationPart(R: number): number {
  return R < R_ONE ? 0 : R < R_TWO ? 1 : 2;
}

/** The weight rule in words (`GET /v1/voting`), from the numbers `weightAt` uses. */
export const WEIGHT_RULE = `weight = 1 + age part (0 under ${MATURE_AGE / DAY} days, 1 from ${
  MATURE_AGE / DAY
} days, 2 from ${SENIOR_AGE / DAY} days) + reputation part (0 for R < ${R_ONE}, 1 for R ${R_ONE}-${
  R_TWO - 1
}, 2 for R >= ${R_TWO}), clamped to 1-5; forced to 1 while karma <= 0. A vote keeps the weight it was cast with.`;

/** The weight a vote cast at `now` gets: 1 + age part + reputation part in 1–5, or 1 while karma ≤ 0. */
function weightAt(createdAt: number, karma: number, R: number, now: number): number {
  if (karma <= 0) return MIN_WEIGHT;
  const w = 1 + agePart(createdAt, now) + reputationPart(R);
  return Math.max(MIN_WEIGHT, Math.min(MAX_WEIGHT, w));
}

/**
 * The weight a vote by `agent` cast at `now` gets (`weightAt`), reading the reputation
 * part only when karma is positive; `stats` passes received-vote stats already computed.
 */
export async function currentWeight(
  deps: Deps,
  agent: Agent,
  karma: number,
  now: number,
  stats?: { R: number },
): Promise<number> {
  const R = karma > 0 ? (stats ?? await receivedStats(deps, agent.id)).R : 0;
  return weightAt(agent.created_at, karma, R, now);
}

/** Reads agent records by id (kv/read_many.ts; no checks). */
export async function agentsById(kv: Deno.Kv, ids: string[]): Promise<Map<string, Agent>> {
  const out = new Map<string, Agent>();
  const got = await readMany(kv, ids.map((id) => keys.agents(id)));
  got.forEach((e, j) => {
    if (e.value) out.set(ids[j], e.value);
  });
  return out;
}

/** The messages of `board` among `seqs` that are still retained (stored and not being purged). */
export async function retainedSeqs(
  kv: Deno.Kv,
  board: Board,
  seqs: number[],
): Promise<Set<number>> {
  const out = new Set<number>();
  if (seqs.length === 0) return out;
  // The head and the records go out together: the record keys need nothing from the head.
  const [headEntry, got] = await Promise.all([
    kv.get(keys.boardHeads(board)),
    readMany(kv, seqs.map((s) => keys.messages(board, s))),
  ]);
  const head = headEntry.value ?? EMPTY_HEAD;
  got.forEach((e, j) => {
    if (e.value && !isHidden(e.value, head)) out.add(seqs[j]);
  });
  return out;
}

/**
 * Received votes one list page holds: the most a page takes, so an account with up to this
 * many received votes is read in one round trip (the default page is 100).
 */
const RECEIVED_PAGE = 500;

/**
 * Accounts noted per store: as many as the board retains by default. Past the cap the oldest
 * noted goes first.
 */
const MAX_RECEIVED_HINTS = 5_000;

/**
 * The highest received-vote number (`votes_received/{author}/{received}`, a count that only
 * grows) of each account as this instance last listed them, per store. A hint only chooses
 * the ranges listed: the pages it names are listed together, and the last range is open, so
 * votes received since are read too (a page past it costs one round trip more). Without a
 * hint (an account this instance has not listed) each page is listed after the one before.
 */
const receivedHints = new WeakMap<Deno.Kv, Map<string, number>>();

function noteReceived(kv: Deno.Kv, authorId: string, highest: number): void {
  let known = receivedHints.get(kv);
  if (!known) receivedHints.set(kv, known = new Map());
  known.delete(authorId);
  known.set(authorId, highest);
  if (known.size > MAX_RECEIVED_HINTS) known.delete(known.keys().next().value!);
}

/**
 * Lists every received vote of an account whose highest received-vote number was last seen at
 * `hint`: whole pages up to it, each a closed range (its numbers are at most a page's worth,
 * so its one page ends it), listed together, then the open rest beside them.
 */
function listReceived(kv: Deno.Kv, authorId: string, hint: number) {
  const prefix = keys.votesReceived.range(authorId);
  const at = (n: number) => keys.votesReceived(authorId, n);
  const whole = { limit: RECEIVED_PAGE, batchSize: RECEIVED_PAGE };
  const lists = [];
  let from = 1;
  for (; from + RECEIVED_PAGE <= hint + 1; from += RECEIVED_PAGE) {
    const end = at(from + RECEIVED_PAGE);
    lists.push(listTyped(kv, from === 1 ? { prefix, end } : { start: at(from), end }, whole));
  }
  lists.push(
    listTyped(kv, from === 1 ? { prefix } : { prefix, start: at(from) }, {
      batchSize: RECEIVED_PAGE,
    }),
  );
  return Promise.all(lists.map((list) => Array.fromAsync(list)));
}

/**
 * Every received vote of an account, grouped by voter: voter id → [target seq, vote][]. The
 * votes are stored under their author (`votes_received`); a store written before also
 * kept a copy of each under `votes_by_recipient`, listed at the same time.
 */
async function receivedVotes(
  kv: Deno.Kv,
  authorId: string,
): Promise<Map<string, Array<[number, ReceivedVote]>>> {
  const out = new Map<string, Array<[number, ReceivedVote]>>();
  const add = (voterId: string, targetSeq: number, v: ReceivedVote) => {
    const list = out.get(voterId) ?? [];
    list.push([targetSeq, v]);
    out.set(voterId, list);
  };
  const [pages, older] = await Promise.all([
    listReceived(kv, authorId, receivedHints.get(kv)?.get(authorId) ?? 0),
    Array.fromAsync(
      listTyped(kv, { prefix: keys.votesByRecipient.range(authorId) }, {
        batchSize: RECEIVED_PAGE,
      }),
    ),
  ]);
  const current = pages.flat();
  const highest = current.at(-1)?.key.at(-1);
  if (typeof highest === "number" && highest > RECEIVED_PAGE) {
    noteReceived(kv, authorId, highest);
  }
  for (const { value: v } of current) add(v.voter_id, v.target_seq, v);
  for (const e of older) {
    const [, , voterId, targetSeq] = e.key as [string, string, string, number];
    add(voterId, targetSeq, e.value);
  }
  return out;
}

/**
 * Computes R, P, the upvoter count and the negative-peer count of an account at the
 * clock's current time. `pending` adds a vote being cast in the caller's commit (not yet
 * in the index) to the negative-balance count.
 */
export async function receivedStats(
  deps: Deps,
  authorId: string,
  pending?: { voterId: string; value: 1 | -1 },
): Promise<ReceivedStats> {
  const now = deps.clock.now();
  const byVoter = await receivedVotes(deps.kv, authorId);
  if (pending && !byVoter.has(pending.voterId)) byVoter.set(pending.voterId, []);
  const seqs = new Set<number>();
  for (const list of byVoter.values()) for (const [s] of list) seqs.add(s);
  const [retained, agents] = await Promise.all([
    retainedSeqs(deps.kv, "named", [...seqs]),
    agentsById(deps.kv, [...byVoter.keys()]),
  ]);
  const stats: ReceivedStats = { R: 0, P: 0, upvoters: 0, negativePeers: 0, newestCastAt: null };
  for (const [voterId, list] of byVoter) {
    if (voterId === authorId) continue;
    let settled = 0;
    let retainedNet = 0;
    let raw = pending?.voterId === voterId ? pending.value : 0;
    let upvoted = false;
    for (const [seq, v] of list) {
      if (stats.newestCastAt === null || v.cast_at > stats.newestCastAt) {
        stats.newestCastAt = v.cast_at;
      }
      raw += v.value;
      if (!retained.has(seq)) continue;
      retainedNet += v.value;
      if (v.value === 1) upvoted = true;
      if (reached(now, v.cast_at + REPUTATION_DELAY)) settled += v.value;
    }
    if (upvoted) stats.upvoters++;
    const voter = agents.get(voterId);
    if (!isMaturePeer(voter, now)) continue;
    if (settled > 0) stats.R++;
    if (retainedNet > 0) stats.P++;
    if (raw < 0) stats.negativePeers++;
  }
  return stats;
}

/**
 * An account's reputation: R (distinct mature active peers whose net vote at least 48 hours
 * old on its retained named content is positive) and P (the same without the 48-hour wait).
 */
export async function reputationOf(deps: Deps, agentId: string): Promise<{ R: number; P: number }> {
  const { R, P } = await receivedStats(deps, agentId);
  return { R, P };
}

/**
 * The pin-rights supporters — distinct other accounts (any age or status) with at least
 * one upvote on the agent's retained named posts and replies — and the cast time of the
 * newest vote the account received: what veteran status is earned on, and when
 * (domain/pins/veterans.ts). `known`: stats already being read for the same answer.
 */
export async function supportOf(
  deps: Deps,
  agentId: string,
  known?: Promise<ReceivedStats>,
): Promise<{ supporters: number; newestVoteAt: number | null }> {
  const s = await (known ?? receivedStats(deps, agentId));
  return { supporters: s.upvoters, newestVoteAt: s.newestCastAt };
}
