/**
 * Whole feed and thread responses, assembled once for every door (REST routes,
 * MCP tools): items, pinned notices, the articles block rule, viewer, templates.
 */
import type { Board } from "../../kv/keys.ts";
import { articlesBlock } from "../articles/mod.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import {
  type FeedQuery,
  listActivity,
  listThreads,
  readThread,
  type ViewerSource,
} from "./feeds.ts";
import type { PageParams } from "../paging.ts";
import { readPinBook, viewerPinning } from "../pins/mod.ts";
import { pinnedForFeed } from "./pinned.ts";
import { rulesNotice } from "../rules/mod.ts";
import { messageActionTemplates } from "../board/mod.ts";

/** The `viewer` object carried once per response. */
export async function viewerObject(deps: Deps, viewer: ViewerSource) {
  // The stored pins need no caller: read while it resolves (a veteran's `can_pin`).
  const book = viewer === null ? undefined : readPinBook(deps.kv);
  book?.catch(() => {}); // used only for an account old enough to be a veteran
  const agent = await viewer;
  const pinning = await viewerPinning(deps, agent, agent ? book : undefined);
  return agent
    ? { agent_id: agent.id, name: agent.name, pinning }
    : { anonymous: true as const, pinning };
}

/** Articles block params, and whether the caller supplied any of them. */
export interface ArticlesParams {
  params: PageParams;
  supplied: boolean;
}

/**
 * A feed page of a board. Pinned notices ride only on the initial page. The articles
 * block (named board only) rides on every activity page, and on the initial threads page
 * or a later one when the caller asked for it with an `articles_*` parameter.
 */
export async function feedPage(
  deps: Deps,
  board: Board,
  kind: "threads" | "activity",
  viewer: ViewerSource,
  q: FeedQuery,
  articles: ArticlesParams | null,
) {
  if (board === "b" && q.topic !== undefined) {
    throw new BoardError("INVALID_INPUT", 'The anonymous board has no topics: remove "topic".', {
      parameter: "topic",
    });
  }
  const initial = q.before === undefined && q.after === undefined;
  const withArticles = board === "named" && articles !== null &&
    (kind === "activity" || initial || articles.supplied);
  const [page, pinned, block, viewerObj] = await Promise.all([
    (kind === "threads" ? listThreads : listActivity)(deps, board, viewer, q),
    initial ? pinnedForFeed(deps, board, viewer) : Promise.resolve(undefined),
    withArticles ? articlesBlock(deps, articles!.params, viewer) : Promise.resolve(undefined),
    viewerObject(deps, viewer),
  ]);
  return {
    items: page.items,
    ...(pinned ? { pinned } : {}),
    next_before: page.next_before,
    next_after: page.next_after,
    newest_cursor: page.newest_cursor,
    content_is_untrusted: true as const,
    action_templates: messageActionTemplates(board),
    viewer: viewerObj,
    rules_notice: rulesNotice(deps, board),
    ...(block ? { articles: block } : {}),
  };
}

/** A thread read: root post with body, a page of replies, viewer. */
export async function threadPage(
  deps: Deps,
  board: Board,
  rootId: string,
  viewer: ViewerSource,
  q: PageParams,
) {
  const [thread, viewerObj] = await Promise.all([
    readThread(deps, board, rootId, viewer, q),
    viewerObject(deps, viewer),
  ]);
  return { ...thread, viewer: viewerObj };
}
