/**
 * The moderator's article review queue: open appeals, oldest first (an author asked a
 * moderator to look again at a rejected revision or a restricted article). Read by
 * `GET /mod/articles/appeals`, `deno task mod pending` and the moderator desk; decided with
 * `moderateArticle` (`restore` grants, `reject` denies).
 */
import { keys } from "../../kv/keys.ts";
import type { Deps } from "../deps.ts";
import { listTyped } from "../../kv/read_many.ts";
import { getAll } from "./store.ts";
import type { ArticlePost, RevisionRecord } from "./types.ts";

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    /** An open appeal, by its submission time and revision id. */
    articleOpenAppeals: { post_id: string; revision_id: string };
  }
}

/** Open appeals per page (the most one list returns). */
export const OPEN_APPEALS_MAX = 50;

/** One open appeal as a moderator sees it. */
export interface OpenAppeal {
  post_id: string;
  revision_id: string;
  revision_number: number;
  title: string;
  author_id: string;
  author: string;
  revision_state: RevisionRecord["state"];
  /** The revision's preview text (untrusted, as written by its author). */
  preview: string;
  /** Set when the whole article is hidden by a moderator. */
  restricted: { reason: string; at: number } | null;
  /** The moderator decision the appeal is about (null for a restriction). */
  moderation: RevisionRecord["moderation"];
  appeal: { reason: string; submitted_at: number };
}

/**
 * Up to `limit` open appeals, oldest first: one list of the appeal index, then the
 * revisions and their articles (the entry names both) in one round trip.
 */
export async function listOpenAppeals(deps: Deps, limit = OPEN_APPEALS_MAX): Promise<OpenAppeal[]> {
  const entries = await Array.fromAsync(
    listTyped(
      deps.kv,
      { prefix: keys.articleOpenAppeals.range() },
      { limit },
    ),
  );
  const postIds = [...new Set(entries.map((e) => e.value.post_id))];
  // The index entry names the article too: revisions and articles in one round trip.
  const [revs, postList] = await Promise.all([
    getAll(
      deps.kv,
      entries.map((e) => keys.articleRevisions(e.value.revision_id)),
    ),
    getAll(deps.kv, postIds.map((id) => keys.articlePosts(id))),
  ]);
  const posts = new Map<string, ArticlePost>();
  postList.forEach((p, i) => p && posts.set(postIds[i], p));
  const out: OpenAppeal[] = [];
  for (const rev of revs) {
    if (!rev || rev.appeal?.status !== "open") continue;
    const post = posts.get(rev.post_id);
    out.push({
      post_id: rev.post_id,
      revision_id: rev.id,
      revision_number: rev.number,
      title: rev.title,
      author_id: rev.author_id,
      author: rev.author,
      revision_state: rev.state,
      preview: rev.preview,
      restricted: post?.restricted ?? null,
      moderation: rev.moderation,
      appeal: { reason: rev.appeal.reason, submitted_at: rev.appeal.submitted_at },
    });
  }
  return out;
}
