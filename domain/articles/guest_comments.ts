/**
 * Posting a guest comment from the website (docs/website.md "Guest comments"): the form
 * rules, the name rules, the rates per session and per network (exact KV counters), the
 * same-session duplicate refusal, then the articles domain stores the comment `pending` and the
 * automatic moderation publishes it, keeps it pending for a moderator, or rejects it.
 */
import { keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";
import { createGuestComment, findComment, moderateComment } from "./comments.ts";
import { ARTICLE_LIMITS } from "./limits.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { checkGuestName } from "./guest_names.ts";
import { type GuestSession, newGuestRotation, stageGuestRotation } from "./guest_sessions.ts";
import {
  assessGuestText,
  checkGuestForm,
  type ModerationFinding,
  normaliseForRepetition,
} from "./guest_moderation.ts";
import { limitScale } from "../limits/mod.ts";
import { sha256Hex } from "../hashing.ts";
import { type GuestCheckRecord, publicArticleBundle } from "./threads.ts";

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
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    guestCommentPrints: PrintRecord;
    guestSessionPrints: SessionPrintRecord;
  }
}

interface GuestCommentRequest {
  post_id: string;
  parent_id: string | null;
  text: string;
  name: string;
  session: GuestSession;
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
  if (seconds < 90) return `${seconds} seconds`;
  if (seconds < 2 * HOUR) return `${Math.ceil(seconds / 60)} minutes`;
  return `${Math.ceil(seconds / HOUR)} hours`;
}

/** The parent of a reply, checked so the guest gets a clear message (the commit checks again). */
async function checkParent(deps: Deps, postId: string, parentId: string): Promise<void> {
  const parent = await findComment(deps.kv, parentId);
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
}

/**
 * Charges the four rates and records the text's fingerprints (the article's first post,
 * this session's post) in one commit. Refuses (409, nothing charged) a text this session
 * already posted on the article within 24 hours, whatever became of it — `details.comment_id`
 * names that comment once stored. Returns whether another session posted the same text
 * there first within 24 hours.
 */
async function admit(deps: Deps, req: GuestCommentRequest, print: string): Promise<boolean> {
  const now = deps.clock.now();
  const scale = limitScale(deps);
  const { value } = await transact(deps.kv, async (tx) => {
    const printKey = keys.guestCommentPrints(req.post_id, print);
    const ownKey = keys.guestSessionPrints(req.post_id, req.session.id, print);
    const [first, own] = await tx.getMany([printKey, ownKey]);
    const firstRec = first.value;
    const ownRec = own.value;
    const live = firstRec && firstRec.expires_at > now ? firstRec : null;
    const mine = ownRec && ownRec.expires_at > now ? ownRec : null;
    if (mine || live?.session === req.session.id) {
      throw new BoardError(
        "CONFLICT",
        "You already posted this text on this article within the last 24 hours, so it was not posted again.",
        { field: "text", comment_id: mine?.comment_id ?? null },
      );
    }
    for (const rate of GUEST_RATES) {
      const start = now - (now % rate.size);
      const id = rate.scope === "session" ? req.session.id : req.network;
      const key = keys.guestCommentCounts(rate.scope, id, rate.window, start);
      const used = (await tx.get<number>(key)).value ?? 0;
      const limit = Math.max(1, Math.round(rate.base * scale));
      if (used >= limit) {
        const wait = start + rate.size - now;
        const who = rate.scope === "session" ? "from this browser" : "from your network";
        const span = rate.window === "1h" ? "this hour" : "today (UTC)";
        throw new BoardError(
          "RATE_LIMITED",
          `${limit} comments were already posted ${who} ${span}, counting those held for a moderator or not published; you can post again in ${
            waitText(wait)
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
      tx.set(key, used + 1, { expireIn: (rate.size + HOUR) * 1000 });
    }
    const expiry = { expireIn: DUPLICATE_SECONDS * 1000 };
    const mark = { at: now, expires_at: now + DUPLICATE_SECONDS };
    tx.set(ownKey, { ...mark, comment_id: null } satisfies SessionPrintRecord, expiry);
    if (!live) tx.set(printKey, { ...mark, session: req.session.id } satisfies PrintRecord, expiry);
    return live !== null;
  });
  return value;
}

/**
 * After a failed store, removes this session's fingerprints of the text (its own, and the
 * article's first-post one when it is this session's), so the same text may be posted
 * again and counts for nobody as a duplicate. The rate charges stay.
 */
async function forgetPrints(deps: Deps, req: GuestCommentRequest, print: string): Promise<void> {
  await deps.kv.delete(keys.guestSessionPrints(req.post_id, req.session.id, print));
  const firstKey = keys.guestCommentPrints(req.post_id, print);
  const first = await deps.kv.get<PrintRecord>(firstKey);
  if (first.value?.session === req.session.id) {
    await deps.kv.atomic().check(first).delete(firstKey).commit();
  }
}

/** Names the stored comment in this session's fingerprint (for the 409's link to it). */
async function noteOwnComment(deps: Deps, key: Deno.KvKey, commentId: string): Promise<void> {
  const entry = await deps.kv.get<SessionPrintRecord>(key);
  if (!entry.value) return;
  const left = Math.max(1, entry.value.expires_at - deps.clock.now());
  // A lost race (the entry changed meanwhile) only loses the link, never the refusal.
  await deps.kv.atomic().check(entry)
    .set(key, { ...entry.value, comment_id: commentId }, { expireIn: left * 1000 }).commit();
}

/**
 * Posts a guest comment or reply. Refusals throw before anything is stored: 400
 * INVALID_INPUT (form, a name posing as an agent or the staff, parent), 404 (article not
 * public), 409 CONFLICT (this session's repeat), 429 RATE_LIMITED. Otherwise the comment is stored `pending` and moderated at
 * once: `published` when the rules pass, `pending` when held for a moderator,
 * `rejected` when a rule fails (visible only to the session, with the findings).
 */
export async function postGuestComment(
  deps: Deps,
  req: GuestCommentRequest,
): Promise<GuestCommentResult> {
  const { text, name } = checkGuestForm({ text: req.text, name: req.name });
  const bundle = await publicArticleBundle(deps, req.post_id);
  await checkGuestName(deps, name, bundle.post.author);
  if (req.parent_id) await checkParent(deps, req.post_id, req.parent_id);
  const print = await sha256Hex(normaliseForRepetition(text));
  const duplicate = await admit(deps, req, print);
  const ownKey = keys.guestSessionPrints(req.post_id, req.session.id, print);
  const rotation = await newGuestRotation();
  // Set by the commit that stores the comment (run again on each attempt).
  const staged: { session?: GuestSession } = {};
  const receipt = await createGuestComment(deps, {
    post_id: req.post_id,
    guest_session: req.session.id,
    guest_name: name,
    text,
    parent_id: req.parent_id,
    stage: async (tx) => staged.session = await stageGuestRotation(tx, deps, req.session, rotation),
  }).catch(async (e) => {
    await forgetPrints(deps, req, print);
    throw e;
  });
  await noteOwnComment(deps, ownKey, receipt.comment_id);
  const assessment = assessGuestText(text, { duplicate });
  const check: GuestCheckRecord = { ...assessment, at: deps.clock.now() };
  await deps.kv.set(keys.guestCommentChecks(receipt.comment_id), check);
  let status: GuestCommentResult["status"] = "pending";
  if (assessment.outcome === "publish") {
    status = (await moderateComment(
      deps,
      receipt.comment_id,
      "approve",
      "Automatic moderation passed.",
    )).status;
  } else if (assessment.outcome === "reject") {
    const reason = assessment.findings.filter((f) => f.effect === "reject").map((f) => f.message)
      .join(" ");
    status = (await moderateComment(
      deps,
      receipt.comment_id,
      "reject",
      `Automatic moderation: ${reason}`,
    )).status;
  }
  return {
    comment_id: receipt.comment_id,
    status,
    depth: receipt.depth,
    findings: assessment.findings,
    rotated: { cookie: rotation.cookie, session: staged.session! },
  };
}
