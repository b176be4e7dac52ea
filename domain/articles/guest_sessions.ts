/**
 * Guest browser sessions of the human website (docs/website.md "Guest sessions"): a
 * random id held in a cookie, stored in KV only as its SHA-256: it lasts a day from its start, or
 * 30 days from its start once it has posted a comment (set in that comment's commit).
 * The CSRF token is derived with an HMAC under the board secret, so KV never holds it in
 * any form. A session is never adopted from a cookie the server did not issue, and it gets
 * a new cookie in the very commit that stores each comment it posts (it keeps its identity,
 * `GuestSession.id`), so a cookie planted before the post never names a session holding
 * what the post made. Starting sessions is limited per network (an exact counter).
 */
import { keys } from "../../kv/keys.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import {
  base64url,
  openCredential,
  sealCredential,
  type SealedCredential,
  secretMac,
} from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { limitExceeded, limitOf, limitSpec } from "../limits/mod.ts";
import { sha256Hex, timingSafeEqual } from "../hashing.ts";

/** A session that posted a comment lasts 30 days from its start (not extended by more use). */
export const GUEST_SESSION_SECONDS = 30 * 86_400;
/** A session that has posted no comment lasts a day from its start. */
export const UNUSED_GUEST_SESSION_SECONDS = 86_400;
/** New guest sessions per network per fixed clock hour (times BOARD_LIMIT_SCALE). */
const SESSION_STARTS = limitSpec("network_guest_sessions_per_hour", 100, "network", "1h");

interface GuestSessionRecord {
  created_at: number;
  expires_at: number;
  /**
   * The session's identity, kept across cookie rotations (what comments and per-session
   * rates record). Absent on a session whose cookie never rotated: its key hash is its identity.
   */
  owner?: string;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    guestSessions: GuestSessionRecord;
    guestSessionStarts: number;
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
}

const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

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

async function sessionOf(
  deps: Deps,
  key: string,
  rec: GuestSessionRecord,
): Promise<GuestSession> {
  const id = rec.owner ?? key;
  return {
    id,
    key,
    csrf: await csrfOf(deps, id),
    created_at: rec.created_at,
    expires_at: rec.expires_at,
  };
}

/** The key (SHA-256) of the session a cookie value would name, or null when malformed. */
export async function guestSessionKey(cookieValue: string | undefined): Promise<string | null> {
  if (!cookieValue || !COOKIE_VALUE.test(cookieValue)) return null;
  return await sha256Hex(cookieValue);
}

/** The session a cookie value names, or null when unknown, malformed or expired. */
export async function findGuestSession(
  deps: Deps,
  cookieValue: string | undefined,
): Promise<GuestSession | null> {
  if (!cookieValue || !COOKIE_VALUE.test(cookieValue)) return null;
  const key = await sha256Hex(cookieValue);
  const rec = (await deps.kv.get(keys.guestSessions(key))).value;
  if (!rec || rec.expires_at <= deps.clock.now()) return null;
  return await sessionOf(deps, key, rec);
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
 * Stages, inside the caller's commit, the move of the session stored under `key` (its record
 * `rec`, read with a check in `tx`, so the commit fails if another request rotated or ended it)
 * to `rotation`'s cookie: the old value stops naming it in that same commit (keeping, for an
 * hour, only the hash of the comment's `text`: `sentBefore`); its identity is kept, and it
 * now lasts `GUEST_SESSION_SECONDS` from its start (the first comment lengthens it).
 * Answers the session under its new key. Throws 403 FORBIDDEN (`details.session: "ended"`)
 * when there is no live record (the commit then stores nothing).
 */
export async function rotateGuestSession(
  tx: Tx,
  deps: Deps,
  key: string,
  rec: GuestSessionRecord | null,
  rotation: GuestRotation,
  text: string,
  commentId: string,
): Promise<GuestSession> {
  const now = deps.clock.now();
  if (!rec || rec.expires_at <= now) throw sessionEnded();
  const cookie = await sealCredential(deps, resendContext(key), rotation.cookie, "guest-resend-v1");
  tx.set(
    keys.guestRotatedOut(key),
    {
      text_hash: await sha256Hex(text),
      expires_at: now + ROTATED_OUT_SECONDS,
      resend: { comment_id: commentId, cookie, until: now + GUEST_RESEND_SECONDS },
    } satisfies RotatedOutRecord,
    { expireIn: ROTATED_OUT_SECONDS * 1000 },
  );
  const moved: GuestSessionRecord = {
    created_at: rec.created_at,
    expires_at: rec.created_at + GUEST_SESSION_SECONDS,
    owner: rec.owner ?? key,
  };
  tx.delete(keys.guestSessions(key));
  tx.set(keys.guestSessions(rotation.key), moved, { expireIn: (moved.expires_at - now) * 1000 });
  return await sessionOf(deps, rotation.key, moved);
}

/**
 * The live session stored under `key` with record `rec` (read by the caller), or a 403
 * FORBIDDEN: `details.session` is `"ended"` when there is none, `"csrf"` when `csrf` is given
 * and is not the session's token.
 */
export async function liveGuestSession(
  deps: Deps,
  key: string,
  rec: GuestSessionRecord | null,
  csrf?: string | null,
): Promise<GuestSession> {
  if (!rec || rec.expires_at <= deps.clock.now()) throw sessionEnded();
  const session = await sessionOf(deps, key, rec);
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
 * Starts a session for a browser on `network`: returns the cookie value (shown only to
 * that browser) and the session. With `proceed`, the counter is read at once and the session
 * committed only if `proceed` answers true (404 NOT_FOUND, nothing written, otherwise). Throws 429 RATE_LIMITED (with the seconds to wait) when
 * the network has started its hourly allowance of sessions.
 */
export async function startGuestSession(
  deps: Deps,
  network: string,
  proceed?: Promise<boolean>,
): Promise<{ cookie: string; session: GuestSession }> {
  const cookie = randomToken();
  const key = await sha256Hex(cookie);
  const now = deps.clock.now();
  const hour = now - (now % 3600);
  const limit = limitOf(deps, SESSION_STARTS);
  const rec: GuestSessionRecord = {
    created_at: now,
    expires_at: now + UNUSED_GUEST_SESSION_SECONDS,
  };
  await transact(deps.kv, async (tx) => {
    const counter = keys.guestSessionStarts(network, hour);
    const started = (await tx.get(counter)).value ?? 0;
    // The caller may still call it off once the counter is read (nothing is then written).
    if (proceed && !await proceed) throw new BoardError("NOT_FOUND", "No session was started.");
    if (started >= limit) {
      const wait = hour + 3600 - now;
      throw limitExceeded(
        "RATE_LIMITED",
        SESSION_STARTS,
        limit,
        `Too many new guest sessions came from your network this hour; try again in ${
          Math.ceil(wait / 60)
        } minutes.`,
        wait,
        now,
      );
    }
    tx.set(counter, started + 1, { expireIn: 2 * 3600 * 1000 });
    tx.set(keys.guestSessions(key), rec, { expireIn: UNUSED_GUEST_SESSION_SECONDS * 1000 });
  });
  return { cookie, session: await sessionOf(deps, key, rec) };
}

/** Whether a submitted CSRF token is the session's (compared in constant time). */
function csrfMatches(session: GuestSession, token: string | null | undefined): boolean {
  return typeof token === "string" && token.length > 0 && timingSafeEqual(token, session.csrf);
}
