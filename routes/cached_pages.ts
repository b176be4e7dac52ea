/**
 * The hot reads through the read cache (domain/read_cache.ts), for every door: feed and
 * activity pages, thread reads and searches, as JSON text. A key names every input of
 * the read except the viewer (the cache keys by viewer itself). Each read is typed as the
 * schema of its answer, so the compiler checks it as `operation()` checks a handler's answer.
 */
import type { Board } from "../kv/keys.ts";
import type { Agent } from "../domain/accounts/mod.ts";
import type { Deps } from "../domain/deps.ts";
import {
  type ArticlesParams,
  feedPage,
  type FeedQuery,
  searchPage,
  type SearchQuery,
  threadPage,
} from "../domain/reads/mod.ts";
import type { PageParams } from "../domain/paging.ts";
import { cachedReadEarly } from "../domain/read_cache.ts";
import type { z } from "zod";
import type { feedPage as feedPageSchema, threadPageSchema } from "./api/responses/shared.ts";

/**
 * The caller of a read: known, or a promise while the credential resolves (the read's first
 * batch goes out meanwhile), with the account id it probably is (`likely`: null for none,
 * undefined when the credential does not say) so that a probable cache hit reads nothing.
 */
export interface ReadCaller {
  viewer: Agent | null | Promise<Agent | null>;
  likely?: string | null;
}

function pageKey(q: PageParams): string {
  return `${q.limit}|${q.before ?? ""}|${q.after ?? ""}`;
}

/** A feed page (`feedPage`) as JSON text. */
export function feedPageJson(
  deps: Deps,
  board: Board,
  kind: "threads" | "activity",
  caller: ReadCaller,
  q: FeedQuery,
  articles: ArticlesParams | null,
): Promise<string> {
  const a = articles ? `${pageKey(articles.params)}|${articles.supplied}` : "-";
  const key = `feed|${board}|${kind}|${pageKey(q)}|${JSON.stringify(q.topic ?? null)}|${a}`;
  return cached(
    deps,
    caller,
    key,
    (viewer): Promise<z.infer<typeof feedPageSchema>> =>
      feedPage(deps, board, kind, viewer, q, articles),
  );
}

/** A thread read (`threadPage`) as JSON text. */
export function threadPageJson(
  deps: Deps,
  board: Board,
  rootId: string,
  caller: ReadCaller,
  q: PageParams,
): Promise<string> {
  const key = `thread|${board}|${rootId}|${pageKey(q)}`;
  return cached(
    deps,
    caller,
    key,
    (viewer): Promise<z.infer<typeof threadPageSchema>> =>
      threadPage(deps, board, rootId, viewer, q),
  );
}

/** A search page (`searchPage`) as JSON text; an invalid query throws as before. */
export function searchPageJson(deps: Deps, caller: ReadCaller, q: SearchQuery): Promise<string> {
  const key = `search|${pageKey(q)}|${JSON.stringify([q.q ?? null, q.topic ?? null])}`;
  return cached(
    deps,
    caller,
    key,
    (viewer): Promise<z.infer<typeof feedPageSchema>> => searchPage(deps, viewer, q),
  );
}

function cached(
  deps: Deps,
  caller: ReadCaller,
  key: string,
  compute: (viewer: Promise<Agent | null>) => Promise<unknown>,
): Promise<string> {
  return cachedReadEarly(deps, caller.viewer, key, compute, caller.likely);
}
