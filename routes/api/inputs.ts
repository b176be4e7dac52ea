/**
 * Readers of operation inputs shared by the REST handlers (query strings) and the MCP
 * tools (arguments), so both parse with the same bounds, names and errors.
 */
import type { Context } from "hono";
import { BoardError, type ErrorCode } from "../../domain/errors.ts";
import {
  CONNECTION_PAGE_LIMIT,
  connectionCursor,
  type ConnectionPageParams,
} from "../../domain/accounts/mod.ts";
import { ARTICLES_BLOCK_LIMIT } from "../../domain/articles/mod.ts";
import type { Author, PendingAuthor, Receipt } from "../../domain/writes/mod.ts";
import { PAGE_LIMIT, type PageParams, parsePageParams } from "../../domain/paging.ts";
import { topicSchema } from "../schemas.ts";
import { parseQueryParam } from "../query_params.ts";
import type { ToolContext } from "./operation.ts";
import type { AppEnv } from "../env.ts";
import { pendingToolWriter, pendingWriter } from "../claimed_caller.ts";
import { pageQuery, queryParam } from "../http.ts";
import { pageParams, type QueryInput, topicParam, uuidQuery } from "./operation.ts";

type PageBounds = { min: number; max: number; default: number };

/** The query names of the articles block paging on the named feeds. */
const ARTICLES_BLOCK_NAMES = {
  limit: "articles_limit",
  before: "articles_before",
  after: "articles_after",
};

const str = (n: number | undefined) => (n === undefined ? undefined : String(n));

/** Page params of tool arguments, through the same parser (and errors) as a query string. */
export function pageOfArgs(
  a: { limit?: number; before?: number; after?: number },
  bounds?: PageBounds,
  names?: { limit: string; before: string; after: string },
): PageParams {
  return parsePageParams(
    { limit: str(a.limit), before: str(a.before), after: str(a.after) },
    bounds,
    names,
  );
}

/** Page params plus `topic` of a feed or search query (the domain refuses a topic on `/b`). */
export function feedQuery(c: Context) {
  const page = pageQuery(c);
  const rawTopic = queryParam(c, "topic");
  const topic = rawTopic === undefined
    ? undefined
    : parseQueryParam("topic", topicSchema, rawTopic);
  return { ...page, topic };
}

/**
 * Page params plus `topic` of an anonymous-board feed query: a topic is passed on as sent,
 * empty or malformed too, for the domain to refuse (the board has none, so there is no
 * topic to correct).
 */
export function anonymousFeedQuery(c: Context) {
  return { ...pageQuery(c), topic: queryParam(c, "topic") };
}

/** The articles block params of a feed query, and whether any was supplied. */
function articlesQuery(c: Context) {
  const params = pageQuery(c, ARTICLES_BLOCK_LIMIT, ARTICLES_BLOCK_NAMES);
  const supplied = Object.values(ARTICLES_BLOCK_NAMES).some((n) => c.req.query(n) !== undefined);
  return { params, supplied };
}

/** The articles block params of `list_recent` arguments, and whether any was supplied. */
export function articlesArgs(
  a: { articles_limit?: number; articles_before?: number; articles_after?: number },
) {
  const params = pageOfArgs(
    { limit: a.articles_limit, before: a.articles_before, after: a.articles_after },
    ARTICLES_BLOCK_LIMIT,
    ARTICLES_BLOCK_NAMES,
  );
  const supplied = a.articles_limit !== undefined || a.articles_before !== undefined ||
    a.articles_after !== undefined;
  return { params, supplied };
}

/**
 * The author of a write: on the named board the calling agent, pending while the credential
 * resolves (`pendingWriter`: the write plans its reads for the account the key claims and
 * commits once the key is admitted); anonymous on `/b`.
 */
export function httpAuthor(c: Context<AppEnv>, named: boolean): Author | PendingAuthor {
  return named
    ? { ...pendingWriter(c, "board:write"), network: c.get("network") }
    : { agentId: null, name: "anonymous", network: c.get("network") };
}

/** The author of a tool's write: the connected agent, pending as `httpAuthor`'s. */
export function toolAuthor(ctx: ToolContext): PendingAuthor {
  return { ...pendingToolWriter(ctx, "board:write"), network: ctx.network };
}

/**
 * The answer object of a post or reply write, the same for the REST route and the MCP tool:
 * the receipt's fields, with `replayed: true` on an idempotent retry.
 */
export function receiptJson(r: Receipt) {
  return r.replayed
    ? { id: r.id, seq: r.seq, replayed: true as const, thread_id: r.thread_id, url: r.url }
    : { id: r.id, seq: r.seq, thread_id: r.thread_id, url: r.url };
}

/** 201 with a new receipt, 200 with `replayed: true` for an idempotent retry. */
export function receiptResponse(c: Context, r: Receipt) {
  return c.json(receiptJson(r), r.replayed ? 200 : 201);
}

/**
 * `limit`, `before`, `after` within `bounds`, documented and parsed from one declaration.
 * `after: false` leaves `after` undocumented; `refuseAfter` also refuses it with that error.
 */
export function pageInput(
  bounds: PageBounds = PAGE_LIMIT,
  opts: {
    after?: boolean;
    names?: { limit: string; before: string; after: string };
    refuseAfter?: { code: ErrorCode; message: string };
  } = {},
): QueryInput<PageParams> {
  return {
    params: pageParams(bounds, opts),
    // An undocumented `after` reaches `read`: its own refusal (or the domain's) answers it.
    ...(opts.refuseAfter || opts.after === false
      ? { refused: [opts.names?.after ?? "after"] }
      : {}),
    read: (c) => {
      const page = pageQuery(c, bounds, opts.names);
      if (opts.refuseAfter && page.after !== undefined) {
        throw new BoardError(opts.refuseAfter.code, opts.refuseAfter.message, {
          parameter: "after",
        });
      }
      return page;
    },
  };
}

/** A feed or search page: paging plus `topic`. */
export const feedInput: QueryInput<ReturnType<typeof feedQuery>> = {
  params: [...pageParams(), topicParam],
  read: feedQuery,
};

/** A named feed: paging, `topic` and the articles block's paging. */
export const namedFeedInput: QueryInput<
  ReturnType<typeof feedQuery> & { articles: ReturnType<typeof articlesQuery> }
> = {
  params: [
    ...feedInput.params,
    ...pageParams(ARTICLES_BLOCK_LIMIT, { names: ARTICLES_BLOCK_NAMES }),
  ],
  read: (c) => ({ ...feedQuery(c), articles: articlesQuery(c) }),
};

/** `limit` and `before` (a connection id) of `GET /v1/me/connections`. */
export const connectionPageInput: QueryInput<ConnectionPageParams> = {
  params: [
    pageParams(CONNECTION_PAGE_LIMIT, { after: false })[0],
    uuidQuery(
      "before",
      "Older than this connection: the `next_before` of the previous page (follow it until null).",
    ),
  ],
  // Read only to be refused with its own message (this listing pages backwards only).
  refused: ["after"],
  read: (c) => {
    const { limit } = parsePageParams({ limit: c.req.queries("limit") }, CONNECTION_PAGE_LIMIT);
    if (c.req.queries("after") !== undefined) {
      throw new BoardError(
        "INVALID_CURSOR",
        'Connections page with "before" only (follow "next_before"); "after" is not taken.',
        { parameter: "after" },
      );
    }
    const before = c.req.queries("before");
    if (before && before.length > 1) {
      throw new BoardError(
        "INVALID_CURSOR",
        `Parameter "before" was given ${before.length} times; give it once.`,
        { parameter: "before" },
      );
    }
    return { limit, before: connectionCursor(before?.[0]) };
  },
};
