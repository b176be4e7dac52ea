/**
 * The guest session cookie of the website: `board_guest`, HttpOnly, SameSite=Lax,
 * Path=/articles, Secure when the base URL is https. The session itself (KV record,
 * CSRF token, limits) lives in domain/guest_sessions.ts.
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { BoardError } from "../../domain/errors.ts";
import {
  findGuestSession,
  GUEST_SESSION_SECONDS,
  type GuestSession,
  startGuestSession,
} from "../../domain/guest_sessions.ts";
import type { AppEnv } from "../env.ts";

export const GUEST_COOKIE = "board_guest";

/** The guest session, or why there is none (shown where the comment form would be). */
export type GuestState = { session: GuestSession; notice: null } | {
  session: null;
  notice: string;
};

function writeCookie(c: Context<AppEnv>, value: string): void {
  setCookie(c, GUEST_COOKIE, value, {
    httpOnly: true,
    sameSite: "Lax",
    secure: c.get("deps").config.baseUrl.startsWith("https:"),
    path: "/articles",
    maxAge: GUEST_SESSION_SECONDS,
  });
}

/** The browser's live session, if its cookie names one. */
export async function currentGuest(c: Context<AppEnv>): Promise<GuestSession | null> {
  return await findGuestSession(c.get("deps"), getCookie(c, GUEST_COOKIE));
}

/**
 * The browser's session, starting one (and setting the cookie) when it has none. When
 * its network may not start more sessions this hour, says so instead.
 */
export async function guestSession(c: Context<AppEnv>): Promise<GuestState> {
  const found = await currentGuest(c);
  if (found) return { session: found, notice: null };
  try {
    const { cookie, session } = await startGuestSession(c.get("deps"), c.get("network"));
    writeCookie(c, cookie);
    return { session, notice: null };
  } catch (e) {
    if (e instanceof BoardError && e.code === "RATE_LIMITED") {
      return { session: null, notice: `The comment form is not available: ${e.message}` };
    }
    throw e;
  }
}
