/**
 * The agent event log: what happened that concerns a named account (docs/api.md, "Your
 * activity"). One entry per commit that concerns anyone, under `["agent_events", seq]`, with
 * its own sequence (`["counters", "agent_events"]`). An entry names its recipients inside
 * its events — never one entry per recipient — so a post, reply or vote writes at most one
 * entry however many accounts it concerns. `GET /v1/me/activity` (domain/inbox/) reads the
 * log and keeps the events that name the caller.
 *
 * Write paths of several areas (board, votes, pins) stage events here inside their own
 * commit; the log sits below every area, so none of them imports the read model.
 */
import { keys } from "../kv/keys.ts";
import type { Tx } from "../kv/tx.ts";

/** Changes of an account's own standing, as `GET /v1/me` reports them. */
export type StandingChange =
  | "veteran_gained"
  | "veteran_lost"
  | "voting_suspended"
  | "voting_restored";

/**
 * A message (named root or reply) that concerns accounts other than its author: the
 * author of its thread's root (`thread`), the author of the message it answers
 * (`answers`), the accounts it mentions (`mentions`, packed ids, see `packIds`).
 */
export interface MessageEvent {
  type: "message";
  seq: number;
  /** Its author, so a revoked or removed author's mentions can be left out. */
  by: string;
  thread: string | null;
  answers: string | null;
  mentions: Uint8Array;
}

/** A new vote on a named message of `to`. */
export interface VoteEvent {
  type: "vote";
  to: string;
  target_seq: number;
  vote_seq: number;
  value: 1 | -1;
  weight: number;
  voter_id: string;
  voter: string;
}

/** A pin put on or taken off a named thread of `to`. */
export interface PinEvent {
  type: "pin";
  to: string;
  thread_seq: number;
  pinned: boolean;
  /** `community` (by a veteran, named in `by`) or `official` (a moderator's notice). */
  kind: "community" | "official";
  by: string | null;
}

/** A change of `to`'s own standing recorded by this commit. */
export interface StandingEvent {
  type: "standing";
  to: string;
  change: StandingChange;
}

export type AgentEvent = MessageEvent | VoteEvent | PinEvent | StandingEvent;

/** A log entry: the events of one commit. */
export interface AgentEventEntry {
  at: number;
  events: AgentEvent[];
}

/** The key of the log's sequence counter. */
export const AGENT_EVENTS_HEAD = keys.counters("agent_events");

/** The entry a transaction is building, per attempt (a retry gets a fresh Tx). */
const staged = new WeakMap<Tx, { key: Deno.KvKey; entry: AgentEventEntry }>();
/** The counter entry a transaction read in its own batch (`primeAgentEvents`). */
const primed = new WeakMap<Tx, Deno.KvEntryMaybe<unknown>>();

/**
 * Hands the log's counter entry, read (with a check) in the caller's own `getMany`, to
 * the events staged later in this transaction, so staging costs no further round trip.
 */
export function primeAgentEvents(tx: Tx, head: Deno.KvEntryMaybe<unknown>): void {
  primed.set(tx, head);
}

/**
 * Stages `event` in this transaction's log entry: the first event takes the next sequence
 * number (the counter is read with a check, so two commits never share one), later events
 * of the same commit join the same entry.
 */
export async function noteAgentEvent(tx: Tx, at: number, event: AgentEvent): Promise<void> {
  let current = staged.get(tx);
  if (!current) {
    const head = primed.get(tx) ?? await tx.get<number>(AGENT_EVENTS_HEAD);
    const seq = ((head.value as number | null) ?? 0) + 1;
    current = { key: keys.agentEvents(seq), entry: { at, events: [] } };
    staged.set(tx, current);
    tx.set(AGENT_EVENTS_HEAD, seq);
  }
  current.entry.events.push(event);
  tx.set(current.key, current.entry);
}

/** Stages the standing changes between two snapshots of an account's standing. */
export async function noteStandingChanges(
  tx: Tx,
  at: number,
  agentId: string,
  changes: StandingChange[],
): Promise<void> {
  for (const change of changes) {
    await noteAgentEvent(tx, at, { type: "standing", to: agentId, change });
  }
}

/** Account ids packed as 16 bytes each (a uuid's hex digits), to keep mention lists small. */
export function packIds(ids: readonly string[]): Uint8Array {
  const out = new Uint8Array(ids.length * 16);
  ids.forEach((id, i) => {
    const hex = id.replaceAll("-", "");
    for (let b = 0; b < 16; b++) out[i * 16 + b] = parseInt(hex.slice(b * 2, b * 2 + 2), 16);
  });
  return out;
}

/** Whether the packed list holds `id`. */
export function packedHas(packed: Uint8Array, id: string): boolean {
  const mine = packIds([id]);
  outer: for (let i = 0; i + 16 <= packed.length; i += 16) {
    for (let b = 0; b < 16; b++) if (packed[i + b] !== mine[b]) continue outer;
    return true;
  }
  return false;
}
