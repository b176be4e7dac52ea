/**
 * OAuth rate limits (spec "Limits", Tool-server/OAuth row), both scaled by
 * `BOARD_LIMIT_SCALE`:
 * - client registration: 10 per minute per network, exact in KV (sliding minute);
 * - every other OAuth operation: 300 requests per minute per network per operation,
 *   counted in memory per service instance (approximate and location-scoped, as the
 *   spec allows for edge limits). One limiter per `Deps`, never one per request.
 */
import type { Deps } from "../domain/deps.ts";
import { MinuteCounter } from "../domain/limits/edge.ts";
import {
  limitOf,
  type LimitSpec,
  wholeSeconds,
  WINDOW_EXPIRE_MS,
  windowAdmit,
} from "../domain/limits/rates.ts";
import { keys } from "../kv/keys.ts";
import { transact } from "../kv/tx.ts";

export const OAUTH_LIMITS = {
  registrations: {
    name: "oauth_client_registrations_per_minute",
    base: 10,
    scope: "network",
    window: "60s",
  },
  operations: {
    name: "oauth_requests_per_minute",
    base: 300,
    scope: "network",
    window: "60s",
  },
} as const satisfies Record<string, LimitSpec>;

/** A refused request: seconds until a retry can succeed. */
export class OAuthRateLimited extends Error {
  constructor(readonly retryAfter: number, readonly limit: number, what: string) {
    super(`Too many ${what} from your network; retry in ${retryAfter} seconds.`);
  }
}

/** Counts one client registration for `network` (exact, in KV) or throws OAuthRateLimited. */
export async function chargeClientRegistration(deps: Deps, network: string): Promise<void> {
  const key = keys.rateWindows("oauth_client_registrations", network);
  const limit = limitOf(deps, OAUTH_LIMITS.registrations);
  await transact(deps.kv, async (tx) => {
    const r = windowAdmit((await tx.get(key)).value, deps.clock.nowMs(), limit);
    if (!r.ok) {
      throw new OAuthRateLimited(wholeSeconds(r.retryAfterMs), limit, "client registrations");
    }
    tx.set(key, r.next, { expireIn: WINDOW_EXPIRE_MS });
  });
}

const counters = new WeakMap<Deps, MinuteCounter>();

/**
 * Admits one request of an OAuth `operation` (metadata, authorize, token, revoke, …) from
 * `network`, in memory, or throws OAuthRateLimited.
 */
export function admitOAuthRequest(deps: Deps, operation: string, network: string): void {
  let counter = counters.get(deps);
  if (!counter) counters.set(deps, counter = new MinuteCounter());
  const nowMs = deps.clock.nowMs();
  const limit = limitOf(deps, OAUTH_LIMITS.operations);
  const key = `${operation} ${network}`;
  const wait = counter.wait(key, nowMs, limit);
  if (wait > 0) throw new OAuthRateLimited(wholeSeconds(wait), limit, `${operation} requests`);
  counter.add(key, nowMs);
}
