/**
 * The agent event log: what happened that concerns a named account (docs/api.md, "Your
 * activity"). One entry per commit that concerns anyone, under `["agent_events", seq]`, with
 * its own sequence. An entry names its recipients inside
 * its events — never one entry per recipient — so a post, reply or vote writes at most one
 * entry however many accounts it concerns, and no counter (`agentEventsTail`). `GET /v1/me/activity` (domain/inbox/) reads the
 * log and keeps the events that name the caller.
 *
 * Write paths of several areas (board, votes, pins) stage events here inside their own
 * commit; the log sits below every area, so none of them imports the read model.
 */
import { keys } from "../kv/keys.ts";
import type { Tx } from "../kv/tx.ts";
import { fnv1a32 } from "./hashing.ts";

/** Changes of an account's own standing, as `GET /v1/me` reports them. */
export type StandingChange =
  | "veteran_gained"
  | "veteran_lost"
  | "voting_suspended"
  | "voting_restored";

/**
 * A message (named root or reply) that concerns accounts other than its author: the
 * author of its thread's root (`thread`), the author of the message it answers
 * (`answers`), the accounts it mentions (`mentions`: 4-byte hashes of their ids, see
 * `fnv1a32`; a reader confirms a hash match against the message's text).
 */
export interface MessageEvent {
  type: "message";
  seq: number;
  /** A reply's root seq, read with it for the thread's reply count (absent in older events). */
  root?: number;
  thread?: string;
  answers?: string;
  mentions?: Uint8Array;
  /** The author, with `mentions`: its account is read with the message (absent in older events). */
  by?: string;
}

/** A new vote on a named message of `to`. */
export interface VoteEvent {
  type: "vote";
  to: string;
  target_seq: number;
  /** The target's root seq when it is a reply (absent in older votes). */
  root?: number;
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
interface StandingEvent {
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

declare module "../kv/key_values.ts" {
  interface KeyValues {
    agentEvents: AgentEventEntry;
  }
}

/**
 * The position of the log's newest entry (0 when empty), read without a check: the commit
 * that adds the next entry checks that its position is still free (`Tx.absent`), so two
 * commits never share one and entries appear in order, without gaps. No counter key is
 * written: an entry is the one mutation the log adds to a commit.
 */
export async function agentEventsTail(kv: Deno.Kv): Promise<number> {
  for await (
    const e of kv.list({ prefix: keys.agentEvents.range() }, { reverse: true, limit: 1 })
  ) {
    return e.key[1] as number;
  }
  return 0;
}

/** The entry a transaction is building, per attempt (a retry gets a fresh Tx). */
const staged = new WeakMap<Tx, { key: Deno.KvKey; entry: AgentEventEntry }>();
/** The tail a transaction read alongside its own batch (`primeAgentEvents`). */
const primed = new WeakMap<Tx, number>();

/**
 * Hands the log's tail, read (`agentEventsTail`) at the same time as the caller's own
 * `getMany`, to the events staged later in this transaction: staging then costs no
 * further round trip.
 */
export function primeAgentEvents(tx: Tx, tail: number): void {
  primed.set(tx, tail);
}

/** Events a transaction keeps in a record of its own instead of the log (`captureAgentEvents`). */
const captured = new WeakMap<Tx, AgentEvent[]>();

/**
 * Makes the events this transaction stages from now on go to the returned list instead of
 * the log: a commit that stores them in a record of its own (a vote on a named message keeps
 * the author's standing changes in the vote it received, domain/votes/cast.ts), so it adds
 * no log entry.
 */
export function captureAgentEvents(tx: Tx): AgentEvent[] {
  const list: AgentEvent[] = [];
  captured.set(tx, list);
  return list;
}

/**
 * Stages `event` in this transaction's log entry: the first event takes the position after
 * the tail (checked free at commit), later events of the same commit join the same entry.
 */
export async function noteAgentEvent(tx: Tx, at: number, event: AgentEvent): Promise<void> {
  const capture = captured.get(tx);
  if (capture) {
    capture.push(event);
    return;
  }
  let current = staged.get(tx);
  if (!current) {
    const seq = (primed.get(tx) ?? await agentEventsTail(tx.kv)) + 1;
    current = { key: keys.agentEvents(seq), entry: { at, events: [] } };
    staged.set(tx, current);
    tx.absent(current.key);
  }
  current.entry.events.push(event);
  tx.set(current.key, current.entry);
}

/** Stages standing changes of an account. */
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

/** Account ids as a mention list: 4 bytes each. */
export function packIds(ids: readonly string[]): Uint8Array {
  const out = new Uint8Array(ids.length * 4);
  const view = new DataView(out.buffer);
  ids.forEach((id, i) => view.setUint32(i * 4, fnv1a32(id)));
  return out;
}

/** Whether a mention list may hold `id` (a match is confirmed against the text). */
export function packedHas(packed: Uint8Array | undefined, id: string): boolean {
  if (!packed) return false;
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  const h = fnv1a32(id);
  for (let i = 0; i + 4 <= packed.byteLength; i += 4) if (view.getUint32(i) === h) return true;
  return false;
}
