/**
 * Search over the named board, answered from the inverted index (postings.ts).
 *
 * Every query token (and the topic filter, when given) is a posting list keyed by
 * message seq. The rarest list drives: it is read newest first (oldest first with
 * `after`) in chunks, each chunk narrowed by the other lists (scan.ts), and
 * survivors are materialised from the message summaries: a missing summary is a removed
 * message, and messages of roots still being purged are hidden. A page stops after
 * `limit + 1` matches, so a common token costs no more than a rare one; when matches are
 * sparse, a work budget caps the page and the cursor says where the next page resumes
 * (docs/search.md).
 */
import { keys } from "../../kv/keys.ts";
import type { Agent } from "../accounts/agents.ts";
import type { Deps } from "../deps.ts";
import { viewerObject } from "../board/feed_pages.ts";
import { toItems } from "../board/feeds.ts";
import { type BoardHead, EMPTY_HEAD, type MessageRecord } from "../board/messages.ts";
import type { Page, PageParams } from "../paging.ts";
import { type PostingList, scan, Scanner, searchWorkBudget } from "./scan.ts";
import { readMany } from "../../kv/read_many.ts";
import { parseSearchQuery } from "./tokens.ts";
import { messageActionTemplates, type MessageItem } from "../board/views.ts";

export interface SearchQuery extends PageParams {
  /** The raw query text (validated here, before anything is read). */
  q: string | undefined;
  topic?: string;
}

interface SearchOptions {
  /** Work units the page may spend (default: `searchWorkBudget` of its list count). */
  workBudget?: number;
  /** When given, receives the work units and KV round trips the page spent. */
  stats?: { work: number; trips?: number };
}

async function readCounts(kv: Deno.Kv, countKeys: Deno.KvKey[]): Promise<number[]> {
  const entries = await readMany<Deno.KvU64>(kv, countKeys);
  return entries.map((e) => (e.value ? Number(e.value.value) : 0));
}

const EMPTY_PAGE: Page<MessageRecord> = {
  items: [],
  next_before: null,
  next_after: null,
  newest_cursor: null,
};

/**
 * Finds named messages (roots and replies) holding every query token, newest first,
 * paged by message seq exactly like the feeds. Validates `q` before any read.
 */
export async function searchRecords(
  deps: Deps,
  query: SearchQuery,
  options: SearchOptions = {},
): Promise<Page<MessageRecord>> {
  const terms = parseSearchQuery(query.q);
  const wanted: (Omit<PostingList, "count"> & { countKey: Deno.KvKey })[] = terms.map((t) => ({
    prefix: keys.searchPostingsPrefix(t),
    countKey: keys.searchTermCounts(t),
    term: t,
  }));
  if (query.topic !== undefined) {
    wanted.push({
      prefix: keys.searchTopicPostingsPrefix(query.topic),
      countKey: keys.searchTopicCounts(query.topic),
      topic: query.topic,
    });
  }
  const [headEntry, counts] = await Promise.all([
    deps.kv.get<BoardHead>(keys.boardHeads("named")),
    readCounts(deps.kv, wanted.map((w) => w.countKey)),
  ]);
  if (counts.some((n) => n === 0)) return EMPTY_PAGE;
  const lists: PostingList[] = wanted
    .map(({ countKey: _, ...w }, i) => ({ ...w, count: counts[i] }))
    .sort((a, b) => a.count - b.count);
  const head = headEntry.value ?? EMPTY_HEAD;
  const { limit } = query;
  const budget = options.workBudget ?? searchWorkBudget(lists.length);
  const scanner = new Scanner(deps.kv, Math.max(1, head.seq), budget, query.after !== undefined);
  const found = await scan(scanner, lists, head, query);
  if (options.stats) Object.assign(options.stats, { work: scanner.work, trips: scanner.trips });
  if (query.after !== undefined) {
    const page = found.matches.slice(0, limit);
    const highest = page.length ? page[page.length - 1].seq : null;
    return {
      items: page.reverse(),
      next_before: null,
      next_after: found.more ? highest : found.resumeAt,
      newest_cursor: highest,
    };
  }
  const items = found.matches.slice(0, limit);
  return {
    items,
    next_before: found.more ? items[items.length - 1].seq : found.resumeAt,
    next_after: null,
    newest_cursor: items.length ? items[0].seq : null,
  };
}

/** A search result page as feed items for a viewer. */
async function searchMessages(
  deps: Deps,
  viewer: Agent | null,
  query: SearchQuery,
  options: SearchOptions = {},
): Promise<Page<MessageItem>> {
  const page = await searchRecords(deps, query, options);
  return { ...page, items: page.items.length ? await toItems(deps, viewer, page.items) : [] };
}

/**
 * The whole search response for every door (REST route, MCP tool): the page with the
 * feeds' cursors, `content_is_untrusted`, action templates and viewer. No pinned notices,
 * rules notice or articles block.
 */
export async function searchPage(
  deps: Deps,
  viewer: Agent | null,
  query: SearchQuery,
  options: SearchOptions = {},
) {
  const page = await searchMessages(deps, viewer, query, options);
  return {
    items: page.items,
    next_before: page.next_before,
    next_after: page.next_after,
    newest_cursor: page.newest_cursor,
    content_is_untrusted: true as const,
    action_templates: messageActionTemplates("named"),
    viewer: await viewerObject(deps, viewer),
  };
}
