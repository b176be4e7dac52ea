/**
 * Paging over the agent event log (domain/agent_events.ts) for one account, with the board's
 * cursor rules: entries that do not concern the account, or whose items are no longer
 * visible, are stepped over, and the cursors are positions in the log. A request examines
 * at most `SCAN_BUDGET` entries; a page cut by that budget says where to go on.
 */
import { keys } from "../../kv/keys.ts";
import type { AgentEventEntry } from "../agent_events.ts";
import type { Page, PageParams } from "../paging.ts";

/** Entries one list call returns at most (one KV round trip). */
export const SCAN_BATCH = 500;
/** Entries one request examines at most. */
export const SCAN_BUDGET = 2000;

/** One log entry as read: its position and its events. */
export interface LogEntry {
  seq: number;
  entry: AgentEventEntry;
}

/** Turns the entries of one list call into the visible items they hold for the account. */
export type Resolve<T> = (entries: LogEntry[]) => Promise<T[]>;

async function listLog(
  kv: Deno.Kv,
  range: { after?: number; before?: number },
  limit: number,
  reverse: boolean,
): Promise<LogEntry[]> {
  const prefix = keys.agentEvents.range();
  const selector: Deno.KvListSelector = range.after !== undefined
    ? { prefix, start: keys.agentEvents(range.after + 1) }
    : range.before !== undefined
    ? { prefix, end: keys.agentEvents(range.before) }
    : { prefix };
  const out: LogEntry[] = [];
  const iter = kv.list<AgentEventEntry>(selector, { limit, reverse, batchSize: limit });
  for await (const e of iter) out.push({ seq: e.key[1] as number, entry: e.value });
  return out;
}

/**
 * One page of the account's items (newest first). `after`: the nearest newer items;
 * `newest_cursor` is the highest position returned, or, when every item after the
 * checkpoint is on the page, the highest position examined (so a poll that finds nothing
 * for the account still moves its checkpoint past what it examined); null when the log
 * holds nothing after the checkpoint. Default and `before`: older items, `newest_cursor`
 * the highest position examined.
 */
export async function scanPage<T extends { seq: number }>(
  kv: Deno.Kv,
  params: PageParams,
  resolve: Resolve<T>,
): Promise<Page<T>> {
  const { limit } = params;
  const newer = params.after !== undefined;
  const found: T[] = [];
  let cursor = newer ? params.after : params.before;
  let scanned = 0;
  let highest: number | null = null;
  let exhausted = false;
  while (true) {
    const want = Math.min(SCAN_BATCH, SCAN_BUDGET - scanned);
    const batch = await listLog(
      kv,
      newer ? { after: cursor } : { before: cursor },
      want,
      !newer,
    );
    scanned += batch.length;
    exhausted = batch.length < want;
    if (batch.length) {
      const last = batch[batch.length - 1].seq;
      cursor = last;
      highest = newer ? last : (highest ?? batch[0].seq);
      found.push(...await resolve(batch));
    }
    if (found.length > limit || exhausted || scanned >= SCAN_BUDGET) break;
  }
  // `found` runs oldest first with `after`, newest first otherwise.
  const trimmed = found.length > limit;
  const page = found.slice(0, limit);
  const edge = page.length ? page[page.length - 1].seq : null;
  if (newer) {
    const newest = trimmed ? edge : highest;
    return {
      items: page.reverse(),
      next_before: null,
      next_after: trimmed || !exhausted ? newest : null,
      newest_cursor: newest,
    };
  }
  return {
    items: page,
    next_before: trimmed ? edge : exhausted ? null : cursor ?? null,
    next_after: null,
    newest_cursor: highest,
  };
}
