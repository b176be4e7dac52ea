/**
 * The cookies and request checks of the moderator desk (docs/website.md "Moderator desk"):
 * the session cookie (`__Host-board_mod`, Secure, Path=/ when the board is served over
 * HTTPS; `board_mod` with Path=/mod/desk otherwise), the sign-in form's nonce cookie, both
 * HttpOnly and SameSite=Strict. The sessions themselves live in
 * domain/moderation/desk_sessions.ts.
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import {
  type DeskSession,
  findModeratorSession,
  MOD_DESK_SESSION_SECONDS,
} from "../../domain/moderation/mod.ts";
import type { AppEnv } from "../env.ts";

/** Where the desk lives. */
export const DESK_PATH = "/mod/desk";
/** How long the sign-in form's nonce cookie (and so the form) lasts. */
const SIGN_IN_FORM_SECONDS = 10 * 60;

function secure(c: Context<AppEnv>): boolean {
  return c.get("deps").config.baseUrl.startsWith("https:");
}

/** The cookie names and path of this board (the `__Host-` prefix needs HTTPS and Path=/). */
function deskCookies(c: Context<AppEnv>) {
  return secure(c)
    ? { session: "__Host-board_mod", signIn: "__Host-board_mod_sign_in", path: "/" }
    : { session: "board_mod", signIn: "board_mod_sign_in", path: DESK_PATH };
}

function cookieOptions(c: Context<AppEnv>, maxAge: number) {
  return {
    httpOnly: true,
    sameSite: "Strict" as const,
    secure: secure(c),
    path: deskCookies(c).path,
    maxAge,
  };
}

/** Sets the session cookie after a sign-in. */
export function writeSessionCookie(c: Context<AppEnv>, value: string, session: DeskSession) {
  const left = Math.max(1, session.expires_at - c.get("deps").clock.now());
  setCookie(
    c,
    deskCookies(c).session,
    value,
    cookieOptions(c, Math.min(left, MOD_DESK_SESSION_SECONDS)),
  );
}

/** Removes the session cookie (sign-out, or a cookie that names no live session). */
export function clearSessionCookie(c: Context<AppEnv>) {
  const { session, path } = deskCookies(c);
  deleteCookie(c, session, { path, secure: secure(c) });
}

/** The sign-in nonce this browser holds, if any. */
export function signInNonce(c: Context<AppEnv>): string | undefined {
  return getCookie(c, deskCookies(c).signIn);
}

/** Sets the sign-in nonce cookie (with the sign-in form). */
export function writeSignInNonce(c: Context<AppEnv>, nonce: string) {
  setCookie(c, deskCookies(c).signIn, nonce, cookieOptions(c, SIGN_IN_FORM_SECONDS));
}

/** Removes the sign-in nonce cookie (after a sign-in). */
export function clearSignInNonce(c: Context<AppEnv>) {
  const { signIn, path } = deskCookies(c);
  deleteCookie(c, signIn, { path, secure: secure(c) });
}

/** What the browser's session cookie says: a live session, an ended one, or none at all. */
type DeskState = { session: DeskSession; ended: false } | { session: null; ended: boolean };

/**
 * Whether the browser sent a desk session cookie at all (not checked): a page may look up
 * what a live session would show while the session is checked; without one it reads nothing.
 */
export function hasDeskCookie(c: Context<AppEnv>): boolean {
  return getCookie(c, deskCookies(c).session) !== undefined;
}

/** The browser's desk session (`ended` when it sent a cookie that names no live session). */
export async function currentDesk(c: Context<AppEnv>): Promise<DeskState> {
  const value = getCookie(c, deskCookies(c).session);
  const session = await findModeratorSession(c.get("deps"), value);
  if (session) return { session, ended: false };
  return { session: null, ended: value !== undefined };
}

/** A fresh Idempotency-Key for one form of the desk (a double-click replays, never repeats). */
export function formKey(): string {
  return `desk-${crypto.randomUUID()}`;
}
