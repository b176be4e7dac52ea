/**
 * Guest browser sessions of the human website (docs/website.md "Guest sessions"). A session
 * that has posted nothing is stateless: its cookie is a random id and its start, signed with
 * an HMAC under a key derived from the board secret, valid for a day from its start; issuing
 * and checking it writes nothing. The commit that stores its first comment makes it a KV
 * record (by the SHA-256 of a new random cookie, for 30 days from its start) and marks the
 * signed cookie spent. A stored session's cookie is a random value kept in KV only as its
 * SHA-256 (the sessions of earlier releases are stored ones too). The CSRF token is derived
 * with an HMAC under the board secret, so KV never holds it in any form. A session is never
 * adopted from a cookie the server did not issue, and it gets a new cookie in the very commit
 * that stores each comment it posts (it keeps its identity, `GuestSession.id`), so a cookie
 * planted before the post never names a session holding what the post made.
 */
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import {
  base64url,
  openCredential,
  purposeMac,
  sealCredential,
  type SealedCredential,
  secretMac,
} from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { sha256Hex, timingSafeEqual } from "../hashing.ts";

/** A session that posted a comment lasts 30 days from its start (not extended by more use). */
export const GUEST_SESSION_SECONDS = 30 * 86_400;
/** A session that has posted no comment lasts a day from its start. */
export const UNUSED_GUEST_SESSION_SECONDS = 86_400;
interface GuestSessionRecord {
  created_at: number;
  expires_at: number;
  /**
   * The session's identity, kept across cookie rotations (what comments and per-session
   * rates record). Absent on a session whose cookie never rotated: its key hash is its identity.
   */
  owner?: string;
  /**
   * Set under a signed cookie whose session posted (until the cookie would have expired):
   * the cookie names no session any more.
   */
  spent?: true;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    guestSessions: GuestSessionRecord;
    guestRotatedOut: RotatedOutRecord;
  }
}

/** A live guest session. */
export interface GuestSession {
  /** The session's identity: what comments and per-session rates store (never the cookie). */
  id: string;
  /** The SHA-256 of the current cookie value: the session's KV key. */
  key: string;
  /** The session's form token (derived, never stored). */
  csrf: string;
  created_at: number;
  expires_at: number;
  /** False for a session that has posted nothing (no record: its cookie is signed). */
  stored: boolean;
}

/** A stored session's cookie: 256 random bits. */
const STORED_COOKIE = /^[A-Za-z0-9_-]{43}$/;
/** An unused session's cookie: `<256 random bits>.<start, unix seconds>.<HMAC of both>`. */
const SIGNED_COOKIE = /^([A-Za-z0-9_-]{43})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

/** A guest cookie value the server issued (not yet checked against KV or the clock). */
export interface GuestCookie {
  /** SHA-256 of the value: the key of its record, and the identity of a session it started. */
  key: string;
  /** The start of the unused session a signed cookie names; null for a stored session's. */
  started: number | null;
}

function randomToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * The CSRF token of a session: HMAC-SHA-256 of its identity under the board secret, so
 * nothing in KV is the token or opens it. It stays the same when the cookie rotates, so an
 * open form still posts; the token alone is useless without a cookie naming the session.
 */
function csrfOf(deps: Deps, identity: string): Promise<string> {
  return secretMac(deps, `board-guest-csrf:${identity}`);
}

/** What a signed cookie's HMAC covers: its random id and its start. */
function signedPart(id: string, started: number): string {
  return `${id}.${started}`;
}

/**
 * Reads a guest cookie value: a stored session's (any well-formed value: KV decides), or a
 * signed one whose HMAC is the server's. Null for anything else (malformed, forged, tampered).
 * Whether the session is live is decided with its record (`guestSessionOf`).
 */
export async function readGuestCookie(
  deps: Deps,
  value: string | undefined,
): Promise<GuestCookie | null> {
  if (!value) return null;
  if (STORED_COOKIE.test(value)) return { key: await sha256Hex(value), started: null };
  const m = SIGNED_COOKIE.exec(value);
  if (!m) return null;
  const [, id, start, mac] = m;
  const started = Number(start);
  // One spelling per signed value: a start with a leading zero would name another session.
  if (String(started) !== start) return null;
  const expected = await purposeMac(deps, "guest-session-v1", signedPart(id, started));
  if (!timingSafeEqual(mac, expected)) return null;
  return { key: await sha256Hex(value), started };
}

/**
 * The live session a checked cookie names, given its record (read by the caller, null when
 * there is none): a stored session until its `expires_at`; an unused session (no record) for
 * a day from its start; null otherwise (ended, spent, or a stored cookie KV does not know).
 */
export async function guestSessionOf(
  deps: Deps,
  cookie: GuestCookie,
  rec: GuestSessionRecord | null,
): Promise<GuestSession | null> {
  const now = deps.clock.now();
  if (rec) {
    if (rec.spent || rec.expires_at <= now) return null;
    const id = rec.owner ?? cookie.key;
    return {
      id,
      key: cookie.key,
      csrf: await csrfOf(deps, id),
      created_at: rec.created_at,
      expires_at: rec.expires_at,
      stored: true,
    };
  }
  if (cookie.started === null) return null;
  const expires = cookie.started + UNUSED_GUEST_SESSION_SECONDS;
  if (expires <= now) return null;
  return {
    id: cookie.key,
    key: cookie.key,
    csrf: await csrfOf(deps, cookie.key),
    created_at: cookie.started,
    expires_at: expires,
    stored: false,
  };
}

/** The session a cookie value names, or null when unknown, malformed, forged or ended. */
export async function findGuestSession(
  deps: Deps,
  cookieValue: string | undefined,
): Promise<GuestSession | null> {
  const cookie = await readGuestCookie(deps, cookieValue);
  if (!cookie) return null;
  const rec = (await deps.kv.get(keys.guestSessions(cookie.key))).value;
  return await guestSessionOf(deps, cookie, rec);
}

/** A cookie value a comment rotated out (`keys.guestRotatedOut`). */
interface RotatedOutRecord {
  /** SHA-256 of the comment's text as the form sent it. */
  text_hash: string;
  expires_at: number;
  /**
   * For `GUEST_RESEND_SECONDS`: the comment, and the cookie value that replaced this one
   * (sealed, bound to this record's key), for the same form sent twice with the old cookie.
   */
  resend?: { comment_id: string; cookie: SealedCredential; until: number };
}

/** What a form sent again with a cookie value a comment rotated out finds (`sentBefore`). */
interface SentBefore {
  /**
   * Within `GUEST_RESEND_SECONDS` of that comment: the same form sent twice (a double click),
   * answered as the first: the comment, and the cookie value the session has now.
   */
  resend: { commentId: string; cookie: string } | null;
}

/**
 * How long after a comment the very same text (byte for byte) from the same session is the
 * same submission sent again (a double click, a form resent), answered as that comment rather
 * than as a repeat.
 */
export const GUEST_RESEND_SECONDS = 60;

const resendContext = (key: string) => `guest-resend:${key}`;

/** How long a rotated-out cookie value can still tell that its comment arrived (seconds). */
const ROTATED_OUT_SECONDS = 3600;

/**
 * Whether the cookie value stored under `key` was rotated out, within the hour, by a comment
 * of exactly `text`: the same form sent again after its answer was lost (null when not). The
 * value names no session any more; within a minute of the comment it gives the cookie value
 * that replaced it (a double click sends both forms with the old one), else it tells only
 * that a text its sender knows was received.
 */
export async function sentBefore(
  deps: Deps,
  key: string,
  text: string,
): Promise<SentBefore | null> {
  const rec = (await deps.kv.get(keys.guestRotatedOut(key))).value;
  const now = deps.clock.now();
  if (!rec || rec.expires_at <= now || !timingSafeEqual(rec.text_hash, await sha256Hex(text))) {
    return null;
  }
  if (!rec.resend || rec.resend.until <= now) return { resend: null };
  const cookie = await openCredential(
    deps,
    resendContext(key),
    rec.resend.cookie,
    "guest-resend-v1",
  );
  return { resend: cookie === null ? null : { commentId: rec.resend.comment_id, cookie } };
}

/** A new cookie value for a session, and the SHA-256 it is stored under. */
interface GuestRotation {
  cookie: string;
  key: string;
}

/** Draws the new cookie value of a rotation (nothing is written). */
export async function newGuestRotation(): Promise<GuestRotation> {
  const cookie = randomToken();
  return { cookie, key: await sha256Hex(cookie) };
}

/** The refusal of a session that ended (or never was) while its form was open. */
function sessionEnded(): BoardError {
  return new BoardError(
    "FORBIDDEN",
    "Your guest session has ended. Your text is kept below: post it again.",
    { field: "csrf", session: "ended" },
  );
}

/**
 * Stages, inside the caller's commit, the move of the session `cookie` names (its record
 * `rec`, read with a check in `tx` — null for an unused session, so the commit fails if
 * another request rotated, stored or ended it) to `rotation`'s cookie: the old value stops
 * naming it in that same commit (a stored record is deleted; a signed cookie is marked spent
 * until it would have expired), keeping for an hour only the hash of the comment's `text`
 * (`sentBefore`); its identity is kept, and it is stored to last `GUEST_SESSION_SECONDS` from
 * its start (the first comment lengthens it). Answers the session under its new key. Throws
 * 403 FORBIDDEN (`details.session: "ended"`) when the session is not live (the commit then
 * stores nothing).
 */
export async function rotateGuestSession(
  tx: Tx,
  deps: Deps,
  cookie: GuestCookie,
  rec: GuestSessionRecord | null,
  rotation: GuestRotation,
  text: string,
  commentId: string,
): Promise<GuestSession> {
  const now = deps.clock.now();
  const session = await guestSessionOf(deps, cookie, rec);
  if (!session) throw sessionEnded();
  const key = cookie.key;
  const sealed = await sealCredential(deps, resendContext(key), rotation.cookie, "guest-resend-v1");
  tx.set(
    keys.guestRotatedOut(key),
    {
      text_hash: await sha256Hex(text),
      expires_at: now + ROTATED_OUT_SECONDS,
      resend: { comment_id: commentId, cookie: sealed, until: now + GUEST_RESEND_SECONDS },
    } satisfies RotatedOutRecord,
    { expireIn: ROTATED_OUT_SECONDS * 1000 },
  );
  const moved: GuestSessionRecord = {
    created_at: session.created_at,
    expires_at: session.created_at + GUEST_SESSION_SECONDS,
    owner: session.id,
  };
  if (session.stored) tx.delete(keys.guestSessions(key));
  else {
    // The signed cookie stays authentic until its day ends: until then it is marked spent.
    const spent: GuestSessionRecord = {
      created_at: session.created_at,
      expires_at: session.expires_at,
      spent: true,
    };
    tx.set(keys.guestSessions(key), spent, { expireIn: (session.expires_at - now) * 1000 });
  }
  tx.set(keys.guestSessions(rotation.key), moved, { expireIn: (moved.expires_at - now) * 1000 });
  return (await guestSessionOf(deps, { key: rotation.key, started: null }, moved))!;
}

/**
 * The live session `cookie` names with record `rec` (read by the caller), or a 403
 * FORBIDDEN: `details.session` is `"ended"` when there is none, `"csrf"` when `csrf` is given
 * and is not the session's token.
 */
export async function liveGuestSession(
  deps: Deps,
  cookie: GuestCookie,
  rec: GuestSessionRecord | null,
  csrf?: string | null,
): Promise<GuestSession> {
  const session = await guestSessionOf(deps, cookie, rec);
  if (!session) throw sessionEnded();
  if (csrf !== undefined && !csrfMatches(session, csrf)) {
    throw new BoardError(
      "FORBIDDEN",
      "This form was out of date or was not sent from this page.",
      { field: "csrf", session: "csrf" },
    );
  }
  return session;
}

/**
 * Issues a new, unused session: a signed cookie value (shown only to that browser) and the
 * session it names. Nothing is written: the session is stored when it first posts a comment.
 */
export async function issueGuestSession(
  deps: Deps,
): Promise<{ cookie: string; session: GuestSession }> {
  const id = randomToken();
  const started = deps.clock.now();
  const mac = await purposeMac(deps, "guest-session-v1", signedPart(id, started));
  const cookie = `${id}.${started}.${mac}`;
  const session = await guestSessionOf(deps, { key: await sha256Hex(cookie), started }, null);
  return { cookie, session: session! };
}

/** Whether a submitted CSRF token is the session's (compared in constant time). */
function csrfMatches(session: GuestSession, token: string | null | undefined): boolean {
  return typeof token === "string" && token.length > 0 && timingSafeEqual(token, session.csrf);
}
