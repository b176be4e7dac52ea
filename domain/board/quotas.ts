/**
 * Admission of publications (named and anonymous posts and replies): the daily
 * allowances and capacity limits that must hold exactly, checked and charged in the
 * same atomic commit as the write they count. Their keys are read in the publish
 * commit's one `getMany`, so each becomes a check of that commit (docs/limits.md).
 */
import type { KeyValues, NamedEntry } from "../../kv/key_values.ts";
import { type Board, keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import { nextUtcMidnight, utcDay } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import {
  applyNetworkWrite,
  bucketAdmit,
  CAPACITY_SLOTS_PER_SECOND,
  checkDailyAllowance,
  dailyLimits,
  DAY_COUNTER_MS,
  limitExceeded,
  limitOf,
  LIMITS,
  limitScale,
  networkRecordOf,
  networkWriteKey,
  wholeSeconds,
} from "../limits/mod.ts";

/** The account allowance at `BOARD_LIMIT_SCALE=1`. */
export const POSTS_PER_AGENT_PER_DAY = LIMITS.accountPosts.base;

/** Who is publishing: the account (null on the anonymous board) and the client network. */
export interface Publisher {
  board: Board;
  agentId: string | null;
  network: string;
}

/** The board-wide publication capacity bucket key. */
const CAPACITY_KEY = keys.rateBuckets("publications");

/**
 * The keys admission reads, by name, fetched with the write's other reads in one round trip
 * (`Tx.getNamed`): retained posts, the network's record (its write window and its day's
 * publications), the capacity bucket, and (named board) the account's day. At most 4 checks
 * of the publish commit (5 on a network's first publication of a day, see
 * `networkPostsToday`).
 */
export function admissionKeys(p: Publisher, now: number) {
  return {
    retained: keys.counters("posts"),
    network: networkWriteKey(p.network),
    bucket: CAPACITY_KEY,
    agentDay: p.agentId ? keys.quotaUsage("agent_posts", p.agentId, utcDay(now)) : null,
  };
}

/** The entries read for `admissionKeys`, under the same names. */
type AdmissionEntries = {
  [N in keyof ReturnType<typeof admissionKeys>]: NamedEntry<ReturnType<typeof admissionKeys>[N]>;
};

/**
 * Keys admission may read besides `admissionKeys`: the network's day counter of a store
 * written before (`networkPostsToday`). Planned reads (`Tx.prefetch`) sent with the
 * publication's batch, so that reading it costs no round trip of its own; it becomes a check
 * of the commit only when it is used.
 */
export function admissionPlannedKeys(p: Publisher, now: number): Deno.KvKey[] {
  return [keys.quotaUsage("network_posts", p.network, utcDay(now))];
}

/**
 * The network's publications today: from its record, or, when the record holds no count
 * for today, from the day counter a store written before kept apart (read with a check).
 */
async function networkPostsToday(
  tx: Tx,
  network: string,
  day: number,
  entry: Deno.KvEntryMaybe<KeyValues["rateWindows"]>,
): Promise<number> {
  const rec = networkRecordOf(entry.value);
  if (rec.day === day) return rec.posts;
  return (await tx.get(keys.quotaUsage("network_posts", network, day))).value ?? 0;
}

/**
 * Checks every publication limit against the entries read (`admissionKeys`, for the same
 * `nowMs`) and stages the increments on `tx`. Throws 503 CAPACITY, 429
 * DAILY_LIMIT (account, then network), 429 RATE_LIMITED (network writes) or 429
 * BOARD_RATE_LIMIT. `nowMs` is the one reading of the clock the publication is stamped
 * with, so it counts on the UTC day of its own `created_at`.
 */
export async function chargePublication(
  tx: Tx,
  deps: Deps,
  p: Publisher,
  entries: AdmissionEntries,
  nowMs: number,
): Promise<void> {
  // Daily counters are keyed by the UTC day the keys were read for (the day is in the key,
  // or in the network's record, so yesterday's count never applies today).
  const now = Math.floor(nowMs / 1000);
  const { retained: retainedEntry, network: networkEntry, bucket: bucketEntry } = entries;
  const agentEntry = entries.agentDay;
  const retained = retainedEntry.value ?? 0;
  if (retained >= deps.config.maxPosts) {
    throw new BoardError(
      "CAPACITY",
      "The board holds as many posts and replies as it can retain.",
      { limit: deps.config.maxPosts, retained },
      3600,
    );
  }
  const resetsAt = nextUtcMidnight(now);
  let agentUsed = 0;
  if (agentEntry) {
    agentUsed = agentEntry.value ?? 0;
    checkDailyAllowance(
      deps,
      LIMITS.accountPosts,
      agentUsed,
      now,
      (limit) => `This account has used its ${limit} posts and replies for the UTC day.`,
    );
  }
  const networkLimit = limitOf(deps, LIMITS.networkPosts);
  const day = utcDay(now);
  const networkUsed = await networkPostsToday(tx, p.network, day, networkEntry);
  if (networkUsed >= networkLimit) {
    throw limitExceeded(
      "DAILY_LIMIT",
      LIMITS.networkPosts,
      networkLimit,
      `Your network has published ${networkLimit} posts and replies this UTC day (all accounts and the anonymous board together).`,
      resetsAt - now,
      now,
      { used: networkUsed },
    );
  }
  applyNetworkWrite(tx, deps, p.network, networkEntry, { day, posts: networkUsed + 1 });

  const burst = limitOf(deps, LIMITS.publicationCapacity);
  const intervalMs = 1000 / (CAPACITY_SLOTS_PER_SECOND * limitScale(deps));
  const slot = bucketAdmit(bucketEntry.value, nowMs, burst, intervalMs);
  if (!slot.ok) {
    throw limitExceeded(
      "BOARD_RATE_LIMIT",
      LIMITS.publicationCapacity,
      burst,
      "The board is taking in as many publications as it can right now; retry when a slot returns.",
      wholeSeconds(slot.retryAfterMs),
      now,
      { slots_per_second: CAPACITY_SLOTS_PER_SECOND * limitScale(deps) },
    );
  }
  // A full bucket and a missing key are the same, so the key may vanish once full again.
  tx.set(CAPACITY_KEY, slot.tatMs, { expireIn: Math.ceil(slot.tatMs - nowMs) + 1000 });
  if (agentEntry) tx.set(agentEntry.key, agentUsed + 1, { expireIn: DAY_COUNTER_MS });
  tx.set(keys.counters("posts"), retained + 1);
}

/** Frees retained capacity when messages are removed. */
export async function releaseRetained(tx: Tx, count: number): Promise<void> {
  const entry = await tx.get(keys.counters("posts"));
  tx.set(keys.counters("posts"), Math.max(0, (entry.value ?? 0) - count));
}

/** The `posting_quota` object of GET /v1/me (the account's daily allowance). */
export async function postingQuota(deps: Deps, agentId: string) {
  const now = deps.clock.now();
  const limit = dailyLimits(deps).posts;
  const used = (await deps.kv.get(keys.quotaUsage("agent_posts", agentId, utcDay(now)))).value ?? 0;
  return {
    limit,
    used,
    remaining: Math.max(0, limit - used),
    as_of: now,
    resets_at: nextUtcMidnight(now),
  };
}
