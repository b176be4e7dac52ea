/**
 * Guest browser sessions of the human website (docs/website.md "Guest sessions"): a
 * random id held in a cookie, stored in KV only as its SHA-256, with a per-session CSRF
 * token and a fixed lifetime. Starting sessions is limited per network (an exact counter).
 */
import { keys } from "../kv/keys.ts";
import { transact } from "../kv/tx.ts";
import { base64url } from "./api_keys.ts";
import type { Deps } from "./deps.ts";
import { BoardError } from "./errors.ts";
import { limitScale } from "./rate_limits.ts";
import { sha256Hex, timingSafeEqual } from "./text.ts";

/** A session lasts 30 days from its start (not extended by use). */
export const GUEST_SESSION_SECONDS = 30 * 86_400;
/** New guest sessions per network per fixed clock hour (times BOARD_LIMIT_SCALE). */
export const SESSION_STARTS_PER_HOUR = 100;

interface GuestSessionRecord {
  created_at: number;
  expires_at: number;
  csrf: string;
}

/** A live guest session. `id` is the SHA-256 of the cookie value: what comments store. */
export interface GuestSession {
  id: string;
  csrf: string;
  created_at: number;
  expires_at: number;
}

const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

function randomToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** The session a cookie value names, or null when unknown, malformed or expired. */
export async function findGuestSession(
  deps: Deps,
  cookieValue: string | undefined,
): Promise<GuestSession | null> {
  if (!cookieValue || !COOKIE_VALUE.test(cookieValue)) return null;
  const id = await sha256Hex(cookieValue);
  const rec = (await deps.kv.get<GuestSessionRecord>(keys.guestSessions(id))).value;
  if (!rec || rec.expires_at <= deps.clock.now()) return null;
  return { id, ...rec };
}

/**
 * Starts a session for a browser on `network`: returns the cookie value (shown only to
 * that browser) and the session. Throws 429 RATE_LIMITED (with the seconds to wait) when
 * the network has started its hourly allowance of sessions.
 */
export async function startGuestSession(
  deps: Deps,
  network: string,
): Promise<{ cookie: string; session: GuestSession }> {
  const cookie = randomToken();
  const id = await sha256Hex(cookie);
  const now = deps.clock.now();
  const hour = now - (now % 3600);
  const limit = Math.max(1, Math.round(SESSION_STARTS_PER_HOUR * limitScale(deps)));
  const rec: GuestSessionRecord = {
    created_at: now,
    expires_at: now + GUEST_SESSION_SECONDS,
    csrf: randomToken(),
  };
  await transact(deps.kv, async (tx) => {
    const counter = keys.guestSessionStarts(network, hour);
    const started = (await tx.get<number>(counter)).value ?? 0;
    if (started >= limit) {
      const wait = hour + 3600 - now;
      throw new BoardError(
        "RATE_LIMITED",
        `Too many new guest sessions came from your network this hour; try again in ${
          Math.ceil(wait / 60)
        } minutes.`,
        { limit_name: "network_guest_sessions_per_hour", limit, scope: "network", window: "1h" },
        wait,
      );
    }
    tx.set(counter, started + 1, { expireIn: 2 * 3600 * 1000 });
    tx.set(keys.guestSessions(id), rec, { expireIn: GUEST_SESSION_SECONDS * 1000 });
  });
  return { cookie, session: { id, ...rec } };
}

/** Whether a submitted CSRF token is the session's (compared in constant time). */
export function csrfMatches(session: GuestSession, token: string | null | undefined): boolean {
  return typeof token === "string" && token.length > 0 && timingSafeEqual(token, session.csrf);
}
