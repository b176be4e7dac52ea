/**
 * The whole answer of `GET /v1/me/activity` and its MCP twin: the items of the agent event
 * log that concern the account, merged with the votes it received (domain/inbox/
 * received_votes.ts), newest first.
 *
 * A cursor names a point in both: the log position in its low 30 bits, the count of received
 * votes above them (`activityCursor`). `after=c` lists log entries after c's position and
 * received votes above c's count; `before=c` log entries before c's position and received
 * votes up to c's count. A cursor of a store without received votes is a plain log position.
 * A received vote sits after the log entry at its anchor (on an `after` page, no lower than
 * the cursor's log position); both streams are read from their own part of the cursor, so no
 * item is skipped or repeated whatever the order in which commits landed.
 */
import type { Agent } from "../accounts/mod.ts";
import { messageActionTemplates } from "../board/mod.ts";
import type { Deps } from "../deps.ts";
import type { PageParams } from "../paging.ts";
import { type ActivityItem, concerningCount, resolveItems } from "./items.ts";
import { type LogEntry, scanLog } from "./log_scan.ts";
import { listReceived, type ReceivedEntry } from "./received_votes.ts";
import { readAsClaimed } from "../claimed_reads.ts";
import { agentEventsTail } from "../agent_events.ts";
import { BoardError } from "../errors.ts";
import { keys } from "../../kv/keys.ts";

/** Log positions below 2^30 take the low part of a cursor; received votes count above. */
const LOG_PART = 2 ** 30;

/** The cursor of log position `log` and received-vote count `votes`. */
function activityCursor(log: number, votes: number): number {
  return votes * LOG_PART + log;
}

function cursorParts(c: number) {
  return { log: c % LOG_PART, votes: Math.floor(c / LOG_PART) };
}

/** Where an item sits: a log entry at (position, 0), a received vote at (anchor, count). */
type Pos = readonly [number, number];
const compare = (a: Pos, b: Pos) => a[0] - b[0] || a[1] - b[1];

interface Placed {
  item: ActivityItem;
  pos: Pos;
}

/**
 * One page of `viewer`'s activity. A poll that finds nothing after its checkpoint reads the
 * log and the received votes once each, at the same time, and nothing else. The log names no
 * account, so its first list goes out while `caller` still resolves, and so do the received
 * votes of the account the credential claims (`claimedId`, `readAsClaimed`); the items of
 * both are resolved in one more round trip (domain/inbox/items.ts).
 */
export async function myActivityPage(
  deps: Deps,
  caller: Agent | Promise<Agent>,
  params: PageParams,
  claimedId: string | null = null,
) {
  const { limit } = params;
  const newer = params.after !== undefined;
  const from = newer
    ? cursorParts(params.after!)
    : params.before !== undefined
    ? cursorParts(params.before)
    : null;
  const resolve = async (entries: LogEntry[]) => resolveItems(deps, await caller, entries);
  const concerns = async (entries: LogEntry[]) => concerningCount(entries, (await caller).id);
  const [log, votes] = await Promise.all([
    scanLog(
      deps.kv,
      {
        limit,
        after: newer ? from!.log : undefined,
        before: !newer && from ? from.log : undefined,
      },
      resolve,
      concerns,
    ),
    readAsClaimed(
      caller,
      claimedId,
      (id) => listReceived(deps.kv, id, newer ? { after: from!.votes } : { atMost: from?.votes }),
    ).then(
      async (listed) => ({
        ...listed,
        // A received vote's entry goes through the same resolution, tagged by its count.
        items: await resolve(listed.entries.map((v) => ({ seq: -v.received, entry: v.entry }))),
      }),
    ),
  ]);
  const viewer = await caller;
  if (log.beyond || votes.beyond) throw await beyondActivity(deps, viewer, params.after!);
  // A vote's anchor is the log's tail when it was cast, read without a check: its commit can
  // land after later log entries that a poll already passed. Placed at its anchor, it would
  // give a cursor below that poll's and the next poll would repeat those entries; so a poll
  // places it no lower than its cursor's log position (after everything it has seen).
  const examined = newer
    ? votes.entries.map((v) => ({ ...v, anchor: Math.max(v.anchor, from!.log) }))
    : votes.entries;
  const anchorOf = new Map(examined.map((v) => [v.received, v.anchor]));
  const placed: Placed[] = [
    ...log.found.map((item) => ({ item, pos: [item.seq, 0] as const })),
    ...votes.items.map((item) => ({ item, pos: [anchorOf.get(-item.seq)!, -item.seq] as const })),
  ];
  const page = newer
    ? newerPage(placed, log, votes, examined, from!, limit)
    : olderPage(placed, log, votes, examined, limit);
  return {
    ...page,
    content_is_untrusted: true as const,
    action_templates: messageActionTemplates("named"),
    viewer: { agent_id: viewer.id, name: viewer.name },
  };
}

/**
 * 400 INVALID_CURSOR for an `after` beyond the log's end or the votes received (no answer of
 * this feed gave it: a message seq, or another feed's cursor), which would stay empty for
 * good; `details.newest_seq` is the feed's newest cursor, read for the refusal only.
 */
async function beyondActivity(deps: Deps, viewer: Agent, after: number): Promise<BoardError> {
  const [log, standing] = await Promise.all([
    agentEventsTail(deps.kv),
    deps.kv.get(keys.votingStandings(viewer.id)),
  ]);
  const newest = activityCursor(log, standing.value?.received ?? 0);
  return new BoardError(
    "INVALID_CURSOR",
    `Parameter "after" (${after}) is beyond your activity (its newest cursor is ${newest}): it is not a cursor of your activity (GET /v1/me/activity, or get_my_agent with kind "activity"; a message seq, or another feed's cursor?). Read without "after" and save the newest_cursor it answers.`,
    { parameter: "after", newest_seq: newest },
  );
}

interface Streams {
  exhausted: boolean;
}

/** The largest received count among `examined` placed before `pos`, or `floor`. */
function votesBefore(examined: ReceivedEntry[], pos: Pos, floor: number): number {
  let m = floor;
  for (const v of examined) {
    if (compare([v.anchor, v.received], pos) < 0) m = Math.max(m, v.received);
  }
  return m;
}

/** Gives each item its cursor: the point just after it (log part, received votes up to it). */
function cursorOf(p: Placed, examined: ReceivedEntry[], floor: number): number {
  const count = p.pos[1] > 0 ? p.pos[1] : votesBefore(examined, p.pos, floor);
  return activityCursor(p.pos[0], count);
}

/** Default and `before`: the newest items below the cursor, newest first. */
function olderPage(
  placed: Placed[],
  log: { lowest: number | null; highest: number | null } & Streams,
  votes: Streams,
  examined: ReceivedEntry[],
  limit: number,
) {
  // Examined newest first: the lowest examined is the last one.
  const lowest = examined.at(-1);
  // Only what no unexamined item of the other stream could sit above.
  const shown = placed.filter(({ pos }) =>
    pos[1] > 0
      ? log.exhausted || log.lowest === null || pos[0] >= log.lowest - 1
      : votes.exhausted || !lowest || pos[0] > lowest.anchor
  ).sort((a, b) => compare(b.pos, a.pos));
  const floor = lowest ? lowest.received - 1 : 0;
  const trimmed = shown.length > limit;
  const items = shown.slice(0, limit);
  for (const p of items) p.item.seq = cursorOf(p, examined, floor);
  let nextBefore: number | null;
  const edge = items.at(-1);
  if (trimmed && edge) {
    nextBefore = edge.pos[1] > 0 ? activityCursor(edge.pos[0] + 1, edge.pos[1] - 1) : edge.item.seq;
  } else if (log.exhausted && votes.exhausted && shown.length === placed.length) {
    nextBefore = null;
  } else {
    const logBelow = Math.max(
      log.exhausted ? 0 : log.lowest ?? 0,
      !votes.exhausted && lowest ? lowest.anchor + 1 : 0,
    );
    const held = examined.filter((v) =>
      !log.exhausted && log.lowest !== null && v.anchor < log.lowest - 1
    );
    const votesUpTo = held.length ? held[0].received : floor;
    nextBefore = logBelow === 0 && votesUpTo === 0 ? null : activityCursor(logBelow, votesUpTo);
  }
  const topLog = log.highest ?? 0;
  const topVotes = examined[0]?.received ?? 0;
  return {
    items: items.map((p) => p.item),
    next_before: nextBefore,
    next_after: null,
    newest_cursor: log.highest === null && !examined.length
      ? null
      : activityCursor(topLog, topVotes),
  };
}

/** `after`: the nearest items above the cursor, newest first within the page. */
function newerPage(
  placed: Placed[],
  log: { highest: number | null } & Streams,
  votes: Streams,
  examined: ReceivedEntry[],
  from: { log: number; votes: number },
  limit: number,
) {
  // Examined oldest first: the highest examined is the last one.
  const highest = examined.at(-1);
  const logTop = log.highest ?? from.log;
  const shown = placed.filter(({ pos }) =>
    pos[1] > 0
      ? log.exhausted || pos[0] <= logTop
      : votes.exhausted || !highest || pos[0] <= highest.anchor
  ).sort((a, b) => compare(a.pos, b.pos));
  const trimmed = shown.length > limit;
  const items = shown.slice(0, limit);
  for (const p of items) p.item.seq = cursorOf(p, examined, from.votes);
  let newest: number | null;
  const done = log.exhausted && votes.exhausted;
  if (trimmed) {
    newest = items.at(-1)!.item.seq;
  } else if (log.highest === null && !examined.length) {
    newest = null;
  } else {
    const logDone = votes.exhausted || !highest ? logTop : Math.min(logTop, highest.anchor);
    const counted = examined.filter((v) => log.exhausted || v.anchor <= logTop);
    const votesDone = counted.length ? counted.at(-1)!.received : from.votes;
    newest = activityCursor(logDone, votesDone);
  }
  return {
    items: items.map((p) => p.item).reverse(),
    next_before: null,
    next_after: trimmed || !done ? newest : null,
    newest_cursor: newest,
  };
}
