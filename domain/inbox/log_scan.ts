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
 * Downwards, the first list decides: when its entries that concern the account (`concerns`,
 * counted in memory) do not fill the page, the rest of the budget is listed at once, as key
 * ranges below it read in parallel (positions have no gaps: domain/agent_events.ts), while the
 * first entries are resolved; so a page takes the first list, then one more round, then the
 * last resolution, whatever the budget. Upwards (polls, which rarely find more than one list
 * holds), list by list.
 */
export async function scanLog<T>(
  kv: Deno.Kv,
  params: PageParams,
  resolve: Resolve<T>,
  concerns: (entries: LogEntry[]) => Promise<number>,
): Promise<LogScan<T>> {
  if (params.after === undefined) return await scanDown(kv, params, resolve, concerns);
  const found: T[] = [];
  let cursor = params.after;
  let scanned = 0;
  let lowest: number | null = null;
  let highest: number | null = null;
  let exhausted = false;
  let beyond = false;
  // A poll's first list takes the cursor's own entry too: found, it is dropped; with no entry
  // from there on, the cursor is beyond the log's end.
  let checkFrom = params.after > 0 ? params.after : undefined;
  while (true) {
    const want = Math.min(SCAN_BATCH, SCAN_BUDGET - scanned);
    const range = checkFrom !== undefined ? { from: checkFrom } : { after: cursor };
    let batch = await listLog(kv, range, want + (checkFrom === undefined ? 0 : 1), false);
    if (checkFrom !== undefined) {
      beyond = batch.length === 0;
      batch = batch[0]?.seq === checkFrom ? batch.slice(1) : batch.slice(0, want);
      checkFrom = undefined;
    }
    scanned += batch.length;
    exhausted = batch.length < want;
    if (batch.length) {
      const first = batch[0].seq;
      const last = batch[batch.length - 1].seq;
      cursor = last;
      lowest = Math.min(lowest ?? Infinity, first, last);
      highest = Math.max(highest ?? -Infinity, first, last);
      found.push(...await resolve(batch));
    }
    if (found.length > params.limit || exhausted || scanned >= SCAN_BUDGET) break;
  }
  return { found, lowest, highest, exhausted, beyond };
}

/** `scanLog` downwards (the newest entries first, or those below `before`). */
async function scanDown<T>(
  kv: Deno.Kv,
  params: PageParams,
  resolve: Resolve<T>,
  concerns: (entries: LogEntry[]) => Promise<number>,
): Promise<LogScan<T>> {
  const first = await listLog(kv, { before: params.before }, SCAN_BATCH, true);
  const resolving = resolve(first);
  resolving.catch(() => {}); // awaited below; a refused caller rejects `concerns` first
  let rest: LogEntry[] = [];
  let exhausted = first.length < SCAN_BATCH;
  if (!exhausted && await concerns(first) <= params.limit) {
    // Below the first list's lowest position, the rest of the budget in parallel ranges.
    const below = first[first.length - 1].seq;
    const ranges: Array<{ start: number; end: number }> = [];
    for (let end = below; end > 1 && (SCAN_BATCH + below - end) < SCAN_BUDGET; end -= SCAN_BATCH) {
      ranges.push({ start: Math.max(1, end - SCAN_BATCH), end });
    }
    const lists = await Promise.all(ranges.map((r) => listRange(kv, r.start, r.end)));
    rest = lists.flat();
    exhausted = ranges.length === 0 || ranges[ranges.length - 1].start <= 1;
  }
  const [found, more] = await Promise.all([resolving, rest.length ? resolve(rest) : []]);
  const all = [...first, ...rest];
  const seqs = all.map((e) => e.seq);
  return {
    found: [...found, ...more],
    lowest: all.length ? Math.min(...seqs) : null,
    highest: all.length ? Math.max(...seqs) : null,
    exhausted,
    beyond: false,
  };
}

/** The log's entries at positions `start` to `end` (exclusive), newest first: one list. */
async function listRange(kv: Deno.Kv, start: number, end: number): Promise<LogEntry[]> {
  const prefix = keys.agentEvents.range();
  const selector: TypedListSelector<typeof prefix> = {
    start: keys.agentEvents(start),
    end: keys.agentEvents(end),
  };
  const out: LogEntry[] = [];
  const iter = listTyped(kv, selector, {
    reverse: true,
    limit: end - start,
    batchSize: end - start,
  });
  for await (const e of iter) out.push({ seq: e.key[1] as number, entry: e.value });
  return out;
}
