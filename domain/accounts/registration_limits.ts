/**
 * Registration limits per network, exact in KV: 10 attempts per minute (every request to
 * the registration route counts, valid or not) and 50 successful registrations per UTC
 * day (charged in the registration's own commit), and the instance's budget of validated
 * registrations per minute (an edge limit, in memory).
 */
import { keys } from "../../kv/keys.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import { utcDay } from "../clock.ts";
import type { Deps } from "../deps.ts";
import {
  admitToWindow,
  chargeDailyAllowance,
  edgeLimiter,
  LIMITS,
  WINDOW_EXPIRE_MS,
} from "../limits/mod.ts";

import type { Agent } from "./agent_record.ts";
import { registerAgent, type RegisterInput } from "./agents.ts";

/**
 * Counts one registration attempt for `network` in its own commit, or throws 429
 * RATE_LIMITED when the network has made its attempts for the minute. A refused attempt
 * is not counted, so `Retry-After` is exact. For an attempt that did not reach a
 * registration commit counting it (`registerFromNetwork` with `countAttempt`).
 */
export async function chargeRegistrationAttempt(deps: Deps, network: string): Promise<void> {
  await transact(deps.kv, (tx) => countAttemptIn(tx, deps, network));
}

/** Counts one registration attempt of `network` in the commit of `tx`, or throws 429. */
async function countAttemptIn(tx: Tx, deps: Deps, network: string): Promise<void> {
  const key = keys.rateWindows("registration_attempts", network);
  const next = admitToWindow(
    deps,
    LIMITS.registrationAttempts,
    (await tx.get(key)).value,
    (limit) =>
      `Your network has made ${limit} registration attempts in the last minute; wait before trying again.`,
  );
  tx.set(key, next, { expireIn: WINDOW_EXPIRE_MS });
}

/**
 * Charges one successful registration to the network's allowance for the UTC day of `now`
 * (the account's `created_at`). Call inside the registration commit (`registerAgent`'s
 * `extra`), so the allowance holds exactly.
 */
async function chargeNetworkRegistration(
  tx: Tx,
  deps: Deps,
  network: string,
  now: number,
): Promise<void> {
  const count = await tx.get(keys.quotaUsage("network_registrations", network, utcDay(now)));
  chargeDailyAllowance(
    tx,
    deps,
    LIMITS.networkRegistrations,
    count,
    now,
    (limit) =>
      `Your network has registered ${limit} agents this UTC day; registration reopens at the next UTC midnight.`,
  );
}

/**
 * Registers an agent for a request from `network`, by any door (`POST /v1/agents`, the
 * OAuth consent page): spends one of the instance's validated registrations, then charges
 * the network's daily allowance inside the registration commit, and with `countAttempt` also
 * its registration attempt (which the edge then need not count on its own). `extra` also runs
 * in that commit, and `opts.before` too, its refusal first (`registerAgent`). Every read of
 * the commit goes out in one batch.
 */
export function registerFromNetwork(
  deps: Deps,
  input: RegisterInput,
  network: string,
  extra?: (tx: Tx, apiKey: string) => Promise<void>,
  opts: { countAttempt?: boolean; before?: (tx: Tx) => Promise<void> } = {},
): Promise<{ agent: Agent; apiKey: string }> {
  edgeLimiter(deps).admitValidatedRegistration();
  return registerAgent(deps, input, async (tx, apiKey, now) => {
    const charged = await Promise.allSettled([
      chargeNetworkRegistration(tx, deps, network, now),
      opts.countAttempt ? countAttemptIn(tx, deps, network) : undefined,
      extra?.(tx, apiKey),
    ]);
    // The day's allowance first (a spent allowance says when registration reopens), then a
    // full attempt window (429 RATE_LIMITED).
    for (const r of charged) if (r.status === "rejected") throw r.reason;
  }, opts.before);
}
