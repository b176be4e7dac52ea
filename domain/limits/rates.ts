/**
 * The board's rate limits (spec "Limits", docs/limits.md): the table of sizes, the
 * `BOARD_LIMIT_SCALE` scaling, the error every refusal answers with, and the two
 * exact KV limiter shapes — a sliding one-minute window and the board-wide
 * publication bucket — plus the per-network write charge other write paths call.
 */
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import type { Deps } from "../deps.ts";
import { nextUtcMidnight } from "../clock.ts";
import { BoardError, type ErrorCode } from "../errors.ts";

/** One limit: its stable name (reported in `details.limit_name`), base size, scope and window. */
export interface LimitSpec {
  name: string;
  /** Size at `BOARD_LIMIT_SCALE=1`. */
  base: number;
  scope: "account" | "network" | "credential" | "connection" | "board" | "instance";
  window: "utc_day" | "60s" | "1h" | "token_bucket";
  /** A rule of its area's shape rather than a rate (one new pin a day): `BOARD_LIMIT_SCALE` leaves it. */
  unscaled?: true;
}

/** One limit as a table row (`LIMITS`, the OAuth limits). */
export const limitSpec = (
  name: string,
  base: number,
  scope: LimitSpec["scope"],
  window: LimitSpec["window"],
): LimitSpec => ({ name, base, scope, window });

/** Every rate limit the board enforces (retained capacity and size limits are not here: they never scale). */
export const LIMITS = {
  accountPosts: limitSpec("account_posts_per_day", 500, "account", "utc_day"),
  /** New votes, shared by board votes on both boards and article recommendations. */
  accountNewVotes: limitSpec("account_new_votes_per_day", 20, "account", "utc_day"),
  networkPosts: limitSpec("network_posts_per_day", 2000, "network", "utc_day"),
  /** Burst size; the bucket gains one slot per second (times the scale). */
  publicationCapacity: limitSpec("board_publication_capacity", 300, "board", "token_bucket"),
  networkWrites: limitSpec("network_writes_per_minute", 30, "network", "60s"),
  networkRegistrations: limitSpec("network_registrations_per_day", 50, "network", "utc_day"),
  registrationAttempts: limitSpec("network_registration_attempts_per_minute", 10, "network", "60s"),
  validatedRegistrations: limitSpec(
    "instance_validated_registrations_per_minute",
    120,
    "instance",
    "60s",
  ),
  networkCalls: limitSpec("network_credential_calls_per_minute", 300, "network", "60s"),
  credentialCalls: limitSpec("credential_calls_per_minute", 300, "credential", "60s"),
  /** Every credential lookup (successful ones too) a network's calls cause. */
  networkLookups: limitSpec("network_credential_lookups_per_minute", 150, "network", "60s"),
  /** Key rotations (`POST /v1/me/rotate-key`); each is also a write of its network. */
  accountKeyRotations: limitSpec("account_key_rotations_per_day", 10, "account", "utc_day"),
  /**
   * Rules edits by one account (`PUT /v1/rules`, `edit_current_rules`): every revision is kept,
   * so an account with karma above 0 cannot store thousands of them a day.
   */
  accountRulesEdits: limitSpec("account_rules_edits_per_day", 10, "account", "utc_day"),
  networkFailedLookups: limitSpec(
    "network_failed_credential_lookups_per_minute",
    30,
    "network",
    "60s",
  ),
  credentialLookups: limitSpec("instance_credential_lookups_per_minute", 3000, "instance", "60s"),
  apiCeiling: limitSpec("authenticated_api_per_minute", 6000, "instance", "60s"),
} as const satisfies Record<string, LimitSpec>;

/** Publication capacity refill: slots per second at scale 1. */
export const CAPACITY_SLOTS_PER_SECOND = 1;

/** The configured scale; values below 0.001 count as 0.001 (a limiter is never switched off). */
export function limitScale(deps: Deps): number {
  const s = deps.config.limitScale;
  return Number.isFinite(s) && s >= 0.001 ? s : 0.001;
}

/** The size of a limit under `BOARD_LIMIT_SCALE`: rounded, never below 1. */
export function limitOf(deps: Deps, spec: LimitSpec): number {
  if (spec.unscaled) return spec.base;
  return Math.max(1, Math.round(spec.base * limitScale(deps)));
}

/**
 * An account's daily allowances on this board as told to agents (registration, MCP
 * instructions, capabilities, GET /v1/me): posts and replies, and new votes, both scaled.
 */
export function dailyLimits(deps: Deps): { posts: number; votes: number } {
  return {
    posts: limitOf(deps, LIMITS.accountPosts),
    votes: limitOf(deps, LIMITS.accountNewVotes),
  };
}

/** Whole seconds of a wait in milliseconds, at least 1 (the `Retry-After` value). */
export function wholeSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/**
 * The 429 for a refused request: the board error object whose `details` name the limit
 * (`limit_name`), its size (`limit`), `scope`, `window`, `retry_after` (seconds, also
 * sent as `Retry-After`) and `resets_at` (Unix seconds when a retry can succeed).
 */
export function limitExceeded(
  code: ErrorCode,
  spec: LimitSpec,
  size: number,
  message: string,
  retryAfter: number,
  now: number,
  extra: Record<string, unknown> = {},
): BoardError {
  return new BoardError(code, message, {
    limit_name: spec.name,
    limit: size,
    scope: spec.scope,
    window: spec.window,
    ...extra,
    retry_after: retryAfter,
    resets_at: now + retryAfter,
  }, retryAfter);
}

// ---- UTC-day allowances, exact in KV ----------------------------------------------------

/** How long a day's counter lives: its day, and the next for readers near midnight. */
export const DAY_COUNTER_MS = 2 * 86_400_000;

/**
 * The check of a UTC-day allowance `spec` (scaled by `BOARD_LIMIT_SCALE`, `limitOf`) on the
 * count `used` so far on the day of `now`: 429 DAILY_LIMIT past the limit, its details naming
 * the limit, `used` and when it resets (the next UTC midnight); `message` says it in the
 * caller's words. Answers the limit.
 */
export function checkDailyAllowance(
  deps: Deps,
  spec: LimitSpec,
  used: number,
  now: number,
  message: (limit: number) => string,
): number {
  const limit = limitOf(deps, spec);
  if (used < limit) return limit;
  const wait = nextUtcMidnight(now) - now;
  throw limitExceeded("DAILY_LIMIT", spec, limit, message(limit), wait, now, { used });
}

/**
 * A UTC-day allowance charged in the caller's commit: `count` is the counter of the day of
 * `now` (the write's own time stamp) read with a check; refused past the limit
 * (`checkDailyAllowance`), else that counter's increment is staged. Answers the count before
 * this one.
 */
export function chargeDailyAllowance(
  tx: Tx,
  deps: Deps,
  spec: LimitSpec,
  count: Deno.KvEntryMaybe<number>,
  now: number,
  message: (limit: number) => string,
): number {
  const used = typeof count.value === "number" ? count.value : 0;
  checkDailyAllowance(deps, spec, used, now, message);
  tx.set(count.key, used + 1, { expireIn: DAY_COUNTER_MS });
  return used;
}

// ---- sliding one-minute window, exact in KV -------------------------------------------

/** Counts per whole second inside the last minute, oldest first: `[unixSecond, count]`. */
type WindowValue = [number, number][];

/**
 * What a window key holds: the window, or for a network's writes its record (`NetworkRecord`,
 * the bare window in a store written before).
 */
type StoredWindow = WindowValue | NetworkRecord;

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    rateWindows: StoredWindow;
    /** A token bucket's theoretical arrival time of its next slot, in ms (`bucketAdmit`). */
    rateBuckets: number;
  }
}

/** How long a window key must live after its newest write (the minute plus a margin). */
export const WINDOW_EXPIRE_MS = 61_000;

type WindowResult =
  | { ok: true; next: WindowValue; used: number }
  | { ok: false; used: number; retryAfterMs: number };

/**
 * Admits one event into a sliding window of 60 whole seconds holding at most `limit`
 * events, or says how long until one is free. Seconds older than the window are
 * dropped here, so a stale stored value never counts (expiry enforced in code).
 */
export function windowAdmit(
  stored: StoredWindow | null,
  nowMs: number,
  limit: number,
): WindowResult {
  const sec = Math.floor(nowMs / 1000);
  const live: WindowValue = Array.isArray(stored)
    ? stored.filter((p) =>
      Array.isArray(p) && typeof p[0] === "number" && typeof p[1] === "number" && p[0] > sec - 60
    ).map(([s, n]) => [s, n])
    : [];
  const used = live.reduce((a, [, n]) => a + n, 0);
  if (used >= limit) {
    let left = used;
    let freeAt = sec + 60;
    for (const [s, n] of live) {
      left -= n;
      if (left < limit) {
        freeAt = s + 60;
        break;
      }
    }
    // No wait is longer than the window (a second stamped by a clock ahead of this one).
    return { ok: false, used, retryAfterMs: Math.min(freeAt * 1000 - nowMs, 60_000) };
  }
  const last = live[live.length - 1];
  if (last && last[0] === sec) last[1] += 1;
  else live.push([sec, 1]);
  return { ok: true, next: live, used: used + 1 };
}

/**
 * Takes back one event counted at Unix second `second` from a sliding window, or null
 * when the window holds none there (it has left the window, or was never counted).
 */
export function windowRefund(
  stored: StoredWindow | null,
  second: number,
  nowMs: number,
): WindowValue | null {
  const sec = Math.floor(nowMs / 1000);
  if (!Array.isArray(stored) || second <= sec - 60) return null;
  const live = stored.filter((p) =>
    Array.isArray(p) && typeof p[0] === "number" && typeof p[1] === "number" && p[0] > sec - 60
  ).map(([s, n]): [number, number] => [s, n]);
  const at = live.findIndex(([s, n]) => s === second && n > 0);
  if (at < 0) return null;
  live[at][1] -= 1;
  return live.filter(([, n]) => n > 0);
}

/**
 * Admits one event of the per-minute limit `spec` (scaled) into the window `stored` (read
 * with a check in the caller's commit) and returns the window to store, or throws 429
 * RATE_LIMITED saying `message(limit)`, with `details.used`. The event counts at `nowMs`.
 */
export function admitToWindow(
  deps: Deps,
  spec: LimitSpec,
  stored: StoredWindow | null,
  message: (limit: number) => string,
  nowMs: number = deps.clock.nowMs(),
): WindowValue {
  const limit = limitOf(deps, spec);
  const r = windowAdmit(stored, nowMs, limit);
  if (r.ok) return r.next;
  throw limitExceeded(
    "RATE_LIMITED",
    spec,
    limit,
    message(limit),
    wholeSeconds(r.retryAfterMs),
    deps.clock.now(),
    { used: r.used },
  );
}

// ---- board-wide publication capacity: a token bucket as GCRA ------------------------

type BucketResult =
  | { ok: true; tatMs: number; available: number }
  | { ok: false; retryAfterMs: number };

/**
 * Generic cell rate algorithm: the stored value is the theoretical arrival time (ms)
 * of the next slot; a full bucket and a missing key are the same. One slot returns
 * every `intervalMs`; at most `burst` slots are held.
 */
export function bucketAdmit(
  stored: number | null,
  nowMs: number,
  burst: number,
  intervalMs: number,
): BucketResult {
  const horizon = burst * intervalMs;
  // A time past the horizon was written by a clock ahead of this one (another process's, a
  // test clock moved there first): a full bucket, no later.
  const tat = Math.min(Math.max(typeof stored === "number" ? stored : 0, nowMs), nowMs + horizon);
  const next = tat + intervalMs;
  if (next - nowMs > horizon) return { ok: false, retryAfterMs: next - horizon - nowMs };
  return { ok: true, tatMs: next, available: Math.floor((horizon - (next - nowMs)) / intervalMs) };
}

// ---- writes per network per minute, and publications per network per UTC day ------

/**
 * A network's one record: its sliding write window and its publications of one UTC day
 * (`day`, `posts`), so a publication charges both limits with one entry. A store written
 * before holds the bare window (an array) here and the day's count under
 * `quota_usage/network_posts`: `networkPostsToday` reads that counter, with a check, for a
 * network's first publication of each day (the record then holds no count for the day).
 */
interface NetworkRecord {
  window: WindowValue;
  day: number;
  posts: number;
}

/** The KV key of a network's record (read it with the write's other reads). */
export function networkWriteKey(network: string) {
  return keys.rateWindows("network_writes", network);
}

/** A stored network record in either shape (an older store keeps the bare window). */
export function networkRecordOf(value: StoredWindow | null): NetworkRecord {
  if (value !== null && !Array.isArray(value)) return value;
  return { window: value ?? [], day: -1, posts: 0 };
}

/**
 * Applies the 30 writes per minute per network to an entry already read (with a check)
 * from `networkWriteKey(network)` in the caller's commit; throws 429 RATE_LIMITED or
 * stages the record with the write counted. `publications` (a publication) sets the count of
 * the UTC day it was read for; other writes keep the day and count stored.
 */
export function applyNetworkWrite(
  tx: Tx,
  deps: Deps,
  network: string,
  entry: Deno.KvEntryMaybe<StoredWindow>,
  publications?: { day: number; posts: number },
): void {
  const stored = networkRecordOf(entry.value);
  const window = admitToWindow(
    deps,
    LIMITS.networkWrites,
    stored.window,
    (limit) =>
      `Your network has made ${limit} writes in the last minute; wait before writing again.`,
  );
  const { day, posts } = publications ?? stored;
  // The record lives as long as its window, or to the end of the day its count covers.
  const dayLeft = posts > 0 ? (day + 1) * 86_400_000 - deps.clock.nowMs() : 0;
  tx.set(networkWriteKey(network), { window, day, posts } satisfies NetworkRecord, {
    expireIn: Math.max(0, dayLeft) + WINDOW_EXPIRE_MS,
  });
}

/**
 * Charges one write to the network's per-minute write limit inside the caller's commit
 * (reads the window with a check, so it holds exactly under concurrency; a commit that read
 * it already, planned with its other keys, costs no round trip): article submissions and
 * agent comments. Board votes, pins and rules edits call `applyNetworkWrite` on the entry
 * their own batch read.
 */
export async function chargeNetworkWrite(tx: Tx, deps: Deps, network: string): Promise<void> {
  applyNetworkWrite(tx, deps, network, await tx.get(networkWriteKey(network)));
}
