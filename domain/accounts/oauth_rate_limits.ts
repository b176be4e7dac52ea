/**
 * OAuth rate limits (spec "Limits", Tool-server/OAuth row), both scaled by
 * `BOARD_LIMIT_SCALE`:
 * - client registration: 10 per minute per network, and 120 per minute on the whole
 *   instance counting only registrations that have not completed an authorization (a
 *   client's first code exchange gives its slot back), exact in KV (sliding minute),
 *   charged in the registration's own commit. Registrations from another site's page
 *   (a foreign `Origin`) count in allowances of their own, per network and instance-wide
 *   (the same sizes), so such a page never closes registration for anyone else;
 * - every other OAuth operation: 300 requests per minute per network per operation,
 *   counted in memory per service instance (approximate and location-scoped, as the
 *   spec allows for edge limits). One limiter per `Deps`, never one per request;
 * - refreshes: 200 per connection per UTC day, exact, counted in the connection's grant
 *   record by the refresh's own commit (no entry of its own);
 * - new clients: 20 clients a UTC day may complete their first authorization with one account,
 *   exact, counted in the account's grant head by the code exchange's own commit (no entry of
 *   its own). A client that completed an authorization is kept as long as its connections, so
 *   this bounds what one account keeps alive;
 * - new clients of a network: 100 consents a UTC day given from one network to applications
 *   that never completed an authorization, exact, charged in the consent's own commit. Every
 *   client is activated through such a consent, so this bounds what one network keeps alive
 *   however many accounts share its clients.
 */
import type { Deps } from "../deps.ts";
import { nextUtcMidnight, utcDay } from "../clock.ts";
import { secondsText } from "../text.ts";
import {
  checkDailyAllowance,
  DAY_COUNTER_MS,
  limitOf,
  type LimitSpec,
  limitSpec,
  MinuteCounter,
  wholeSeconds,
  WINDOW_EXPIRE_MS,
  windowAdmit,
  windowRefund,
} from "../limits/mod.ts";
import { keys } from "../../kv/keys.ts";
import type { KeyValues, ValueOf } from "../../kv/key_values.ts";
import type { Tx } from "../../kv/tx.ts";

const OAUTH_LIMITS = {
  registrations: limitSpec("oauth_client_registrations_per_minute", 10, "network", "60s"),
  /** Registrations that have not completed an authorization (first code exchange). */
  instanceRegistrations: limitSpec(
    "instance_pending_oauth_client_registrations_per_minute",
    120,
    "instance",
    "60s",
  ),
  operations: limitSpec("oauth_requests_per_minute", 300, "network", "60s"),
  /** OAuth requests of the networks beyond those an instance counts one by one. */
  uncountedNetworks: limitSpec(
    "instance_oauth_requests_of_uncounted_networks_per_minute",
    6000,
    "instance",
    "60s",
  ),
  refreshes: limitSpec("oauth_connection_refreshes_per_day", 200, "connection", "utc_day"),
  newClients: limitSpec("oauth_new_clients_per_account_per_day", 20, "account", "utc_day"),
  networkNewClients: limitSpec(
    "oauth_new_clients_per_network_per_day",
    100,
    "network",
    "utc_day",
  ),
} as const satisfies Record<string, LimitSpec>;

/** A refused request: seconds until a retry can succeed. */
export class OAuthRateLimited extends Error {
  constructor(
    readonly retryAfter: number,
    readonly limit: number,
    what: string,
    from = "from your network",
  ) {
    super(`Too many ${what} ${from}; retry in ${secondsText(retryAfter)}.`);
  }
}

/** Where a registration is counted: its allowance network, and whether it is cross-origin. */
export interface RegistrationAllowance {
  /** The client network, or its cross-origin allowance (`allowanceNetwork`). */
  network: string;
  /** Sent from another site's page: counted in the cross-origin instance window. */
  crossOrigin: boolean;
}

/** The instance-wide window of registrations not yet completed (one per origin kind). */
function instanceRegistrationKey(crossOrigin: boolean) {
  return keys.rateWindows("oauth_client_registrations", crossOrigin ? "* cross-origin" : "*");
}

/**
 * Counts one client registration for its network and for the whole instance (exact, in
 * KV) inside the registration's commit, or throws OAuthRateLimited. Call it only for a
 * registration that passed validation: a refused one counts nothing. `alsoRead` is read in
 * the same batch as the two windows (the registration's own collision check), and its
 * entry is answered.
 */
export async function chargeClientRegistration<K extends Deno.KvKey>(
  tx: Tx,
  deps: Deps,
  allowance: RegistrationAllowance,
  alsoRead: K,
): Promise<Deno.KvEntryMaybe<ValueOf<K>>> {
  const windows = [
    [
      keys.rateWindows("oauth_client_registrations", allowance.network),
      OAUTH_LIMITS.registrations,
    ],
    [instanceRegistrationKey(allowance.crossOrigin), OAUTH_LIMITS.instanceRegistrations],
  ] as const;
  const [also, network, instance] = await tx.getMany([alsoRead, windows[0][0], windows[1][0]]);
  const staged: Array<[Deno.KvKey, unknown]> = [];
  for (const [i, stored] of [network, instance].entries()) {
    const [key, spec] = windows[i];
    const limit = limitOf(deps, spec);
    const r = windowAdmit(stored.value, deps.clock.nowMs(), limit);
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
  return also;
}

/**
 * The instance-wide window a client's first code exchange gives its registration back to, or
 * null when there is nothing to give back (the client completed an authorization before, or
 * its registration has left the window). A code exchange reads it in its read batch.
 */
function refundWindowKey(
  client: { created_at: number; activated_at: number | null; cross_origin?: boolean },
  nowMs: number,
) {
  if (client.activated_at !== null || client.created_at <= Math.floor(nowMs / 1000) - 60) {
    return null;
  }
  return instanceRegistrationKey(client.cross_origin === true);
}

/** Both instance-wide windows a first code exchange may give back to (`refundWindowKey`). */
export function refundWindowKeys(): Deno.KvKey[] {
  return [instanceRegistrationKey(false), instanceRegistrationKey(true)];
}

/**
 * Gives a client's registration back to the instance-wide window when the client
 * completes its first authorization (call it in the commit of its first code exchange,
 * with `activatedAt` the stored `activated_at`): the instance cap then holds only
 * registrations that never complete a flow. Reads the window only while the registration
 * is still inside it; `read` is the window entry when the commit read it already (the key
 * `refundWindowKey` named).
 */
export async function refundCompletedRegistration(
  tx: Tx,
  deps: Deps,
  client: { created_at: number; activated_at: number | null; cross_origin?: boolean },
  read: Deno.KvEntryMaybe<KeyValues["rateWindows"]> | null = null,
): Promise<void> {
  const nowMs = deps.clock.nowMs();
  const key = refundWindowKey(client, nowMs);
  if (key === null) return;
  const sameKey = read !== null && JSON.stringify(read.key) === JSON.stringify(key);
  const entry = sameKey ? read : await tx.get(key);
  const next = windowRefund(entry.value, client.created_at, nowMs);
  if (next) tx.set(key, next, { expireIn: WINDOW_EXPIRE_MS });
}

const counters = new WeakMap<Deps, MinuteCounter>();

/**
 * Operation-and-network pairs an instance counts one by one in a minute (about 80 bytes of
 * memory each). Requests from further networks that minute share one allowance
 * (`uncountedNetworks`): requests from ever new networks (one per IPv6 /64 is cheap) cannot
 * grow the counter without bound.
 */
export const OAUTH_NETWORKS_COUNTED = 20_000;

/**
 * Admits one request of an OAuth `operation` (metadata, authorize, token, revoke, …) from
 * `network`, in memory, or throws OAuthRateLimited.
 */
export function admitOAuthRequest(deps: Deps, operation: string, network: string): void {
  let counter = counters.get(deps);
  if (!counter) counters.set(deps, counter = new MinuteCounter());
  const nowMs = deps.clock.nowMs();
  const own = `${operation} ${network}`;
  const counted = counter.counts(own, nowMs, OAUTH_NETWORKS_COUNTED);
  const [key, spec] = counted
    ? [own, OAUTH_LIMITS.operations]
    : [`${operation} *`, OAUTH_LIMITS.uncountedNetworks];
  const limit = limitOf(deps, spec);
  const wait = counter.wait(key, nowMs, limit);
  if (wait > 0) {
    const from = counted ? undefined : "from networks this instance is not counting apart";
    throw new OAuthRateLimited(wholeSeconds(wait), limit, `${operation} requests`, from);
  }
  counter.add(key, nowMs);
}

/** A connection's refresh count, as its grant record keeps it. */
interface RefreshCount {
  refresh_day?: number;
  refreshes_that_day?: number;
}

/**
 * Counts one refresh of a connection whose grant holds `count`, at `now` (Unix seconds):
 * returns the count the renewed grant stores, or throws OAuthRateLimited (until the next
 * UTC midnight) when the connection has used its refreshes of the UTC day.
 */
export function countRefresh(deps: Deps, count: RefreshCount, now: number): Required<RefreshCount> {
  const used = usedToday(count.refresh_day, count.refreshes_that_day, now);
  const limit = limitOf(deps, OAUTH_LIMITS.refreshes);
  if (used >= limit) {
    throw dailyLimitReached(now, limit, "token refreshes", "this connection", "it may refresh");
  }
  return { refresh_day: utcDay(now), refreshes_that_day: used + 1 };
}

/** How many of a daily count kept as (`day`, `count`) were used on the UTC day of `now`. */
function usedToday(day: number | undefined, count: number | undefined, now: number): number {
  return day === utcDay(now) ? count ?? 0 : 0;
}

/** The next UTC midnight after `now`, as an RFC 3339 time in whole seconds. */
function nextMidnightText(now: number): string {
  return new Date(nextUtcMidnight(now) * 1000).toISOString().replace(".000Z", "Z");
}

/** The refusal of a daily OAuth allowance, open again at the next UTC midnight. */
function dailyLimitReached(
  now: number,
  limit: number,
  what: string,
  whose: string,
  again: string,
): OAuthRateLimited {
  const at = nextMidnightText(now);
  return new OAuthRateLimited(
    nextUtcMidnight(now) - now,
    limit,
    what,
    `for ${whose} this UTC day (${limit} at most; ${again} again from ${at})`,
  );
}

/** An account's count of new clients, as its grant head keeps it. */
export interface NewClientCount {
  new_clients_day?: number;
  new_clients?: number;
}

/**
 * Counts a client completing its first authorization (its first code exchange) with an
 * account whose grant head holds `count`: returns the count the head stores, or throws
 * OAuthRateLimited (until the next UTC midnight) when the account has taken its new clients
 * of the UTC day. Clients it was connected with before are not counted again.
 */
export function countNewClient(
  deps: Deps,
  count: NewClientCount,
  now: number,
): Required<NewClientCount> {
  const used = usedToday(count.new_clients_day, count.new_clients, now);
  const limit = limitOf(deps, OAUTH_LIMITS.newClients);
  if (used >= limit) {
    throw dailyLimitReached(
      now,
      limit,
      "new applications connected",
      "this account",
      "a new application may connect",
    );
  }
  return { new_clients_day: utcDay(now), new_clients: used + 1 };
}

/**
 * Today's count of consents given from `network` to never-activated clients (read it in the
 * consent's batch).
 */
export function networkNewClientsKey(network: string, now: number) {
  return keys.quotaUsage("oauth_network_new_clients", network, utcDay(now));
}

/**
 * Counts, in the consent's commit, a consent given from `network` to `client` when the client
 * never completed an authorization (others are not counted): throws 429 DAILY_LIMIT (until
 * the next UTC midnight) when the network has given its consents of the UTC day, else stages
 * the count. `used` is today's count as read (`networkNewClientsKey`).
 */
export function countNetworkNewClient(
  tx: Tx,
  deps: Deps,
  network: string,
  client: { activated_at: number | null },
  used: number | null,
  now: number,
): void {
  if (client.activated_at !== null) return;
  checkDailyAllowance(
    deps,
    OAUTH_LIMITS.networkNewClients,
    used ?? 0,
    now,
    (limit) =>
      `Your network has connected ${limit} new applications this UTC day (an application counts until it completes its first authorization); a new application may connect again from ${
        nextMidnightText(now)
      }. Applications connected before are not affected.`,
  );
  tx.set(networkNewClientsKey(network, now), (used ?? 0) + 1, { expireIn: DAY_COUNTER_MS });
}
