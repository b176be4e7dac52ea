/**
 * Scanning the agent event log (domain/agent_events.ts) for one account: entries that do not
 * concern the account, or whose items are no longer visible, are stepped over. A request
 * examines at most `SCAN_BUDGET` entries; domain/inbox/page.ts makes the page and its cursors.
 */
import { keys } from "../../kv/keys.ts";
import { listTyped, type TypedListSelector } from "../../kv/read_many.ts";
import type { AgentEventEntry } from "../agent_events.ts";
import type { PageParams } from "../paging.ts";

/** Entries one list call returns at most (one KV round trip). */
const SCAN_BATCH = 500;
/** Entries one request examines at most. */
export const SCAN_BUDGET = 2000;

/** One log entry as read: its position and its events. */
export interface LogEntry {
  seq: number;
  entry: AgentEventEntry;
}

/** Turns the entries of one list call into the visible items they hold for the account. */
type Resolve<T> = (entries: LogEntry[]) => Promise<T[]>;

async function listLog(
  kv: Deno.Kv,
  range: { after?: number; before?: number; from?: number },
  limit: number,
  reverse: boolean,
): Promise<LogEntry[]> {
  const prefix = keys.agentEvents.range();
  const selector: TypedListSelector<typeof prefix> = range.from !== undefined
    ? { prefix, start: keys.agentEvents(range.from) }
    : range.after !== undefined
    ? { prefix, start: keys.agentEvents(range.after + 1) }
    : range.before !== undefined
    ? { prefix, end: keys.agentEvents(range.before) }
    : { prefix };
  const out: LogEntry[] = [];
  const iter = listTyped(kv, selector, { limit, reverse, batchSize: limit });
  for await (const e of iter) out.push({ seq: e.key[1] as number, entry: e.value });
  return out;
}

/** What one scan of the log found: the visible items, in scan order, and how far it looked. */
interface LogScan<T> {
  /** Items found, in scan order (oldest first with `after`, newest first otherwise). */
  found: T[];
  /** The lowest and highest positions examined (null: none). */
  lowest: number | null;
  highest: number | null;
  /** True when the log holds nothing further in the scan's direction. */
  exhausted: boolean;
  /**
   * `after` only: true when the log ends before the cursor's position (no answer gave it). The
   * first list starts at the position itself, so this costs no read of its own.
   */
  beyond: boolean;
}

/**
 * Scans the log from a cursor (`after`: upwards, otherwise downwards from `before` or the
 * newest entry) until more than `limit` items are found, the log ends, or `SCAN_BUDGET`
 * entries were examined.
 *
 * The first list decides: when its entries that concern the account (`concerns`, counted in
 * memory) do not fill the page, the rest of the budget is listed at once, as key ranges
 * beyond it read in parallel (positions have no gaps: domain/agent_events.ts), while the
 * first entries are resolved; so a page takes the first list, then one more round, then the
 * last resolution, whatever the budget.
 */
export async function scanLog<T>(
  kv: Deno.Kv,
  params: PageParams,
  resolve: Resolve<T>,
  concerns: (entries: LogEntry[]) => Promise<number>,
): Promise<LogScan<T>> {
  const up = params.after !== undefined;
  const { first, reached, beyond } = up ? await firstAbove(kv, params.after!) : {
    ...firstBelow(await listLog(kv, { before: params.before }, SCAN_BATCH, true)),
    beyond: false,
  };
  const resolving = resolve(first);
  resolving.catch(() => {}); // awaited below; a refused caller rejects `concerns` first
  let rest: LogEntry[] = [];
  let exhausted = reached === null;
  if (reached !== null && await concerns(first) <= params.limit) {
    const left = SCAN_BUDGET - first.length;
    ({ rest, exhausted } = await (up ? listAbove : listBelow)(kv, reached, left));
  }
  const [found, more] = await Promise.all([resolving, rest.length ? resolve(rest) : []]);
  const all = [...first, ...rest];
  const seqs = all.map((e) => e.seq);
  return {
    found: [...found, ...more],
    lowest: all.length ? Math.min(...seqs) : null,
    highest: all.length ? Math.max(...seqs) : null,
    exhausted,
    beyond,
  };
}

/**
 * A first list and the position it reached when it was full (the rest of the scan goes on
 * beyond it), or null when the log ended within it.
 */
interface FirstList {
  first: LogEntry[];
  reached: number | null;
  /** `after` only: the log ends before the cursor's position (no answer gave it). */
  beyond: boolean;
}

/** A first list read newest first (up to `SCAN_BATCH` entries). */
function firstBelow(listed: LogEntry[]): Omit<FirstList, "beyond"> {
  const full = listed.length === SCAN_BATCH;
  return { first: listed, reached: full ? listed[listed.length - 1].seq : null };
}

/**
 * A poll's first list, oldest first after `after`: one list of `SCAN_BATCH` entries (a list
 * reads at most that many in one round trip) that takes the cursor's own entry too: found, it
 * is dropped; with no entry from there on, the cursor is beyond the log's end, at no read of
 * its own.
 */
async function firstAbove(kv: Deno.Kv, after: number): Promise<FirstList> {
  const range = after > 0 ? { from: after } : { after };
  const listed = await listLog(kv, range, SCAN_BATCH, false);
  const full = listed.length === SCAN_BATCH;
  return {
    first: listed[0]?.seq === after ? listed.slice(1) : listed,
    reached: full ? listed[listed.length - 1].seq : null,
    beyond: after > 0 && listed.length === 0,
  };
}

/** What the rest of a scan listed beyond its first list, in scan order. */
interface Rest {
  rest: LogEntry[];
  /** True when the log holds nothing further in the scan's direction. */
  exhausted: boolean;
}

/** `count` positions from `from` on (upwards, or downwards), in ranges of one list each. */
function rangesFrom(from: number, count: number, up: boolean) {
  const ranges: Array<{ start: number; end: number }> = [];
  for (let done = 0; done < count; done += SCAN_BATCH) {
    const size = Math.min(SCAN_BATCH, count - done);
    const range = up
      ? { start: from + done, end: from + done + size }
      : { start: Math.max(1, from - done - size + 1), end: from - done + 1 };
    if (range.start >= range.end) break;
    ranges.push(range);
  }
  return ranges;
}

/** The next `count` entries below position `lowest`, newest first: ranges read in parallel. */
async function listBelow(kv: Deno.Kv, lowest: number, count: number): Promise<Rest> {
  const ranges = rangesFrom(lowest - 1, count, false);
  const lists = await Promise.all(ranges.map((r) => listRange(kv, r.start, r.end, true)));
  // Every position below the first list was taken before it: the ranges hold them all.
  const exhausted = ranges.length === 0 || ranges[ranges.length - 1].start <= 1;
  return { rest: lists.flat(), exhausted };
}

/**
 * The next `count` entries above position `highest`, oldest first: ranges read in parallel.
 * Positions are taken in order, so each range holds a run from its start; but a range read
 * after another may hold entries committed after the other was read: the scan keeps the
 * ranges up to the first that is not full (the log's end when it was read), so that what it
 * examined has no gap and a cursor past it skips nothing.
 */
async function listAbove(kv: Deno.Kv, highest: number, count: number): Promise<Rest> {
  const ranges = rangesFrom(highest + 1, count, true);
  const lists = await Promise.all(ranges.map((r) => listRange(kv, r.start, r.end, false)));
  const rest: LogEntry[] = [];
  for (const [i, list] of lists.entries()) {
    rest.push(...list);
    if (list.length < ranges[i].end - ranges[i].start) return { rest, exhausted: true };
  }
  return { rest, exhausted: false };
}

/** The log's entries at positions `start` to `end` (exclusive), in order: one list. */
async function listRange(
  kv: Deno.Kv,
  start: number,
  end: number,
  reverse: boolean,
): Promise<LogEntry[]> {
  const prefix = keys.agentEvents.range();
  const selector: TypedListSelector<typeof prefix> = {
    start: keys.agentEvents(start),
    end: keys.agentEvents(end),
  };
  const out: LogEntry[] = [];
  const iter = listTyped(kv, selector, {
    reverse,
    limit: end - start,
    batchSize: end - start,
  });
  for await (const e of iter) out.push({ seq: e.key[1] as number, entry: e.value });
  return out;
}
