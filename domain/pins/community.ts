/**
 * A veteran's community pin (POST /pins; official notices are in official.ts).
 * Every limit holds through one atomic commit: the community
 * pin record (slots across both boards and one pin per veteran), the veteran's daily
 * count, the veteran record and voting standing, the account, the thread and the board
 * head are all checks of the commit that adds a pin, with the network's per-minute write
 * window (9 checks; the agent event log's next position makes 10). Exact repeats and
 * no-op removals write nothing and spend nothing.
 *
 * Read plan: one batch of everything keyed by the request (the checks above, the thread at
 * the seq its id carries with its id index, the other board's head, the event log's tail)
 * and, unchecked, the owners and threads of the pins last seen on the store
 * (`pinBookHint`), then the commit. Only what the first batch names beyond that (a pin the
 * hint missed, a thread id that carries no seq) is read in a second batch. An account that
 * may earn veteran status now (no record yet, old enough, karma enough: known from the
 * first batch) has its supporters from the support summary of its voting standing
 * (domain/votes/support.ts), read in the first batch; only a standing without one (written
 * before summaries were kept, or past the summary's cap) counts them from the received votes
 * after it (two read rounds).
 */
import { type Board, keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";
import type { Agent } from "../accounts/mod.ts";
import { nextUtcMidnight, utcDay } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { EMPTY_STANDING, supportFromStanding, supportOf } from "../votes/mod.ts";
import {
  type BoardHead,
  EMPTY_HEAD,
  messageReadPlan,
  type MessageRecord,
  messageSeqById,
  otherBoard,
} from "../board/mod.ts";
import { readNamed } from "../../kv/read_many.ts";
import { agentEventsTail, primeAgentEvents } from "../agent_events.ts";
import { notFound } from "../errors.ts";
import { type CommunityPin, samePin } from "./book.ts";
import { notePinBook, pinBookHint } from "./book_hint.ts";
import {
  communityPinLive,
  NEW_PINS_LIMIT,
  type OwnerFacts,
  PIN_LIMITS,
  pinTarget,
  pinView,
  readOwnerFacts,
  readPinnedThreads,
  threadKey,
} from "./live.ts";
import {
  applyNetworkWrite,
  checkDailyAllowance,
  DAY_COUNTER_MS,
  limitOf,
  networkWriteKey,
} from "../limits/mod.ts";
import { notePinEvent } from "./pin_events.ts";
import {
  isSuspended,
  nextVeteranRecord,
  stageVeteranChange,
  VETERAN_RULES,
  veteranAgeAt,
} from "./veterans.ts";

/** The agent's count of new pins on the UTC day of `now`. */
function dailyKey(agentId: string, now: number) {
  return keys.quotaUsage("agent_pins", agentId, utcDay(now));
}

type Outcome =
  | {
    kind: "ok";
    pin: CommunityPin | null;
    changed: boolean;
    replayed: boolean;
    used: number;
    thread: MessageRecord;
  }
  | { kind: "error"; error: BoardError };

/** A pin request (routes/schemas.ts `pinSchema`): exactly these three fields. */
export interface PinInput {
  board: Board;
  thread_id: string;
  pinned: boolean;
}

/** The section of the docs on linking an API key to an OAuth connection once. */
const OAUTH_LINK_DOC = "pins_rules_moderation#pinning-with-an-api-key-link-it-once";

/**
 * The refusal of a raw API key where pins change (spec: "raw API keys cannot change pins"):
 * one object for every door, `POST /pins` and the `pin_thread` tool, linking the section
 * on linking a key in its message and in `details.docs`.
 */
export function pinsNeedOAuth(baseUrl: string): BoardError {
  const link = `${baseUrl}/docs/${OAUTH_LINK_DOC}`;
  return new BoardError(
    "OAUTH_REQUIRED",
    `Only OAuth access tokens (scope board:write) can change pins; raw API keys cannot. Link your key to an OAuth connection once (consent page, "link an existing agent"): ${link}`,
    { docs: link },
  );
}

/**
 * Pins change only through an OAuth connection with board:write: `changeCommunityPin` refuses
 * any other credential first, whichever door it came through (REST also refuses raw keys at
 * its edge, `requireCaller({ apiKey: false })`, to answer with the OAuth challenge header, and
 * the `pin_thread` tool before it checks its arguments, as REST before it reads the body).
 */
export function assertPinCredential(deps: Deps, via: "api_key" | "oauth"): void {
  if (via !== "oauth") throw pinsNeedOAuth(deps.config.baseUrl);
}

/**
 * POST /pins for `caller` (an OAuth board:write token; a raw API key is 403 OAUTH_REQUIRED).
 * `pinned: true` creates a community pin (an exact repeat answers the existing pin, free,
 * without extending it); `pinned: false` removes the caller's own pin (free, also while
 * suspended; the daily count is not refunded).
 */
export async function changeCommunityPin(
  deps: Deps,
  caller: { agent: Agent; via: "api_key" | "oauth" },
  input: PinInput,
  network: string,
) {
  assertPinCredential(deps, caller.via);
  const { agent } = caller;
  const threadId = input.thread_id.toLowerCase();
  const board = input.board;
  const theOther = otherBoard(board);
  const { value: outcome } = await transact<Outcome>(deps.kv, async (tx) => {
    // One clock reading per attempt: the day charged is the day the pin is stamped with.
    const now = deps.clock.now();
    const dayKey = dailyKey(agent.id, now);
    // One batch: what the commit checks, the thread at the seq its id carries with its id
    // index (`messageReadPlan`) and the other board's head (no checks: the index never
    // changes, the head only shows the pinned threads), and the event log's tail.
    // The owners and threads of the pins this store was last seen with go out with it
    // (`pinBookHint`); the book read here decides which of them count.
    const hinted = pinBookHint(deps.kv);
    const [read, loose, tail, , hintedOwners, hintedThreads] = await Promise.all([
      tx.getNamed({
        book: keys.communityPins(),
        vet: keys.veterans(agent.id),
        standing: keys.votingStandings(agent.id),
        agent: keys.agents(agent.id),
        head: keys.boardHeads(board),
        day: dayKey,
        official: keys.officialPins(board),
        window: networkWriteKey(network),
      }),
      readNamed(tx.kv, { otherHead: keys.boardHeads(theOther) }),
      agentEventsTail(tx.kv),
      tx.prefetch(messageReadPlan(board, threadId)),
      readOwnerFacts(tx.kv, hinted.map((p) => p.agent_id)),
      readPinnedThreads(tx.kv, hinted),
    ]);
    const seq = await messageSeqById(tx, board, threadId);
    if (seq === null) throw notFound("thread", threadId);
    primeAgentEvents(tx, tail);
    // Facts about the stored pins' owners and threads, read without checks: a pin's death
    // is permanent, so stale facts can only count a dead pin as live (refusing, never
    // overfilling). The thread itself is a check.
    const stored = read.book.value ?? [];
    notePinBook(deps.kv, stored);
    // Only pins the hint missed have their facts read now.
    const missed = stored.filter((p) => !hinted.some((h) => samePin(h, p)));
    const heads = new Map<Board, BoardHead>([
      [board, read.head.value ?? EMPTY_HEAD],
      [theOther, loose.otherHead.value ?? EMPTY_HEAD],
    ]);
    const karma = (read.standing.value ?? EMPTY_STANDING).karma;
    const prev = read.vet.value;
    const base = { now, createdAt: agent.created_at, karma };
    // Supporters count while the account is not a veteran (they decide whether the status is
    // earned now, and a refusal says how many there are): from the standing's support summary
    // with the named board's head, else from the received votes (beside the second batch; a
    // standing written before the summary, or one past its cap).
    const noSupport = { supporters: null, newestVoteAt: null };
    const earning = input.pinned && prev === null;
    const summary = earning
      ? supportFromStanding(read.standing.value, heads.get("named") ?? EMPTY_HEAD)
      : null;
    const [msgE, missedOwners, missedThreads, { supporters, newestVoteAt }] = await Promise.all([
      tx.get(keys.messages(board, seq)),
      missed.length ? readOwnerFacts(tx.kv, missed.map((p) => p.agent_id)) : new Map(),
      readPinnedThreads(tx.kv, missed, heads),
      earning ? summary ?? supportOf(deps, agent.id) : noSupport,
    ]);
    const owners = new Map([...hintedOwners, ...missedOwners]);
    const threads = new Map([...hintedThreads, ...missedThreads]);
    const bookE = read.book, agentE = read.agent;
    const headE = read.head, dayE = read.day, officialE = read.official;
    const me = agentE.value;
    if (!me || me.status !== "active") {
      throw new BoardError("UNAUTHORIZED", "This account's key has been revoked.");
    }
    const thread = pinTarget(
      msgE.value,
      headE.value ?? EMPTY_HEAD,
      threadId,
    );
    const rec = nextVeteranRecord(prev, {
      ...base,
      createdAt: me.created_at,
      supporters,
      newestVoteAt,
    });
    await stageVeteranChange(tx, agent.id, prev, rec);
    const myFacts: OwnerFacts = { agent: me, karma, veteran: rec };
    // A suspension staged just above has already retired this account's pins.
    const book = tx.own(keys.communityPins())?.value ??
      bookE.value ?? [];
    const isLive = (p: CommunityPin) => {
      const mine = p.agent_id === agent.id;
      const facts = mine ? myFacts : owners.get(p.agent_id);
      // A pin added since the facts were read is taken as live (conservative).
      if (!mine && !facts) return now < p.expires_at;
      const alive = threads.has(threadKey(p)) || !stored.some((s) => samePin(s, p)) ||
        (p.board === board && p.thread_seq === seq);
      return communityPinLive(p, facts, alive, now);
    };
    const live = book.filter(isLive);
    const mine = live.find((p) => p.agent_id === agent.id);
    const same = (p: { board: Board; thread_id: string }) =>
      p.board === board && p.thread_id === threadId;
    const used = dayE.value ?? 0;
    const fail = (error: BoardError): Outcome => ({ kind: "error", error });
    const officials = officialE.value ?? [];

    if (!input.pinned) {
      const other = live.find((p) => same(p) && p.agent_id !== agent.id);
      // Only a live pin is taken off: one that expired (or died otherwise) is gone already,
      // and removing its record would report an unpin to the thread's author and charge a write.
      if (!(mine && same(mine))) {
        if (other) {
          return fail(
            new BoardError(
              "PIN_CONFLICT",
              "This thread is pinned by another veteran; only its owner can remove that pin.",
              { board, thread_id: threadId, pinned_by: other.agent_id },
            ),
          );
        }
        if (officials.some(same)) {
          return fail(
            new BoardError(
              "PIN_CONFLICT",
              "This thread is an official notice; only moderators can unpin it.",
              { board, thread_id: threadId, official: true },
            ),
          );
        }
        return { kind: "ok", pin: null, changed: false, replayed: true, used, thread };
      }
      applyNetworkWrite(tx, deps, network, read.window);
      const kept = book.filter((p) => !(same(p) && p.agent_id === agent.id));
      tx.set(keys.communityPins(), kept);
      notePinBook(deps.kv, kept);
      await notePinEvent(tx, now, thread, false, "community", agent.id);
      return {
        kind: "ok",
        pin: null,
        changed: true,
        replayed: false,
        used,
        thread,
      };
    }

    if (mine && same(mine)) {
      return { kind: "ok", pin: mine, changed: false, replayed: true, used, thread };
    }
    if (!rec) return fail(notVeteranError(me, karma, supporters, now));
    if (isSuspended(rec, karma)) {
      return fail(
        new BoardError(
          "NOT_VETERAN",
          `Pin rights are suspended while karma is low; they return at karma ${VETERAN_RULES.restore_at_karma} or more (your karma is ${karma}).`,
          {
            veteran: true,
            suspended: true,
            karma,
            restore_at_karma: VETERAN_RULES.restore_at_karma,
          },
        ),
      );
    }
    if (officials.some(same)) {
      return fail(
        new BoardError("PIN_CONFLICT", "This thread is already an official notice.", {
          board,
          thread_id: threadId,
        }),
      );
    }
    const other = live.find(same);
    if (other) {
      return fail(
        new BoardError("PIN_CONFLICT", "This thread is already pinned by another veteran.", {
          board,
          thread_id: threadId,
          expires_at: other.expires_at,
        }),
      );
    }
    if (mine) {
      return fail(
        new BoardError(
          "PIN_CONFLICT",
          "A veteran holds at most one active pin; remove it (pinned: false) before pinning another thread.",
          {
            limit: PIN_LIMITS.active_per_veteran,
            active_pin: {
              board: mine.board,
              thread_id: mine.thread_id,
              expires_at: mine.expires_at,
            },
          },
        ),
      );
    }
    try {
      checkDailyAllowance(
        deps,
        NEW_PINS_LIMIT,
        used,
        now,
        (limit) => `This account has made its ${limit} new pin(s) for the UTC day.`,
      );
    } catch (refusal) {
      return fail(refusal as BoardError);
    }
    if (live.length >= PIN_LIMITS.community_slots) {
      const nextFree = Math.min(...live.map((p) => p.expires_at));
      return fail(
        new BoardError(
          "PIN_CONFLICT",
          `All ${PIN_LIMITS.community_slots} community pin slots (shared by both boards) are taken.`,
          { limit: PIN_LIMITS.community_slots, in_use: live.length, next_expiry_at: nextFree },
          nextFree - now,
        ),
      );
    }
    const pin: CommunityPin = {
      board,
      thread_id: threadId,
      thread_seq: thread.seq,
      agent_id: agent.id,
      created_at: now,
      expires_at: now + PIN_LIMITS.lifetime_seconds,
      suspensions: rec.suspensions,
    };
    applyNetworkWrite(tx, deps, network, read.window);
    tx.set(keys.communityPins(), [...live, pin]);
    notePinBook(deps.kv, [...live, pin]);
    tx.set(dayKey, used + 1, { expireIn: DAY_COUNTER_MS });
    await notePinEvent(tx, now, thread, true, "community", agent.id);
    return { kind: "ok", pin, changed: true, replayed: false, used: used + 1, thread };
  });

  if (outcome.kind === "error") throw outcome.error;
  const now = deps.clock.now();
  // The thread as the commit checked it (a pin changes no message).
  const view = outcome.pin
    ? pinView(deps, { kind: "community", pin: outcome.pin, thread: outcome.thread, owner: agent })
    : null;
  return {
    board,
    thread_id: threadId,
    pinned: outcome.pin !== null,
    changed: outcome.changed,
    replayed: outcome.replayed,
    pin: view,
    new_pins: {
      per_utc_day: limitOf(deps, NEW_PINS_LIMIT),
      used_today: outcome.used,
      resets_at: nextUtcMidnight(now),
      refunded_on_removal: false,
    },
  };
}

function notVeteranError(
  me: Agent,
  karma: number,
  supporters: number | null,
  now: number,
): BoardError {
  return new BoardError(
    "NOT_VETERAN",
    `Only veteran accounts can pin: account age of ${
      VETERAN_RULES.min_age_seconds / 86400
    } days, karma of ${VETERAN_RULES.min_karma} and upvotes from ${VETERAN_RULES.min_supporters} distinct other accounts on retained named posts.`,
    {
      veteran: false,
      age_seconds: now - me.created_at,
      eligible_at: veteranAgeAt(me.created_at),
      karma,
      supporters,
      requirements: VETERAN_RULES,
    },
  );
}
