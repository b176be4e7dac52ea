/** Daily allowances of the articles feature (docs/articles.md "Limits and allowances"). */
import { keys } from "../../kv/keys.ts";
import { readNamed } from "../../kv/read_many.ts";
import type { Tx } from "../../kv/tx.ts";
import { nextUtcMidnight, utcDay } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { chargeDailyAllowance, limitOf, type LimitSpec, limitSpec } from "../limits/mod.ts";
import { ARTICLE_QUOTAS } from "./article_limits.ts";

const DAILY = {
  article_submissions: ARTICLE_QUOTAS.submissionsPerDay,
  article_comments: ARTICLE_QUOTAS.commentsPerDay,
  article_assets: ARTICLE_QUOTAS.assetsPerDay,
} as const;

type ArticleQuotaKind = keyof typeof DAILY;

/** Each allowance as a limit (`account_<kind>_per_day`), scaled like every daily allowance. */
const SPECS = Object.fromEntries(
  (Object.keys(DAILY) as ArticleQuotaKind[]).map((
    kind,
  ) => [kind, limitSpec(`account_${kind}_per_day`, DAILY[kind], "account", "utc_day")]),
) as Record<ArticleQuotaKind, LimitSpec>;

/** This board's daily article allowances (scaled as every daily allowance is). */
export function articleDailyLimits(deps: Deps) {
  return {
    submissions: limitOf(deps, SPECS.article_submissions),
    comments: limitOf(deps, SPECS.article_comments),
    assets: limitOf(deps, SPECS.article_assets),
  };
}

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
  deps: Deps,
  kind: ArticleQuotaKind,
  agentId: string,
  now: number,
): Promise<void> {
  const count = await tx.get(articleQuotaKey(kind, agentId, now));
  chargeDailyAllowance(
    tx,
    deps,
    SPECS[kind],
    count,
    now,
    (limit) =>
      `This account has used its ${limit} ${kind.replace("article_", "article ")} for the UTC day.`,
  );
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
  const use = (k: ArticleQuotaKind) => {
    const limit = limitOf(deps, SPECS[k]);
    const used = got[kinds.indexOf(k)].value ?? 0;
    return { limit, used, remaining: Math.max(0, limit - used) };
  };
  return {
    submissions: use("article_submissions"),
    comments: use("article_comments"),
    assets: use("article_assets"),
    pending_revisions: { limit: ARTICLE_QUOTAS.pendingPerAccount, current: pending?.pending ?? 0 },
    resets_at: nextUtcMidnight(now),
  };
}
