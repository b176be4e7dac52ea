/**
 * The guest session cookie of the website: `board_guest`, HttpOnly, SameSite=Lax,
 * Path=/articles, Secure when the base URL is https. The session itself (KV record,
 * CSRF token, rotation, limits) lives in domain/articles/guest_sessions.ts.
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { BoardError } from "../../domain/errors.ts";
import {
  findGuestSession,
  type GuestSession,
  rotateGuestSession,
  startGuestSession,
} from "../../domain/articles/mod.ts";
import type { AppEnv } from "../env.ts";

export const GUEST_COOKIE = "board_guest";

/** The guest session, or why there is none (shown where the comment form would be). */
export type GuestState = { session: GuestSession; notice: null } | {
  session: null;
  notice: string;
};

function writeCookie(c: Context<AppEnv>, value: string, session: GuestSession): void {
  setCookie(c, GUEST_COOKIE, value, {
    httpOnly: true,
    sameSite: "Lax",
    secure: c.get("deps").config.baseUrl.startsWith("https:"),
    path: "/articles",
    maxAge: Math.max(1, session.expires_at - c.get("deps").clock.now()),
  });
}

/** The browser's live session, if its cookie names one. */
export async function currentGuest(c: Context<AppEnv>): Promise<GuestSession | null> {
  return await findGuestSession(c.get("deps"), getCookie(c, GUEST_COOKIE));
}

/**
 * True when a request is a top-level navigation: a person opening the page in a browser
 * tab or window, or a client that sends no fetch metadata at all (non-browser clients and
 * browsers too old to send it), unless it asks for an image. An `<img>`, `<iframe>`,
 * script or `fetch()` on another site's page sends `Sec-Fetch-Mode` other than `navigate`
 * or `Sec-Fetch-Dest` other than `document` (a page cannot remove these headers), so it
 * never starts a session and never spends the network's allowance of session starts.
 */
export function isTopLevelNavigation(headers: Headers): boolean {
  const mode = headers.get("sec-fetch-mode");
  const dest = headers.get("sec-fetch-dest");
  if (mode !== null || dest !== null) return mode === "navigate" && dest === "document";
  const accept = headers.get("accept") ?? "";
  return !(/\bimage\//i.test(accept) && !/\btext\/html\b/i.test(accept));
}

/**
 * The browser's session, starting one (and setting the cookie) when it has none and the
 * request is a top-level navigation. When its network may not start more sessions this
 * hour, or the page was not opened as a page, says so instead.
 */
export async function guestSession(c: Context<AppEnv>): Promise<GuestState> {
  const found = await currentGuest(c);
  if (found) return { session: found, notice: null };
  if (!isTopLevelNavigation(c.req.raw.headers)) {
    return {
      session: null,
      notice: "The comment form is available when this page is opened directly in a browser tab.",
    };
  }
  try {
    const { cookie, session } = await startGuestSession(c.get("deps"), c.get("network"));
    writeCookie(c, cookie, session);
    return { session, notice: null };
  } catch (e) {
    if (e instanceof BoardError && e.code === "RATE_LIMITED") {
      return { session: null, notice: `The comment form is not available: ${e.message}` };
    }
    throw e;
  }
}

/**
 * After the session gained something only it may see (a comment it posted): a new cookie
 * for the same session, so a cookie value known to anyone else (planted in this browser,
 * say) no longer names it.
 */
export async function rotateGuest(c: Context<AppEnv>, session: GuestSession): Promise<void> {
  const rotated = await rotateGuestSession(c.get("deps"), session);
  if (rotated) writeCookie(c, rotated.cookie, rotated.session);
}
