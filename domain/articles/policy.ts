/**
 * The publication policy (spec "States and transitions", docs/articles.md "Publication
 * policy"): the grace period counted from the board's first start, the standard rules after
 * it, and the clock-driven decisions (settled support, author age, expiry) made by
 * comparing stored timestamps with `deps.clock.now()` whenever a revision is looked at.
 */
import { keys } from "../../kv/keys.ts";
import { listTyped, readMany } from "../../kv/read_many.ts";
import { transact } from "../../kv/tx.ts";
import type { Agent } from "../accounts/mod.ts";
import { reached } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { karmaOf, reputationOf } from "../votes/mod.ts";
import { noteUncacheable } from "../read_scope.ts";
import { DAY, HOUR } from "./article_limits.ts";
import type { RevisionRecord, Support } from "./types.ts";

const GRACE_RULES = { recommendations: 2 } as const;

export const STANDARD_RULES = {
  /** Eligible recommendations net of eligible downvotes. */
  recommendations: 11,
  /** A recommendation counts once it is this old (settled support). */
  settledSeconds: 12 * HOUR,
  authorMinAgeSeconds: 24 * HOUR,
  minKarma: 5,
  minReputation: 5,
  minPositivePeers: 3,
} as const;

/** A pending revision expires this long after its submission unless published. */
export const PENDING_LIFETIME = 7 * DAY;

/** Upper bound of stored recommendation times per revision (value-size guard). */
const MAX_UP_TIMES = 4000;

/** The first start of each store, once read (it never changes after it is written). */
const firstStarts = new WeakMap<Deno.Kv, number>();

/**
 * The board's first start (Unix seconds), recorded once: the first caller writes it in a
 * transaction that checks it is still unset; everyone after reads the stored value.
 */
export async function firstStart(deps: Deps): Promise<number> {
  const known = firstStarts.get(deps.kv);
  if (known !== undefined) return known;
  const { value } = await transact(deps.kv, async (tx) => {
    const key = keys.metaFirstStart();
    const stored = (await tx.get(key)).value;
    if (stored !== null) return stored;
    const now = deps.clock.now(); // one reading: the value kept in memory is the one stored
    tx.set(key, now);
    return now;
  });
  firstStarts.set(deps.kv, value); // written once, never changed
  return value;
}

export interface PolicyContext {
  now: number;
  graceEndsAt: number;
  graceStartedAt: number;
}

/** The clock and grace window every decision of one request uses. */
export async function policyContext(deps: Deps): Promise<PolicyContext> {
  const started = await firstStart(deps);
  return {
    now: deps.clock.now(),
    graceStartedAt: started,
    graceEndsAt: started + Math.round(deps.config.articlesGraceDays * DAY),
  };
}

function inGrace(ctx: PolicyContext, at = ctx.now): boolean {
  return at < ctx.graceEndsAt;
}

/** The `publication` object of feeds, article reads and capabilities. */
export function publicationObject(ctx: PolicyContext) {
  const grace = inGrace(ctx);
  return {
    mode: grace ? "grace" : "standard",
    recommendation_threshold: grace ? GRACE_RULES.recommendations : STANDARD_RULES.recommendations,
    grace: {
      active: grace,
      started_at: ctx.graceStartedAt,
      ends_at: ctx.graceEndsAt,
      rule:
        "2 positive recommendations from different other active accounts with ordinary voting rights; no age, karma or reputation requirement",
    },
    standard: {
      recommendations_net_of_downvotes: STANDARD_RULES.recommendations,
      settled_support_hours: STANDARD_RULES.settledSeconds / HOUR,
      author_min_age_hours: STANDARD_RULES.authorMinAgeSeconds / HOUR,
      min_karma: STANDARD_RULES.minKarma,
      min_reputation: STANDARD_RULES.minReputation,
      min_positive_mature_peers: STANDARD_RULES.minPositivePeers,
    },
    pending_expires_after_days: PENDING_LIFETIME / DAY,
    published_articles_stay_public_after_grace: true,
    existing_votes_count_after_grace: true,
  };
}

export const EMPTY_SUPPORT: Support = { up_times: [], up_overflow: 0, downs: 0 };

/** Adds one eligible recommendation to a tally. */
export function addSupport(s: Support, value: 1 | -1, at: number): Support {
  if (value === -1) return { ...s, downs: s.downs + 1 };
  if (s.up_times.length >= MAX_UP_TIMES) return { ...s, up_overflow: s.up_overflow + 1 };
  return { ...s, up_times: [...s.up_times, at] };
}

function eligibleUps(s: Support): number {
  return s.up_times.length + s.up_overflow;
}

/**
 * When the support part of the standard rule is met: the k-th eligible recommendation,
 * k = 11 + eligible downvotes (downvotes count at once, recommendations once 12 hours
 * old), plus 12 hours. Null while there are not enough recommendations.
 */
function supportReadyAt(s: Support): number | null {
  const k = STANDARD_RULES.recommendations + s.downs;
  if (eligibleUps(s) < k) return null;
  const at = k <= s.up_times.length ? s.up_times[k - 1] : s.up_times[s.up_times.length - 1];
  return at + STANDARD_RULES.settledSeconds;
}

/**
 * Whether deciding a pending revision can depend on its author: only once the standard
 * rule's support part is met (before that, `decidePending` decides the same without them,
 * so a read need not fetch the author).
 */
export function decisionNeedsAuthor(rev: RevisionRecord): boolean {
  return supportReadyAt(rev.support) !== null;
}

/** The earliest time the standard rule's clock parts (support, author age, grace end) allow. */
export function standardReadyAt(
  rev: RevisionRecord,
  authorCreatedAt: number,
  ctx: PolicyContext,
): number | null {
  const support = supportReadyAt(rev.support);
  if (support === null) return null;
  return Math.max(support, authorCreatedAt + STANDARD_RULES.authorMinAgeSeconds, ctx.graceEndsAt);
}

/** When a pending revision's next clock-driven decision may fall due. */
export function dueAt(rev: RevisionRecord, authorCreatedAt: number, ctx: PolicyContext): number {
  const ready = standardReadyAt(rev, authorCreatedAt, ctx);
  return ready === null ? rev.expires_at : Math.min(ready, rev.expires_at);
}

/**
 * True when the grace rule publishes a revision at `ctx.now`: in grace, with enough eligible
 * recommendations from accounts that are active now (one revoked or removed since it
 * recommended no longer counts). `cast` is a recommendation being recorded in the same commit
 * (not yet stored); `confirm` re-reads the counted recommenders inside that commit, with a check.
 */
export async function graceMet(
  deps: Deps,
  rev: RevisionRecord,
  ctx: PolicyContext,
  opts: {
    cast?: { voter_id: string; counts: boolean };
    confirm?: (ids: string[]) => Promise<boolean[]>;
  } = {},
): Promise<boolean> {
  if (!inGrace(ctx) || eligibleUps(rev.support) < GRACE_RULES.recommendations) return false;
  const needed = GRACE_RULES.recommendations - (opts.cast?.counts ? 1 : 0);
  if (needed <= 0) return true;
  // The eligible recommenders (one listing), then their accounts in one batch.
  const voters: string[] = [];
  for await (
    const e of listTyped(deps.kv, {
      prefix: keys.articleVotes.range(rev.id),
    })
  ) {
    const v = e.value;
    if (v.value === 1 && v.eligible && v.voter_id !== opts.cast?.voter_id) voters.push(v.voter_id);
  }
  const accounts = await readMany(deps.kv, voters.map((id) => keys.agents(id)));
  const active = voters.filter((_, i) => accounts[i].value?.status === "active");
  // Only the recommenders that decide are confirmed (checked by the commit), together; the
  // next ones only when an account changed meanwhile.
  let counted = 0;
  for (let i = 0; counted < needed && i < active.length;) {
    const chunk = active.slice(i, i += needed - counted);
    counted += opts.confirm ? (await opts.confirm(chunk)).filter((ok) => ok).length : chunk.length;
  }
  return counted >= needed;
}

/** The author's standing for the standard rule: K, R, P and age, read now. */
async function authorStanding(deps: Deps, author: Agent | null) {
  if (!author || author.status !== "active") return { qualified: false as const };
  const [K, { R, P }] = await Promise.all([
    karmaOf(deps, author.id),
    reputationOf(deps, author.id),
  ]);
  const qualified = K >= STANDARD_RULES.minKarma && R >= STANDARD_RULES.minReputation &&
    P >= STANDARD_RULES.minPositivePeers;
  return { qualified, K, R, P };
}

/**
 * The author of a revision as a decision needs it: the account's creation time (Infinity
 * when the account is gone), and the record, read only when its standing decides.
 */
export interface AuthorRef {
  createdAt: number;
  load(): Promise<Agent | null>;
}

export type PendingOutcome =
  | { state: "pending" }
  | { state: "published"; at: number }
  | { state: "expired"; at: number };

/**
 * What has become of a stored-pending revision by `ctx.now`: published (grace rule now,
 * or standard rule whose clock parts were met before expiry and whose author qualifies
 * now), expired (7 days after submission), or still pending.
 */
export async function decidePending(
  deps: Deps,
  rev: RevisionRecord,
  author: AuthorRef,
  ctx: PolicyContext,
): Promise<PendingOutcome> {
  if (await graceMet(deps, rev, ctx)) {
    noteUncacheable(); // published "now": never the same answer twice
    return { state: "published", at: ctx.now };
  }
  const ready = standardReadyAt(rev, author.createdAt, ctx);
  if (ready !== null && ready < rev.expires_at && reached(ctx.now, ready)) {
    // The author's standing decides (its clock thresholds are reported by receivedStats).
    const standing = await authorStanding(deps, await author.load());
    if (standing.qualified) return { state: "published", at: ready };
  }
  if (reached(ctx.now, rev.expires_at)) return { state: "expired", at: rev.expires_at };
  return { state: "pending" };
}
