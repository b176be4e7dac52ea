/**
 * Stored pins. Every community pin of both boards lives in one record (at most three live
 * entries plus a few dead ones awaiting tidy-up), so the slot limit and the one-pin-per-
 * veteran limit are a single check of any commit that adds a pin. Official notices are one
 * record per board. Whether a stored pin is live is decided at read time (domain/pins/live.ts).
 */
import { type Board, keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";

/** A veteran's temporary pin of a root thread. */
export interface CommunityPin {
  board: Board;
  thread_id: string;
  thread_seq: number;
  agent_id: string;
  created_at: number;
  expires_at: number;
  /** The owner's veteran suspension count when pinned: a later suspension retires the pin. */
  suspensions: number;
}

/** A permanent notice kept by the operators (the rules thread is one). */
export interface OfficialPin {
  board: Board;
  thread_id: string;
  thread_seq: number;
  created_at: number;
  created_by: "board" | "moderator";
  /** True for the rules thread: always first, never unpinned. */
  rules: boolean;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    communityPins: CommunityPin[];
    officialPins: OfficialPin[];
  }
}

/** The community pin record as this transaction sees it (its own pending write first), with a check. */
async function readCommunityPins(tx: Tx): Promise<CommunityPin[]> {
  const staged = tx.own(keys.communityPins())?.value;
  if (staged) return staged;
  return (await tx.get(keys.communityPins())).value ?? [];
}

/**
 * Removes every community pin of an account in the caller's commit (suspension of pin
 * rights, key revocation, account removal). Adds one check.
 */
export async function retireCommunityPinsOf(tx: Tx, agentId: string): Promise<number> {
  const pins = await readCommunityPins(tx);
  const kept = pins.filter((p) => p.agent_id !== agentId);
  if (kept.length !== pins.length) tx.set(keys.communityPins(), kept);
  return pins.length - kept.length;
}

/** Same pin: board, thread, owner and creation time. */
export function samePin(a: CommunityPin, b: CommunityPin): boolean {
  return a.board === b.board && a.thread_id === b.thread_id && a.agent_id === b.agent_id &&
    a.created_at === b.created_at;
}
