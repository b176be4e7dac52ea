/**
 * Posting a guest comment from the website (docs/website.md "Guest comments"): the form
 * rules, the name rules, the rates per session and per network (exact KV counters), the
 * same-session duplicate refusal, then the articles domain stores the comment `pending` and the
 * automatic moderation publishes it, keeps it pending for a moderator, or rejects it.
 */
import { keys } from "../../kv/keys.ts";
import { readNamed } from "../../kv/read_many.ts";
import type { Tx } from "../../kv/tx.ts";
import {
  bundleRevisionsTx,
  type GuestCommentStore,
  guestCommentTarget,
  stageGuestComment,
} from "./comments.ts";
import { ARTICLE_LIMITS } from "./article_limits.ts";
import { articleTransact } from "./lifecycle.ts";
import { policyContext } from "./policy.ts";
import { ArticleWriter } from "./store.ts";
import type { CommentRecord } from "./types.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import { UUID_PATTERN } from "../ids.ts";
import { agentNamed, refuseGuestName } from "./guest_names.ts";
import {
  GUEST_RESEND_SECONDS,
  type GuestCookie,
  type GuestSession,
  liveGuestSession,
  newGuestRotation,
  rotateGuestSession,
} from "./guest_sessions.ts";
import {
  assessGuestText,
  checkGuestForm,
  type ModerationFinding,
  normaliseForRepetition,
} from "./guest_moderation.ts";
import { limitScale } from "../limits/mod.ts";
import { sha256Hex } from "../hashing.ts";
import { secondsText } from "../text.ts";
import type { GuestCheckRecord } from "./comment_threads.ts";

const HOUR = 3600;
const DAY = 86_400;

/** Guest comment rates (times BOARD_LIMIT_SCALE), over fixed clock hours and UTC days. */
const GUEST_RATES = [
  { name: "session_guest_comments_per_hour", scope: "session", window: "1h", size: HOUR, base: 5 },
  {
    name: "session_guest_comments_per_day",
    scope: "session",
    window: "utc_day",
    size: DAY,
    base: 20,
  },
  { name: "network_guest_comments_per_hour", scope: "network", window: "1h", size: HOUR, base: 20 },
  {
    name: "network_guest_comments_per_day",
    scope: "network",
    window: "utc_day",
    size: DAY,
    base: 100,
  },
] as const;

/** How long the same text counts as a repeat on one article. */
const DUPLICATE_SECONDS = DAY;

/** The first post of a normalised text on an article (the `duplicate` moderation rule). */
interface PrintRecord {
  session: string;
  at: number;
  expires_at: number;
}

/** A session's own post of a normalised text on an article (the 409), once stored: its id. */
interface SessionPrintRecord {
  at: number;
  expires_at: number;
  comment_id: string | null;
  /** SHA-256 of the text exactly as sent (a form sent twice sends it byte for byte). */
  exact?: string;
}

/** A network's guest comments in the current windows: [window start, comments] of each. */
interface NetworkCountsRecord {
  "1h": [start: number, count: number];
  utc_day: [start: number, count: number];
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    guestCommentPrints: PrintRecord;
    guestSessionPrints: SessionPrintRecord;
    guestCommentCounts: number;
    guestNetworkCommentCounts: NetworkCountsRecord;
  }
}

interface GuestCommentRequest {
  post_id: string;
  parent_id: string | null;
  text: string;
  name: string;
  /** The browser's guest cookie, checked (`readGuestCookie`). */
  cookie: GuestCookie;
  /**
   * The form's CSRF token, checked against the session in the commit (403 FORBIDDEN,
   * `details.session: "csrf"`); omitted when the caller checked it already.
   */
  csrf?: string | null;
  network: string;
}

interface GuestCommentResult {
  comment_id: string;
  status: "published" | "pending" | "rejected";
  depth: number;
  findings: ModerationFinding[];
  /**
   * The session's new cookie, given in the commit that stored the comment: the old value
   * (planted in the browser, say) never names a session that holds this comment.
   */
  rotated: { cookie: string; session: GuestSession };
}

function waitText(seconds: number): string {
  if (seconds < 90) return secondsText(seconds);
  if (seconds < 2 * HOUR) return `${Math.ceil(seconds / 60)} minutes`;
  return `${Math.ceil(seconds / HOUR)} hours`;
}

/** What a rate refusal says of when the guest may post again, `seconds` before it. */
function waitClause(seconds: number): string {
  return seconds > 0 ? `you can post again in ${waitText(seconds)}` : "you can post again now";
}

/** The wait clause as a rate refusal's message holds it. */
const WAIT_CLAUSE = /you can post again (?:in \d+ (?:seconds?|minutes|hours)|now)/;

/**
 * A refusal's message as of `now`: a rate refusal's wait counted down to `retryAt` (a kept
 * refusal shown again later says the wait that is left, as its `Retry-After` does, and "now"
 * once it is over); any other message as it is.
 */
export function refusalMessageAt(message: string, retryAt: number | null, now: number): string {
  return retryAt === null ? message : message.replace(WAIT_CLAUSE, waitClause(retryAt - now));
}

/** The parent of a reply, checked so the guest gets a clear message. */
function checkParent(postId: string, parent: CommentRecord | null): number {
  if (!parent || parent.post_id !== postId || parent.status !== "published") {
    throw new BoardError(
      "INVALID_INPUT",
      "The comment you are replying to is not available any more; post your text as a new comment instead.",
      { field: "parent_id" },
    );
  }
  if (parent.depth >= ARTICLE_LIMITS.commentDepth) {
    throw new BoardError(
      "INVALID_INPUT",
      `Replies nest at most ${ARTICLE_LIMITS.commentDepth} levels deep, and that comment is at the deepest level; reply higher up the thread.`,
      { field: "parent_id", max_depth: ARTICLE_LIMITS.commentDepth },
    );
  }
  return parent.depth + 1;
}

/** The start of the window of `rate` that holds `now`. */
function windowStart(rate: (typeof GUEST_RATES)[number], now: number): number {
  return now - (now % rate.size);
}

/** The 429 of a full window. */
function rateRefusal(rate: (typeof GUEST_RATES)[number], limit: number, now: number) {
  const wait = windowStart(rate, now) + rate.size - now;
  const who = rate.scope === "session" ? "from this browser" : "from your network";
  const span = rate.window === "1h" ? "this hour" : "today (UTC)";
  return new BoardError(
    "RATE_LIMITED",
    `${limit} comments were already posted ${who} ${span}, counting those held for a moderator or not published; ${
      waitClause(wait)
    }.`,
    {
      limit_name: rate.name,
      limit,
      scope: rate.scope,
      window: rate.window,
      retry_after: wait,
    },
    wait,
  );
}

/**
 * Charges the four rates in `tx` at `now` (the comment's own time stamp, the reading the
 * session's counters were read for): the session's two counters (`used`, read with the
 * session), the network's record (both windows). Throws 429 RATE_LIMITED when a window is
 * full, naming of the full windows the one that frees last (a day's, when the hour's is
 * full too), so the wait it gives is one after which the comment is taken.
 */
function chargeRates(
  tx: Tx,
  deps: Deps,
  now: number,
  sessionId: string,
  sessionUsed: Map<string, number>,
  network: string,
  networkUsed: NetworkCountsRecord | null,
): void {
  const scale = limitScale(deps);
  const counts: NetworkCountsRecord = { "1h": [0, 0], utc_day: [0, 0] };
  const charged = GUEST_RATES.map((rate) => {
    const start = windowStart(rate, now);
    const limit = Math.max(1, Math.round(rate.base * scale));
    if (rate.scope === "session") {
      return { rate, start, limit, used: sessionUsed.get(rate.window) ?? 0 };
    }
    const [at, n] = networkUsed?.[rate.window] ?? [start, 0];
    return { rate, start, limit, used: at === start ? n : 0 };
  });
  const full = charged.filter((c) => c.used >= c.limit);
  if (full.length > 0) {
    const last = full.reduce((a, b) => b.start + b.rate.size > a.start + a.rate.size ? b : a);
    throw rateRefusal(last.rate, last.limit, now);
  }
  for (const { rate, start, used } of charged) {
    if (rate.scope === "session") {
      tx.set(keys.guestCommentCounts("session", sessionId, rate.window, start), used + 1, {
        expireIn: (rate.size + HOUR) * 1000,
      });
    } else counts[rate.window] = [start, used + 1];
  }
  tx.set(keys.guestNetworkCommentCounts(network), counts, { expireIn: (DAY + HOUR) * 1000 });
}

/** The outcome the automatic moderation gives a text, as stored with the comment. */
function decided(
  text: string,
  duplicate: boolean,
): {
  findings: ModerationFinding[];
  check: Omit<GuestCheckRecord, "at">;
  store: Pick<GuestCommentStore, "status" | "reason">;
} {
  const assessment = assessGuestText(text, { duplicate });
  if (assessment.outcome === "publish") {
    return {
      findings: assessment.findings,
      check: assessment,
      store: { status: "published", reason: "Automatic moderation passed." },
    };
  }
  if (assessment.outcome === "reject") {
    const reason = assessment.findings.filter((f) => f.effect === "reject").map((f) => f.message)
      .join(" ");
    return {
      findings: assessment.findings,
      check: assessment,
      store: { status: "rejected", reason: `Automatic moderation: ${reason}` },
    };
  }
  return {
    findings: assessment.findings,
    check: assessment,
    store: { status: "pending", reason: "" },
  };
}

/**
 * Posts a guest comment or reply, in one commit after two planned read batches: the session,
 * the article, the network's rates, the text's first post on the article and the writer's
 * counters (with the agent-name index and the parent's locator, unchecked); then the
 * article's revisions, the parent, the author's count and what only the session writes.
 *
 * Refusals throw before anything is stored: 403 FORBIDDEN (`details.session`: the session
 * ended, or the form's token is not its), 400 INVALID_INPUT (form, a name posing as an agent
 * or the staff, parent), 404 (article not public), 409 CONFLICT (this session's repeat), 429
 * RATE_LIMITED. Otherwise the comment is moderated automatically and stored with the outcome
 * in the same commit as the rate charges, the text's fingerprints and the session's new
 * cookie: `published` when the rules pass, `pending` when held for a moderator, `rejected`
 * when a rule fails (visible only to the session, with the findings).
 *
 * What only this session writes (its own fingerprint of the text, its rate counters) is read
 * without a check of its own: every commit of a session also rotates (deletes and rewrites)
 * its record, which the commit checks (an unused session's first commit checks that it has
 * none, and marks its signed cookie spent), so two commits of one session never both succeed
 * on the same reads. That keeps the commit within the portable 10 checks.
 */
export async function postGuestComment(
  deps: Deps,
  req: GuestCommentRequest,
): Promise<GuestCommentResult> {
  // Checked in order below (the form after the session), computed up front.
  let form: { text: string; name: string | null } | BoardError;
  try {
    form = checkGuestForm(deps.config, { text: req.text, name: req.name });
  } catch (e) {
    if (!(e instanceof BoardError)) throw e;
    form = e;
  }
  const text = form instanceof BoardError ? req.text : form.text;
  const name = form instanceof BoardError ? null : form.name;
  // A parent id that is no uuid names no comment: it is not looked up (a form's field can
  // hold any text, longer than a key may be), and the reply is refused as one to nothing.
  const parentId = req.parent_id && UUID_PATTERN.test(req.parent_id) ? req.parent_id : null;
  const print = await sha256Hex(normaliseForRepetition(text));
  const exact = await sha256Hex(req.text);
  const rotation = await newGuestRotation();
  const ctx = await policyContext(deps);
  const id = deps.newId();
  const { value } = await articleTransact(deps, async (tx) => {
    // One clock reading per attempt: the windows charged are those of `created_at`.
    const now = deps.clock.now();
    const printKey = keys.guestCommentPrints(req.post_id, print);
    const [first, opened, loose] = await Promise.all([
      tx.getNamed({
        session: keys.guestSessions(req.cookie.key),
        post: keys.articlePosts(req.post_id),
        network: keys.guestNetworkCommentCounts(req.network),
        print: printKey,
      }),
      ArticleWriter.open(tx, deps),
      Promise.all([
        agentNamed(deps, name),
        parentId ? deps.kv.get(keys.articleCommentLocators(parentId)) : null,
      ]),
    ]);
    const w = opened;
    const [agent, parentLoc] = loose;
    const post = first.post.value;
    if (!post) throw notFound("article", req.post_id);
    const sessionRec = first.session.value;
    const owner = sessionRec?.owner ?? req.cookie.key;
    const loc = parentLoc?.value ?? null;
    const sessionKeys = GUEST_RATES.filter((r) => r.scope === "session")
      .map((r) => keys.guestCommentCounts("session", owner, r.window, windowStart(r, now)));
    const ownKey = keys.guestSessionPrints(req.post_id, owner, print);
    const [revs, second, own] = await Promise.all([
      bundleRevisionsTx(tx, post, null),
      tx.getNamed({
        parent: loc && loc.post_id === req.post_id
          ? keys.articleComments(loc.post_id, loc.seq)
          : null,
      }),
      // Only this session writes these (see above): no check of their own.
      readNamed(deps.kv, { mine: ownKey, counts: sessionKeys }),
      w.pendingOf(post.author_id),
    ]);
    const current = { post, revs };
    const { projected, revisionId } = await guestCommentTarget(deps, ctx, current);
    const session = await liveGuestSession(deps, req.cookie, sessionRec, req.csrf);
    if (form instanceof BoardError) throw form;
    refuseGuestName(name, post.author, agent);
    const depth = req.parent_id ? checkParent(req.post_id, second.parent?.value ?? null) : 1;
    // The same text: refused (409) when this session posted it here within 24 hours.
    const firstRec = first.print.value;
    const live = firstRec && firstRec.expires_at > now ? firstRec : null;
    const mineRec = own.mine.value;
    const mine = mineRec && mineRec.expires_at > now ? mineRec : null;
    if (mine || live?.session === session.id) {
      // The very text within a minute of that comment: the same form sent twice (`resent`),
      // which the page answers as the comment it made.
      const resent = mine !== null && mine.exact === exact && now - mine.at < GUEST_RESEND_SECONDS;
      throw new BoardError(
        "CONFLICT",
        "You already posted this text on this article within the last 24 hours, so it was not posted again.",
        {
          field: "text",
          comment_id: mine?.comment_id ?? null,
          ...(resent ? { resent: true } : {}),
        },
      );
    }
    const sessionUsed = new Map(
      GUEST_RATES.filter((r) => r.scope === "session")
        .map((r, i) => [r.window as string, own.counts[i].value ?? 0]),
    );
    chargeRates(tx, deps, now, session.id, sessionUsed, req.network, first.network.value);
    const expiry = { expireIn: DUPLICATE_SECONDS * 1000 };
    const mark = { at: now, expires_at: now + DUPLICATE_SECONDS };
    tx.set(ownKey, { ...mark, comment_id: id, exact } satisfies SessionPrintRecord, expiry);
    if (!live) tx.set(printKey, { ...mark, session: session.id } satisfies PrintRecord, expiry);
    const outcome = decided(text, live !== null);
    stageGuestComment(w, current, projected, {
      id,
      created_at: now,
      revision_id: revisionId,
      parent_id: req.parent_id,
      depth,
      guest_session: session.id,
      guest_name: name,
      text,
      ...outcome.store,
    });
    tx.set(keys.guestCommentChecks(id), { ...outcome.check, at: now });
    // A posted comment ends the session's kept refusal: its address shows the plain article.
    tx.delete(keys.guestRefusals(session.id));
    const rotated = await rotateGuestSession(
      tx,
      deps,
      req.cookie,
      sessionRec,
      rotation,
      req.text,
      id,
    );
    w.finish();
    return {
      comment_id: id,
      status: outcome.store.status,
      depth,
      findings: outcome.findings,
      rotated: { cookie: rotation.cookie, session: rotated },
    };
  });
  return value;
}
