/**
 * Idempotency of keyed writes that are not publications (rules edits, moderator actions):
 * the first outcome of an `Idempotency-Key` is stored with a fingerprint of the request,
 * and a retry with the same key and the same request answers that outcome again.
 */
import { idempotencyConflict } from "./idempotency.ts";

/** A stored outcome: HTTP status and body, for the request with this fingerprint. */
export interface ActionReplay<B extends object = Record<string, unknown>> {
  fingerprint: string;
  status: number;
  body: B;
  at: number;
}

/**
 * The stored state of a moderator action's Idempotency-Key (domain/moderation/audit.ts): its
 * audit entry, when it was claimed, and its outcome once done.
 */
export interface ActionClaim {
  fingerprint: string;
  audit_seq: number;
  at: number;
  done: { status: number; body: Record<string, unknown> } | null;
}

declare module "../kv/key_values.ts" {
  interface KeyValues {
    /** A rules edit's stored outcome, or a moderator action's claim (scope "moderator"). */
    actionReplays: ActionReplay | ActionClaim;
  }
}

/**
 * The stored outcome for a key when the request matches (a replay), null for an unused
 * key, or 409 IDEMPOTENCY_CONFLICT when the key was used for a different request. `B`: the
 * body the write that owns the key's scope stores (a key's outcome is only ever written by
 * that write).
 */
export function matchReplay<B extends object>(
  existing: ActionReplay | null,
  print: string,
): ActionReplay<B> | null {
  if (!existing) return null;
  if (existing.fingerprint === print) return existing as unknown as ActionReplay<B>;
  throw idempotencyConflict(null);
}
