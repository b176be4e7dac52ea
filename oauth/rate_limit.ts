/**
 * OAuth rate limits (spec "Limits", Tool-server/OAuth row), both scaled by
 * `BOARD_LIMIT_SCALE`:
 * - client registration: 10 per minute per network and 30 per minute on the whole
 *   instance, exact in KV (sliding minute), charged in the registration's own commit;
 * - every other OAuth operation: 300 requests per minute per network per operation,
 *   counted in memory per service instance (approximate and location-scoped, as the
 *   spec allows for edge limits). One limiter per `Deps`, never one per request.
 */
import type { Deps } from "../domain/deps.ts";
import {
  limitOf,
  type LimitSpec,
  MinuteCounter,
  wholeSeconds,
  WINDOW_EXPIRE_MS,
  windowAdmit,
} from "../domain/limits/mod.ts";
import { keys } from "../kv/keys.ts";
import type { Tx } from "../kv/tx.ts";

export const OAUTH_LIMITS = {
  registrations: {
    name: "oauth_client_registrations_per_minute",
    base: 10,
    scope: "network",
    window: "60s",
  },
  instanceRegistrations: {
    name: "instance_oauth_client_registrations_per_minute",
    base: 30,
    scope: "instance",
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
  constructor(
    readonly retryAfter: number,
    readonly limit: number,
    what: string,
    from = "from your network",
  ) {
    super(`Too many ${what} ${from}; retry in ${retryAfter} seconds.`);
  }
}

/**
 * Counts one client registration for `network` and for the whole instance (exact, in
 * KV) inside the registration's commit, or throws OAuthRateLimited. Call it only for a
 * registration that passed validation: a refused one counts nothing.
 */
export async function chargeClientRegistration(
  tx: Tx,
  deps: Deps,
  network: string,
): Promise<void> {
  const windows = [
    [keys.rateWindows("oauth_client_registrations", network), OAUTH_LIMITS.registrations],
    [keys.rateWindows("oauth_client_registrations", "*"), OAUTH_LIMITS.instanceRegistrations],
  ] as const;
  const staged: Array<[Deno.KvKey, unknown]> = [];
  for (const [key, spec] of windows) {
    const limit = limitOf(deps, spec);
    const r = windowAdmit((await tx.get(key)).value, deps.clock.nowMs(), limit);
    if (!r.ok) {
      throw new OAuthRateLimited(
        wholeSeconds(r.retryAfterMs),
        limit,
        "client registrations",
        spec.scope === "instance" ? "on this board" : undefined,
      );
    }
    staged.push([key, r.next]);
  }
  for (const [key, value] of staged) tx.set(key, value, { expireIn: WINDOW_EXPIRE_MS });
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
