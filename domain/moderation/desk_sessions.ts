/**
 * Sessions of the moderator desk, the browser side of moderation (docs/website.md "Moderator
 * desk"). A person signs in with the moderator key once; the browser then holds only a random
 * session id in a cookie. KV stores the SHA-256 of that id (never the id, never the key) with a
 * fixed 30-minute lifetime, so every service process sharing the store knows the session and
 * nothing in memory decides anything. Each session's CSRF token is an HMAC of its identity
 * under the board secret (never stored). A session also records an HMAC of the moderator key it
 * was opened with: once the operator changes `BOARD_MODERATOR_KEY`, older sessions end.
 */
import { keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";
import { base64url, secretMac } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { sha256Hex, timingSafeEqual } from "../hashing.ts";
import { checkModeratorKey, moderatorUnauthorized } from "./moderator_key.ts";

/** A desk session lasts 30 minutes from sign-in (not extended by use). */
export const MOD_DESK_SESSION_SECONDS = 30 * 60;

interface DeskSessionRecord {
  created_at: number;
  expires_at: number;
  /** HMAC of the moderator key the session was opened with. */
  key_mac: string;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    modDeskSessions: DeskSessionRecord;
  }
}

/** A live desk session. */
export interface DeskSession {
  /** The SHA-256 of the cookie value: the session's KV key. */
  key: string;
  /** The session's form token (derived, never stored). */
  csrf: string;
  created_at: number;
  expires_at: number;
}

const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

/** HMAC-SHA-256 of `text` under the board secret, base64url. */
const mac = secretMac;

/** A fresh random value of 32 bytes (cookie values and sign-in nonces). */
export function randomDeskToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

async function sessionOf(deps: Deps, key: string, rec: DeskSessionRecord): Promise<DeskSession> {
  return {
    key,
    csrf: await mac(deps, `mod-desk-csrf:${key}`),
    created_at: rec.created_at,
    expires_at: rec.expires_at,
  };
}

/**
 * The sign-in form's token for the browser holding `nonce` (a short-lived cookie set with the
 * form): the sign-in form is a form too, so it carries a token only that browser can send.
 */
export async function signInToken(deps: Deps, nonce: string): Promise<string> {
  return await mac(deps, `mod-desk-sign-in:${nonce}`);
}

/** Whether a sign-in form token belongs to `nonce` (constant time). */
export async function signInTokenMatches(
  deps: Deps,
  nonce: string | undefined,
  token: string | null,
): Promise<boolean> {
  if (!nonce || !COOKIE_VALUE.test(nonce) || !token) return false;
  return timingSafeEqual(token, await signInToken(deps, nonce));
}

/**
 * Opens a desk session for the holder of the moderator key. The key is checked exactly as on
 * `/mod` (same per-network throttle of wrong keys: 401 UNAUTHORIZED, then 429 RATE_LIMITED).
 * Returns the cookie value (shown only to that browser) and the session.
 */
export async function signInModerator(
  deps: Deps,
  network: string,
  presented: string,
): Promise<{ cookie: string; session: DeskSession }> {
  const expected = deps.config.moderatorKey;
  if (!expected) throw moderatorUnauthorized();
  await checkModeratorKey(deps, network, presented, expected);
  const cookie = randomDeskToken();
  const key = await sha256Hex(cookie);
  const now = deps.clock.now();
  const rec: DeskSessionRecord = {
    created_at: now,
    expires_at: now + MOD_DESK_SESSION_SECONDS,
    key_mac: await mac(deps, `mod-key:${expected}`),
  };
  await transact(deps.kv, (tx) => {
    tx.set(keys.modDeskSessions(key), rec, { expireIn: MOD_DESK_SESSION_SECONDS * 1000 });
    return Promise.resolve();
  });
  return { cookie, session: await sessionOf(deps, key, rec) };
}

/**
 * The session a cookie value names, or null when unknown, malformed, expired (by the
 * injected clock), or opened with a moderator key that is no longer the configured one.
 */
export async function findModeratorSession(
  deps: Deps,
  cookieValue: string | undefined,
): Promise<DeskSession | null> {
  const expected = deps.config.moderatorKey;
  if (!expected || !cookieValue || !COOKIE_VALUE.test(cookieValue)) return null;
  const key = await sha256Hex(cookieValue);
  const rec = (await deps.kv.get(keys.modDeskSessions(key))).value;
  if (!rec || rec.expires_at <= deps.clock.now()) return null;
  if (!timingSafeEqual(rec.key_mac, await mac(deps, `mod-key:${expected}`))) return null;
  return await sessionOf(deps, key, rec);
}

/** Ends a session (sign-out): its cookie names nothing from now on, in every process. */
export async function endModeratorSession(deps: Deps, session: DeskSession): Promise<void> {
  await transact(deps.kv, (tx) => {
    tx.delete(keys.modDeskSessions(session.key));
    return Promise.resolve();
  });
}

/** Whether a submitted form token is the session's (constant time). */
export function deskCsrfMatches(session: DeskSession, token: string | null | undefined): boolean {
  return typeof token === "string" && token.length > 0 && timingSafeEqual(token, session.csrf);
}
