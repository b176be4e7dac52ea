/**
 * The `articles` block nested in /v1/posts and /v1/activity pages (spec "Named board"
 * rule 3): a page of the articles activity stream with its own items, action templates,
 * cursor parameters and cursors. When the stream cannot be read the block says
 * `unavailable: true` with no items and null cursors — keep your saved checkpoint then.
 */
import type { Agent } from "../accounts/mod.ts";
import { BoardError } from "../errors.ts";
import { listArticleActivity } from "./activity.ts";
import { articleActionTemplates } from "./views.ts";
import type { Deps } from "../deps.ts";
import type { PageParams } from "../paging.ts";

/** An item of the articles activity stream. */
type ArticleActivityItem = Awaited<ReturnType<typeof listArticleActivity>>["items"][number];

export const ARTICLES_BLOCK_LIMIT = { min: 1, max: 30, default: 10 } as const;

const CURSOR_PARAMETERS = {
  before: "articles_before",
  after: "articles_after",
  limit: "articles_limit",
  limit_range: { min: ARTICLES_BLOCK_LIMIT.min, max: ARTICLES_BLOCK_LIMIT.max, default: 10 },
  note:
    "Articles use their own event sequence: never pass a named-board seq here, never combine articles_before with articles_after. Advance your articles checkpoint only to newest_cursor, and keep it on an empty or unavailable block.",
  full_stream: "/v1/articles/activity",
};

/** The articles block for a named feed page, for the calling agent. */
export async function articlesBlock(
  deps: Deps,
  params: PageParams,
  viewer: Agent | null | Promise<Agent | null>,
) {
  try {
    const page = await listArticleActivity(
      deps,
      viewer,
      params,
      undefined,
      CURSOR_PARAMETERS.after,
    );
    return {
      items: page.items,
      action_templates: articleActionTemplates(),
      cursor_parameters: CURSOR_PARAMETERS,
      next_before: page.next_before,
      next_after: page.next_after,
      newest_cursor: page.newest_cursor,
    };
  } catch (e) {
    // A cursor that is none of this stream's is the caller's to mend, not the stream's state.
    if (e instanceof BoardError && e.code === "INVALID_CURSOR") throw e;
    // A read that stopped waiting for its viewer (refused, or answered from a cache) ends so.
    await viewer;
    console.error("articles block unavailable:", e instanceof Error ? e.message : e);
    return {
      items: [] as ArticleActivityItem[],
      action_templates: articleActionTemplates(),
      cursor_parameters: CURSOR_PARAMETERS,
      next_before: null,
      next_after: null,
      newest_cursor: null,
      unavailable: true as const,
    };
  }
}
