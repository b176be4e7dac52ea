/**
 * Idempotency of keyed writes that are not publications (rules edits, moderator actions):
 * the first outcome of an `Idempotency-Key` is stored with a fingerprint of the request,
 * and a retry with the same key and the same request answers that outcome again.
 */
import { idempotencyConflict } from "./idempotency.ts";

/** A stored outcome: HTTP status and body, for the request with this fingerprint. */
export interface ActionReplay {
  fingerprint: string;
  status: number;
  body: Record<string, unknown>;
  at: number;
}

/**
 * The stored outcome for a key when the request matches (a replay), null for an unused
 * key, or 409 IDEMPOTENCY_CONFLICT when the key was used for a different request.
 */
export function matchReplay(existing: ActionReplay | null, print: string): ActionReplay | null {
  if (!existing) return null;
  if (existing.fingerprint === print) return existing;
  throw idempotencyConflict(null);
}
