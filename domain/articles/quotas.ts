/** Daily allowances of the articles feature (docs/articles.md "Limits and allowances"). */
import { keys } from "../../kv/keys.ts";
import { readNamed } from "../../kv/read_many.ts";
import type { Tx } from "../../kv/tx.ts";
import { nextUtcMidnight, utcDay } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { ARTICLE_QUOTAS, DAY } from "./article_limits.ts";

const DAILY = {
  article_submissions: ARTICLE_QUOTAS.submissionsPerDay,
  article_comments: ARTICLE_QUOTAS.commentsPerDay,
  article_assets: ARTICLE_QUOTAS.assetsPerDay,
} as const;

type ArticleQuotaKind = keyof typeof DAILY;

/**
 * The counter of one allowance of an agent on the UTC day of `now` (read plans read it with
 * their other keys).
 */
export function articleQuotaKey(kind: ArticleQuotaKind, agentId: string, now: number) {
  return keys.quotaUsage(kind, agentId, utcDay(now));
}

/**
 * Reads (with a check) the use of one allowance on the day of `now` (the write's own time
 * stamp), throws 429 DAILY_LIMIT when it is spent, and stages the increment on `tx`.
 */
export async function chargeArticleQuota(
  tx: Tx,
  kind: ArticleQuotaKind,
  agentId: string,
  now: number,
): Promise<void> {
  const key = articleQuotaKey(kind, agentId, now);
  const used = (await tx.get(key)).value ?? 0;
  const limit = DAILY[kind];
  if (used >= limit) {
    const resetsAt = nextUtcMidnight(now);
    throw new BoardError(
      "DAILY_LIMIT",
      `This account has used its ${limit} ${kind.replace("article_", "article ")} for the UTC day.`,
      {
        limit_name: `account_${kind}_per_day`,
        limit,
        scope: "account",
        window: "utc_day",
        used,
        retry_after: resetsAt - now,
        resets_at: resetsAt,
      },
      resetsAt - now,
    );
  }
  tx.set(key, used + 1, { expireIn: 2 * DAY * 1000 });
}

/** Today's use of every article allowance (for capabilities). */
export async function articleQuotaUse(deps: Deps, agentId: string) {
  const now = deps.clock.now();
  const day = utcDay(now);
  const kinds = Object.keys(DAILY) as ArticleQuotaKind[];
  // One batch: the allowances' counters and the pending count.
  const { got, author } = await readNamed(deps.kv, {
    got: kinds.map((k) => keys.quotaUsage(k, agentId, day)),
    author: keys.articleAuthors(agentId),
  });
  const pending = author.value;
  return {
    ...Object.fromEntries(kinds.map((k, i) => [k.replace("article_", ""), {
      limit: DAILY[k],
      used: got[i].value ?? 0,
      remaining: Math.max(0, DAILY[k] - (got[i].value ?? 0)),
    }])),
    pending_revisions: { limit: ARTICLE_QUOTAS.pendingPerAccount, current: pending?.pending ?? 0 },
    resets_at: nextUtcMidnight(now),
  };
}
