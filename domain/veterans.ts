/**
 * Veteran status: the earned right to pin (spec "Pin rights" rows; docs/pins_rules_moderation.md).
 *
 * Earned at account age >= 7 days, karma >= 5 and upvotes from >= 3 distinct other accounts
 * on retained named content; the earned fact is stored, so small karma changes never take
 * it away. Pin rights are suspended at karma <= -5 (community pins retired at once) and
 * restored at karma >= 5 (pins are not re-created).
 *
 * Transitions are decided from the facts at the moment they are observed: inside every
 * commit that changes the account's karma (`onKarmaChanged`) and on every read of the
 * account's pinning state (`evaluatePinRights`). Suspension is also decided at read time
 * from the current karma, so a pin never shows after its owner's karma fell to -5.
 */
import { keys } from "../kv/keys.ts";
import { transact, type Tx } from "../kv/tx.ts";
import type { Agent } from "./accounts.ts";
import type { Deps } from "./deps.ts";
import { EMPTY_STANDING, type VotingStanding } from "./karma.ts";
import { retireCommunityPinsOf } from "./pin_book.ts";
import { noteChangeAt } from "./read_scope.ts";
import { distinctUpvotersOf } from "./reputation.ts";

export const VETERAN_RULES = {
  min_age_seconds: 7 * 86400,
  min_karma: 5,
  min_supporters: 3,
  suspend_at_karma: -5,
  restore_at_karma: 5,
} as const;

/** The stored veteran record of an account (absent until the status is earned). */
export interface VeteranRecord {
  earned_at: number;
  /** Set while pin rights are suspended. */
  suspended_at: number | null;
  /** How many times pin rights were suspended: a pin made before the latest one is retired. */
  suspensions: number;
  restored_at: number | null;
}

/** Facts a transition is decided on. `supporters` is computed only when it matters. */
export interface VeteranFacts {
  now: number;
  createdAt: number;
  karma: number;
  supporters: number | null;
}

/** True when account age and karma allow earning (supporters decide the rest). */
export function mayEarn(rec: VeteranRecord | null, f: Omit<VeteranFacts, "supporters">): boolean {
  return rec === null && f.now - f.createdAt >= VETERAN_RULES.min_age_seconds &&
    f.karma >= VETERAN_RULES.min_karma;
}

/** The next veteran record from the current one and the facts now (pure). */
export function nextVeteranRecord(
  rec: VeteranRecord | null,
  f: VeteranFacts,
): VeteranRecord | null {
  if (rec === null) {
    if (!mayEarn(rec, f) || (f.supporters ?? 0) < VETERAN_RULES.min_supporters) return null;
    return { earned_at: f.now, suspended_at: null, suspensions: 0, restored_at: null };
  }
  if (rec.suspended_at === null && f.karma <= VETERAN_RULES.suspend_at_karma) {
    return { ...rec, suspended_at: f.now, suspensions: rec.suspensions + 1 };
  }
  if (rec.suspended_at !== null && f.karma >= VETERAN_RULES.restore_at_karma) {
    return { ...rec, suspended_at: null, restored_at: f.now };
  }
  return rec;
}

/** True while pin rights are suspended: stored, or karma at the suspension threshold now. */
export function isSuspended(rec: VeteranRecord | null, karma: number): boolean {
  if (!rec) return false;
  return rec.suspended_at !== null || karma <= VETERAN_RULES.suspend_at_karma;
}

/** Stages `next` when it differs from `prev`; a new suspension retires the account's community pins. */
export async function stageVeteranChange(
  tx: Tx,
  agentId: string,
  prev: VeteranRecord | null,
  next: VeteranRecord | null,
): Promise<void> {
  if (next === prev || next === null) return;
  tx.set(keys.veterans(agentId), next);
  if (next.suspensions > (prev?.suspensions ?? 0)) await retireCommunityPinsOf(tx, agentId);
}

/**
 * Runs inside every commit that changes an account's karma (a vote on its named content,
 * a removal of its content), after the caller has read the account's voting standing with
 * a check. The state just before the change is evaluated first (karma and supporters were
 * constant since the previous change and age only grows, so nothing earned in between is
 * missed), then the karma after it. Adds one check (two when a suspension retires pins).
 */
export async function onKarmaChanged(
  tx: Tx,
  deps: Deps,
  agentId: string,
  karmaBefore: number,
  karmaAfter: number,
): Promise<void> {
  const agent = (await tx.peek<Agent>(keys.agents(agentId))).value;
  if (!agent) return;
  const prev = (await tx.get<VeteranRecord>(keys.veterans(agentId))).value;
  const now = deps.clock.now();
  let rec = prev;
  const before = { now, createdAt: agent.created_at, karma: karmaBefore };
  if (mayEarn(rec, before)) {
    // Committed state is the state before this change: the supporters it had until now.
    rec = nextVeteranRecord(rec, {
      ...before,
      supporters: await distinctUpvotersOf(deps, agentId),
    });
  }
  if (rec) rec = nextVeteranRecord(rec, { ...before, karma: karmaAfter, supporters: null });
  await stageVeteranChange(tx, agentId, prev, rec);
}

/** An account's pin rights as observed now. */
export interface PinRights {
  veteran: boolean;
  suspended: boolean;
  karma: number;
  /** Distinct other accounts with an upvote on the account's retained named content (null: not computed). */
  supporters: number | null;
  record: VeteranRecord | null;
}

/**
 * Observes an account's pin rights now and stores any transition (earned, suspended,
 * restored) in one commit that checks the veteran record and the voting standing.
 * `withSupporters` computes the supporter count even when no transition needs it.
 */
export async function evaluatePinRights(
  deps: Deps,
  agent: Agent,
  withSupporters = false,
): Promise<PinRights> {
  const seen = await observePinRights(deps, agent, withSupporters);
  const { stored, next, karma, supporters } = seen;
  let record = stored;
  if (next !== stored && agent.status === "active") {
    const { value } = await transact(deps.kv, async (tx) => {
      const [v, s] = await tx.getMany<unknown>([
        keys.veterans(agent.id),
        keys.votingStandings(agent.id),
      ]);
      const prev = v.value as VeteranRecord | null;
      const k = ((s.value as VotingStanding | null) ?? EMPTY_STANDING).karma;
      const n = nextVeteranRecord(prev, {
        now: deps.clock.now(),
        createdAt: agent.created_at,
        karma: k,
        supporters,
      });
      await stageVeteranChange(tx, agent.id, prev, n);
      return n;
    });
    record = value;
  }
  return {
    veteran: record !== null,
    suspended: isSuspended(record, karma),
    karma,
    supporters,
    record,
  };
}

/** The facts and the transition (if any) an observation of pin rights sees now. */
async function observePinRights(deps: Deps, agent: Agent, withSupporters: boolean) {
  const [vetEntry, standingEntry] = await deps.kv.getMany<[VeteranRecord, VotingStanding]>([
    keys.veterans(agent.id),
    keys.votingStandings(agent.id),
  ]);
  const now = deps.clock.now();
  const stored = vetEntry.value;
  const karma = (standingEntry.value ?? EMPTY_STANDING).karma;
  const base = { now, createdAt: agent.created_at, karma };
  // Earning waits for the account's age (read caches must know when that changes).
  const earnableAt = agent.created_at + VETERAN_RULES.min_age_seconds;
  if (stored === null && now < earnableAt) noteChangeAt(earnableAt);
  const needSupporters = withSupporters || mayEarn(stored, base);
  const supporters = needSupporters ? await distinctUpvotersOf(deps, agent.id) : null;
  const next = nextVeteranRecord(stored, { ...base, supporters });
  return { stored, next, karma, supporters };
}

/**
 * An account's pin rights as observed now, without storing any transition (the pure form
 * for reads such as the feeds' `viewer.pinning`): the same answer `evaluatePinRights`
 * gives.
 */
export async function projectPinRights(deps: Deps, agent: Agent): Promise<PinRights> {
  const { stored, next, karma, supporters } = await observePinRights(deps, agent, false);
  const record = agent.status === "active" ? next : stored;
  return {
    veteran: record !== null,
    suspended: isSuspended(record, karma),
    karma,
    supporters,
    record,
  };
}

/**
 * Stores a suspension a read observed (the owner's karma is at -5 or lower now but the
 * record does not say suspended yet), retiring the owner's community pins in the same commit.
 */
export async function recordObservedSuspension(
  deps: Deps,
  agentId: string,
  observedKarma: number,
): Promise<void> {
  await transact(deps.kv, async (tx) => {
    const prev = (await tx.get<VeteranRecord>(keys.veterans(agentId))).value;
    if (!prev || prev.suspended_at !== null) return;
    const next = nextVeteranRecord(prev, {
      now: deps.clock.now(),
      createdAt: 0,
      karma: observedKarma,
      supporters: null,
    });
    await stageVeteranChange(tx, agentId, prev, next);
  });
}
