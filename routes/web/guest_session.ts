/**
 * The guest session cookie of the website. Over https it is **`__Host-board_guest`** with
 * `Secure; Path=/` (the prefix makes browsers refuse it unless it was set by this very host
 * over https, without a `Domain`: a sibling subdomain or a plain-http page cannot plant one);
 * over http (development) it is `board_guest` with `Path=/articles`. Both are HttpOnly and
 * SameSite=Lax. The session itself (signed or stored cookie, CSRF token, rotation) lives in
 * domain/articles/guest_sessions.ts.
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import {
  findGuestSession,
  type GuestCookie,
  type GuestSession,
  issueGuestSession,
  readGuestCookie,
} from "../../domain/articles/mod.ts";
import { asksForImage } from "../accept.ts";
import type { AppEnv } from "../env.ts";

/** The cookie's name over http (development). */
const GUEST_COOKIE = "board_guest";
/** The cookie's name where the board is served over https. */
const SECURE_GUEST_COOKIE = "__Host-board_guest";

/** The cookie's name and path for this deployment (`__Host-` needs https and `Path=/`). */
function guestCookie(c: Context<AppEnv>): { name: string; path: string; secure: boolean } {
  return c.get("deps").config.baseUrl.startsWith("https:")
    ? { name: SECURE_GUEST_COOKIE, path: "/", secure: true }
    : { name: GUEST_COOKIE, path: "/articles", secure: false };
}

/** The guest session, or why there is none (shown where the comment form would be). */
export type GuestState = { session: GuestSession; notice: null } | {
  session: null;
  notice: string;
};

/** Sets the guest cookie to `value`, to last as long as `session`. */
export function writeGuestCookie(c: Context<AppEnv>, value: string, session: GuestSession): void {
  const { name, path, secure } = guestCookie(c);
  setCookie(c, name, value, {
    httpOnly: true,
    sameSite: "Lax",
    secure,
    path,
    maxAge: Math.max(1, session.expires_at - c.get("deps").clock.now()),
  });
}

/** The browser's live session, if its cookie names one. */
export async function currentGuest(c: Context<AppEnv>): Promise<GuestSession | null> {
  return await findGuestSession(c.get("deps"), guestCookieValue(c));
}

/** The value of the browser's guest cookie, if it sent one (not checked). */
export function guestCookieValue(c: Context<AppEnv>): string | undefined {
  return getCookie(c, guestCookie(c).name);
}

/** The browser's guest cookie when the server issued it (`readGuestCookie`), else null. */
export async function issuedGuestCookie(c: Context<AppEnv>): Promise<GuestCookie | null> {
  return await readGuestCookie(c.get("deps"), guestCookieValue(c));
}

/**
 * True when a request is a top-level navigation: a person opening the page in a browser
 * tab or window, or a client that sends no fetch metadata at all (non-browser clients and
 * browsers too old to send it), unless it asks for an image. An `<img>`, `<iframe>`,
 * script or `fetch()` on another site's page sends `Sec-Fetch-Mode` other than `navigate`
 * or `Sec-Fetch-Dest` other than `document` (a page cannot remove these headers), so it
 * never starts a session.
 */
export function isTopLevelNavigation(headers: Headers): boolean {
  const mode = headers.get("sec-fetch-mode");
  const dest = headers.get("sec-fetch-dest");
  if (mode !== null || dest !== null) return mode === "navigate" && dest === "document";
  return !asksForImage(headers.get("accept"));
}

/**
 * A session for a browser already known to have no live one (`currentGuest`), started (and
 * its cookie set) when the request is a top-level navigation. When the page was not opened as
 * a page, says so instead.
 */
export async function newGuestSession(c: Context<AppEnv>): Promise<GuestState> {
  if (!isTopLevelNavigation(c.req.raw.headers)) {
    return {
      session: null,
      notice: "The comment form is available when this page is opened directly in a browser tab.",
    };
  }
  // Issuing a session writes nothing: it is stored when it first posts a comment.
  const { cookie, session } = await issueGuestSession(c.get("deps"));
  writeGuestCookie(c, cookie, session);
  return { session, notice: null };
}
