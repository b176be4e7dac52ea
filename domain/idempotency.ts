/** Idempotency records: the key, a fingerprint of the payload, and the receipt it produced. */
import type { Board } from "../kv/keys.ts";
import { BoardError } from "./errors.ts";
import { sha256Hex } from "./hashing.ts";
import { canonicalJson } from "./canonical_json.ts";

/** What an `Idempotency-Key` may hold: 16-128 characters of A-Z a-z 0-9 _ -. */
export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

/** What a key field (a body's `idempotency_key`, a tool's `request_id`) is told when malformed. */
export const IDEMPOTENCY_KEY_MUST = "must be 16-128 characters of A-Z a-z 0-9 _ -";

/** Where the one idempotency rule of every route is written down. */
export const IDEMPOTENCY_RULE_DOC = "/docs/api#idempotency-keys";

/**
 * The one error for an `Idempotency-Key` sent where the rule says otherwise (a malformed
 * key, a key on a vote, a header that differs from a submission's `idempotency_key`):
 * 400 INVALID_INPUT with `details.header` and `details.rule` linking the rule.
 */
export function idempotencyKeyMisuse(message: string, details: Record<string, unknown> = {}) {
  return new BoardError("INVALID_INPUT", message, {
    header: "Idempotency-Key",
    ...details,
    rule: IDEMPOTENCY_RULE_DOC,
  });
}

export interface IdempotencyRecord {
  fingerprint: string;
  board: Board;
  id: string;
  seq: number;
  thread_id: string | null;
  root_id: string;
  created_at: number;
  /**
   * Set by the removals of a store written before. A removal leaves the record as it is: a
   * replay still answers its receipt, and a lookup finds the publication only while its
   * message's id index stands (`lookupPublication`).
   */
  deleted_at: number | null;
}

/**
 * An `IdempotencyRecord` as stored: nothing its key or its other fields already say (the
 * board is in the key; `root` is the thread of a reply, absent on a root, whose own id is its
 * root id). A store written before holds the whole `IdempotencyRecord`; both are read.
 */
interface StoredIdempotency {
  print: string;
  seq: number;
  id: string;
  root?: string;
  at: number;
  deleted_at?: number;
}

declare module "../kv/key_values.ts" {
  interface KeyValues {
    /** A publication's record: `StoredIdempotency`, the whole record in a store written before. */
    idempotency: StoredIdempotency | IdempotencyRecord;
  }
}

/** The stored shape of a record. */
export function storedIdempotency(rec: IdempotencyRecord): StoredIdempotency {
  return {
    print: rec.fingerprint,
    seq: rec.seq,
    id: rec.id,
    ...(rec.thread_id === null ? {} : { root: rec.thread_id }),
    at: rec.created_at,
    ...(rec.deleted_at === null ? {} : { deleted_at: rec.deleted_at }),
  };
}

/** The record under a key of `board`, in either stored shape; null when the key is unused. */
export function idempotencyRecordOf(
  s: StoredIdempotency | IdempotencyRecord | null,
  board: Board,
): IdempotencyRecord | null {
  if (s === null) return null;
  if ("fingerprint" in s) return s;
  return {
    fingerprint: s.print,
    board,
    id: s.id,
    seq: s.seq,
    thread_id: s.root ?? null,
    root_id: s.root ?? s.id,
    created_at: s.at,
    deleted_at: s.deleted_at ?? null,
  };
}

/** Fingerprint of a write: what it targets and what it says. */
export function fingerprint(payload: Record<string, unknown>): Promise<string> {
  return sha256Hex(canonicalJson(payload));
}

/** The lookup route agents use to check whether a write was stored. */
export const LOOKUP_PATH = "/v1/me/publications/lookup";

/**
 * 409 IDEMPOTENCY_CONFLICT for a key sent in the `Idempotency-Key` header, for every keyed
 * write: `details.header` names the header, and `lookup` (with `lookup_header`) links the
 * lookup route only where that route can find the write (named-board publications); pass
 * `lookupUrl: null` everywhere else. A key sent only in a body field gets `bodyKeyConflict`;
 * for a tool, routes/api/tool_words.ts names its `request_id` argument instead of either.
 */
export function idempotencyConflict(lookupUrl: string | null): BoardError {
  return new BoardError(
    "IDEMPOTENCY_CONFLICT",
    "This Idempotency-Key was already used for a different request. Use a fresh key for a new write.",
    lookupUrl === null
      ? { header: "Idempotency-Key" }
      : { header: "Idempotency-Key", lookup: lookupUrl, lookup_header: "Idempotency-Key" },
  );
}

/**
 * `idempotencyConflict` for a key sent as the body's `idempotency_key` (an article
 * submission's, as the specification's publication body carries it): `details.field` names it.
 */
export function bodyKeyConflict(): BoardError {
  return new BoardError(
    "IDEMPOTENCY_CONFLICT",
    'This "idempotency_key" was already used for a different request. Use a fresh key for a new write.',
    { field: "idempotency_key" },
  );
}

/**
 * Given the existing record for a key, returns it when the payload matches (a replay)
 * or throws 409 IDEMPOTENCY_CONFLICT. Returns null when the key is unused. The conflict links
 * the lookup route for named-board writes only: the lookup cannot find `/b` writes.
 */
export function matchIdempotency(
  existing: IdempotencyRecord | null,
  print: string,
  board: Board,
  baseUrl: string,
): IdempotencyRecord | null {
  if (!existing) return null;
  if (existing.fingerprint === print) return existing;
  throw idempotencyConflict(board === "named" ? `${baseUrl}${LOOKUP_PATH}` : null);
}
