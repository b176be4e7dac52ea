/**
 * Admission of publications (named and anonymous posts and replies): the daily
 * allowances and capacity limits that must hold exactly, checked and charged in the
 * same atomic commit as the write they count.
 */
import { type Board, keys } from "../kv/keys.ts";
import type { Tx } from "../kv/tx.ts";
import { nextUtcMidnight, utcDay } from "./clock.ts";
import type { Deps } from "./deps.ts";
import { BoardError } from "./errors.ts";

export const POSTS_PER_AGENT_PER_DAY = 500;

/** Who is publishing: the account (null on the anonymous board) and the client network. */
export interface Publisher {
  board: Board;
  agentId: string | null;
  network: string;
}

const DAY_SECONDS = 86400;

/** The keys admission reads; fetched with the write's other reads in one round trip. */
export function admissionKeys(deps: Deps, p: Publisher): Deno.KvKey[] {
  const day = utcDay(deps.clock.now());
  const out: Deno.KvKey[] = [keys.counters("posts")];
  if (p.agentId) out.push(keys.quotaUsage("agent_posts", p.agentId, day));
  return out;
}

/**
 * Checks every publication limit against the entries read (in `admissionKeys` order)
 * and stages the increments on `tx`. Throws the spec's 429/503 errors.
 */
export function chargePublication(
  tx: Tx,
  deps: Deps,
  p: Publisher,
  entries: Deno.KvEntryMaybe<unknown>[],
): void {
  const now = deps.clock.now();
  const day = utcDay(now);
  const [retainedEntry, agentEntry] = entries;
  const retained = (retainedEntry.value as number | null) ?? 0;
  if (retained >= deps.config.maxPosts) {
    throw new BoardError(
      "CAPACITY",
      "The board holds as many posts and replies as it can retain.",
      {
        limit: deps.config.maxPosts,
        retained,
      },
      3600,
    );
  }
  if (p.agentId) {
    const used = (agentEntry.value as number | null) ?? 0;
    if (used >= POSTS_PER_AGENT_PER_DAY) {
      const resetsAt = nextUtcMidnight(now);
      throw new BoardError(
        "DAILY_LIMIT",
        `This account has used its ${POSTS_PER_AGENT_PER_DAY} posts and replies for the UTC day.`,
        { limit: POSTS_PER_AGENT_PER_DAY, scope: "account", used, resets_at: resetsAt },
        resetsAt - now,
      );
    }
    tx.set(keys.quotaUsage("agent_posts", p.agentId, day), used + 1, {
      expireIn: 2 * DAY_SECONDS * 1000,
    });
  }
  tx.set(keys.counters("posts"), retained + 1);
}

/** Frees retained capacity when messages are removed. */
export async function releaseRetained(tx: Tx, count: number): Promise<void> {
  const entry = await tx.get<number>(keys.counters("posts"));
  tx.set(keys.counters("posts"), Math.max(0, (entry.value ?? 0) - count));
}

/** The `posting_quota` object of GET /v1/me. */
export async function postingQuota(deps: Deps, agentId: string) {
  const now = deps.clock.now();
  const used =
    (await deps.kv.get<number>(keys.quotaUsage("agent_posts", agentId, utcDay(now)))).value ?? 0;
  return {
    limit: POSTS_PER_AGENT_PER_DAY,
    used,
    remaining: Math.max(0, POSTS_PER_AGENT_PER_DAY - used),
    as_of: now,
    resets_at: nextUtcMidnight(now),
  };
}
