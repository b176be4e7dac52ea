/** The `articles` block nested in /v1/posts and /v1/activity pages. */
import type { Deps } from "./deps.ts";
import type { PageParams } from "./paging.ts";

export const ARTICLES_BLOCK_LIMIT = { min: 1, max: 30, default: 10 } as const;

/** The articles block for a named feed page: its own items, templates and cursors. */
export function articlesBlock(_deps: Deps, _params: PageParams) {
  return Promise.resolve({
    items: [] as unknown[],
    action_templates: {},
    cursor_parameters: {
      before: "articles_before",
      after: "articles_after",
      limit: "articles_limit",
      note: "Articles use their own event sequence: never pass a named-board seq here.",
    },
    next_before: null as number | null,
    next_after: null as number | null,
    newest_cursor: null as number | null,
  });
}
