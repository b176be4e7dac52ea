/**
 * Veteran status: the earned right to pin (spec "Pin rights" rows; docs/pins_rules_moderation.md).
 *
 * Earned at account age >= 7 days, karma >= 5 and upvotes from >= 3 distinct other accounts
 * on retained named content; the earned fact is stored, so small karma changes never take
 * it away. Pin rights are suspended at karma <= -5 (community pins retired at once) and
 * restored at karma >= 5 (pins are not re-created).
 *
 * Transitions are stored by the writes that touch the account's standing: every commit
 * that changes its karma (`onKarmaChanged`) and POST /pins. Reads (`/v1/me`, the feeds'
 * viewer) project them without writing (`projectPinRights`): status earned by the clock
 * alone (the account turning 7 days old) shows at once, with the earning time the record
 * will get when stored (`earnedAt`). Suspension is also decided at read time from the
 * current karma, so a pin never shows after its owner's karma fell to -5.
 */
import { keys } from "../../kv/keys.ts";
import type { BoardHead } from "../board/mod.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import { readNamed } from "../../kv/read_many.ts";
import type { Agent } from "../accounts/mod.ts";
import { reached } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { EMPTY_STANDING, supportFromStanding, supportOf, type VotingFacts } from "../votes/mod.ts";
import { retireCommunityPinsOf } from "./book.ts";
import { noteStandingChanges } from "../agent_events.ts";

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

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    veterans: VeteranRecord;
  }
}

/**
 * Facts a transition is decided on. `supporters` (and `newestVoteAt`, the cast time of the
 * newest vote the account received) are computed only when earning is possible.
 */
interface VeteranFacts {
  now: number;
  createdAt: number;
  karma: number;
  supporters: number | null;
  newestVoteAt: number | null;
}

/**
 * When status that is earnable now was earned: the later of the account turning 7 days
 * old and the newest vote it received. Every commit that changes karma stores status the
 * facts before it allow, so while none is stored the karma and supporters conditions
 * have held since the newest vote (or since before the age condition) — the same time
 * whether the status is projected by a read or stored by a later write.
 */
function earnedAt(f: Pick<VeteranFacts, "createdAt" | "newestVoteAt">): number {
  return Math.max(veteranAgeAt(f.createdAt), f.newestVoteAt ?? 0);
}

/** When an account created at `createdAt` is old enough to earn veteran status. */
export function veteranAgeAt(createdAt: number): number {
  return createdAt + VETERAN_RULES.min_age_seconds;
}

/** Whether pin rights hold: an active veteran whose rights are not suspended. */
export function pinEligible(agent: Agent, rights: { veteran: boolean; suspended: boolean }) {
  return agent.status === "active" && rights.veteran && !rights.suspended;
}

/** True when account age and karma allow earning (supporters decide the rest). */
function mayEarn(
  rec: VeteranRecord | null,
  f: Pick<VeteranFacts, "now" | "createdAt" | "karma">,
): boolean {
  return rec === null && reached(f.now, veteranAgeAt(f.createdAt)) &&
    f.karma >= VETERAN_RULES.min_karma;
}

/** The next veteran record from the current one and the facts now (pure). */
export function nextVeteranRecord(
  rec: VeteranRecord | null,
  f: VeteranFacts,
): VeteranRecord | null {
  if (rec === null) {
    if (!mayEarn(rec, f) || (f.supporters ?? 0) < VETERAN_RULES.min_supporters) return null;
    return { earned_at: earnedAt(f), suspended_at: null, suspensions: 0, restored_at: null };
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
  if (prev === null) await noteStandingChanges(tx, next.earned_at, agentId, ["veteran_gained"]);
  else if (prev.suspended_at === null && next.suspended_at !== null) {
    await noteStandingChanges(tx, next.suspended_at, agentId, ["veteran_lost"]);
  } else if (prev.suspended_at !== null && next.suspended_at === null) {
    await noteStandingChanges(tx, next.restored_at ?? prev.suspended_at, agentId, [
      "veteran_gained",
    ]);
  }
  if (next.suspensions > (prev?.suspensions ?? 0)) await retireCommunityPinsOf(tx, agentId);
}

/**
 * Runs inside every commit that changes an account's karma (a vote on its named content,
 * a removal of its content), after the caller has read the account's voting standing with
 * a check. The state just before the change is evaluated first (karma and supporters were
 * constant since the previous change and age only grows, so nothing earned in between is
 * missed), then the karma after it. Adds one check (two when a suspension retires pins).
 * `namedHead`: the named board's head when the caller has read it (a vote).
 */
export async function onKarmaChanged(
  tx: Tx,
  deps: Deps,
  agentId: string,
  karmaBefore: number,
  karmaAfter: number,
  namedHead?: BoardHead,
): Promise<void> {
  const agent = (await tx.peek(keys.agents(agentId))).value;
  if (!agent) return;
  const prev = (await tx.get(keys.veterans(agentId))).value;
  const now = deps.clock.now();
  let rec = prev;
  const before = { now, createdAt: agent.created_at, karma: karmaBefore };
  // The named board's head the support summaries are read with: the caller's, or read here
  // unchecked, apart from the transaction (only when a summary is needed, and once).
  let headRead: Promise<BoardHead | null> | undefined;
  const head = () =>
    namedHead ?? (headRead ??= tx.kv.get(keys.boardHeads("named")).then((e) => e.value));
  if (mayEarn(rec, before)) {
    // Committed state is the state before this change: the supporters it had until now,
    // from the support summary of the standing the caller read, else from the received votes.
    const [standing, h] = await Promise.all([tx.get(keys.votingStandings(agentId)), head()]);
    const support = supportFromStanding(standing.value, h) ?? await supportOf(deps, agentId);
    rec = nextVeteranRecord(rec, { ...before, ...support });
  }
  const after = { ...before, karma: karmaAfter };
  if (mayEarn(rec, after)) {
    // Earned by this very change: the supporters after it, from the standing the caller has
    // staged in this commit (a vote's adds its voter), else from the received votes.
    const staged = tx.own(keys.votingStandings(agentId));
    const support = (staged && supportFromStanding(staged.value, await head())) ??
      await supportOf(deps, agentId);
    rec = nextVeteranRecord(rec, { ...after, ...support });
  }
  if (rec) {
    rec = nextVeteranRecord(rec, {
      ...before,
      karma: karmaAfter,
      supporters: null,
      newestVoteAt: null,
    });
  }
  await stageVeteranChange(tx, agentId, prev, rec);
}

/** An account's pin rights as observed now. */
interface PinRights {
  veteran: boolean;
  suspended: boolean;
  karma: number;
  /** Distinct other accounts with an upvote on the account's retained named content (null: not computed). */
  supporters: number | null;
  record: VeteranRecord | null;
}

/**
 * The facts and the transition (if any) an observation of pin rights sees now. With
 * `facts` (voting facts the answer reads anyway), only the veteran record is read here, by
 * the facts' account id, while `caller` may still be resolving.
 */
async function observePinRights(
  deps: Deps,
  caller: Agent | Promise<Agent>,
  withSupporters: boolean,
  facts?: VotingFacts,
) {
  const [stored, standing, agent, summary] = facts
    ? await Promise.all([
      deps.kv.get(keys.veterans(facts.agentId)).then((e) => e.value),
      facts.standing,
      caller,
      null,
    ])
    : await readPinFacts(deps, await caller);
  const now = deps.clock.now();
  const karma = standing.karma;
  const base = { now, createdAt: agent.created_at, karma };
  const needSupporters = withSupporters || mayEarn(stored, base);
  // Without the voting facts, the standing's support summary says (read with it), as it does
  // for the pin and vote writes; a standing without one counts the received votes.
  const support = needSupporters
    ? summary ?? await supportOf(deps, agent.id, facts?.received)
    : { supporters: null, newestVoteAt: null };
  const next = nextVeteranRecord(stored, { ...base, ...support });
  return { agent, stored, next, karma, supporters: support.supporters };
}

/**
 * An account's veteran record and voting standing, read together with the named board's head,
 * and the support the standing's summary shows under it (null: count the received votes).
 */
async function readPinFacts(deps: Deps, agent: Agent) {
  const { veteran, standing, head } = await readNamed(deps.kv, {
    veteran: keys.veterans(agent.id),
    standing: keys.votingStandings(agent.id),
    head: keys.boardHeads("named"),
  });
  const summary = supportFromStanding(standing.value, head.value);
  return [veteran.value, standing.value ?? EMPTY_STANDING, agent, summary] as const;
}

/**
 * An account's pin rights as observed now, without storing any transition (every read:
 * `/v1/me`, the feeds' `viewer.pinning`). A transition it sees is stored by the next
 * write that touches the account's standing. `withSupporters` computes the supporter
 * count even when no transition needs it; `facts`: the account's voting facts, when the
 * answer reads them for other parts too (`caller` may then still be resolving).
 */
export async function projectPinRights(
  deps: Deps,
  caller: Agent | Promise<Agent>,
  withSupporters = false,
  facts?: VotingFacts,
): Promise<PinRights> {
  const { agent, stored, next, karma, supporters } = await observePinRights(
    deps,
    caller,
    withSupporters,
    facts,
  );
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
 * Stores a suspension a read observed (the owner's karma was at -5 or lower but the record
 * did not say suspended yet), retiring the owner's community pins in the same commit. The
 * karma is read again with a check: an observation that no longer holds records nothing.
 */
export async function recordObservedSuspension(deps: Deps, agentId: string): Promise<void> {
  await transact(deps.kv, async (tx) => {
    const { veteran, standing } = await tx.getNamed({
      veteran: keys.veterans(agentId),
      standing: keys.votingStandings(agentId),
    });
    const prev = veteran.value;
    if (!prev || prev.suspended_at !== null) return;
    const next = nextVeteranRecord(prev, {
      now: deps.clock.now(),
      createdAt: 0,
      karma: (standing.value ?? EMPTY_STANDING).karma,
      supporters: null,
      newestVoteAt: null,
    });
    await stageVeteranChange(tx, agentId, prev, next);
  });
}
