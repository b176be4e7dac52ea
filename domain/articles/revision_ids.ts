/**
 * Revision ids that start with their article's id. A new revision's id is its article's id
 * with a fresh last group (48 random bits): every revision of an article stored since lies in
 * one range of `article_revisions` keys, which a write lists beside its first batch
 * (`prefetchRevisionsOf`) instead of reading, after the article, the revisions it names. The
 * listing only plans reads: the article still names its revisions, and each one a decision
 * uses is checked by the commit. A revision the article names outside the range (an id made
 * before, a random UUID) is read by name, one round trip more. The id's first groups show the
 * article's creation time and id, which are public wherever the revision is.
 */
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import type { Deps } from "../deps.ts";
import { UUID_PATTERN } from "../ids.ts";
import { ARTICLE_LIMITS } from "./article_limits.ts";

/** The part of an article's id its revisions share: its first four groups and their dash. */
function sharedPrefix(postId: string): string | null {
  return UUID_PATTERN.test(postId) ? postId.slice(0, 24) : null;
}

/** A new revision's id for the article `postId`. */
export function revisionIdFor(deps: Deps, postId: string): string {
  const fresh = deps.newId();
  const prefix = sharedPrefix(postId);
  return prefix ? prefix + fresh.slice(24) : fresh;
}

/** Lists the keys of `base` whose last part starts with `prefix` into `tx` (planned reads). */
function prefetchPrefixed(tx: Tx, base: Deno.KvKey, prefix: string, limit: number): Promise<void> {
  return tx.prefetchList({ start: [...base, prefix], end: [...base, prefix + "\uffff"] }, limit);
}

/**
 * Starts listing the revisions stored under the article's prefix (a planned read of `tx`,
 * `Tx.prefetchList`): a later read of one of them costs no round trip. Nothing for an id
 * that is not a UUID.
 */
export function prefetchRevisionsOf(tx: Tx, postId: string): Promise<void> {
  const prefix = sharedPrefix(postId);
  if (!prefix) return Promise.resolve();
  // Another article whose id shares the first four groups (same millisecond and 26 random
  // bits) could fill some of the listing: its revisions are ignored, and one the article
  // names that the listing missed is read by name.
  return prefetchPrefixed(
    tx,
    keys.articleRevisions.range(),
    prefix,
    2 * ARTICLE_LIMITS.revisionsPerArticle,
  );
}

/**
 * Starts listing, from a revision's id alone, the article it belongs to and that article's
 * revisions (planned reads, as `prefetchRevisionsOf`). The revision record still decides: its
 * `post_id` is read through `tx`, and found here only when the ids share the prefix.
 */
export function prefetchArticleOfRevision(tx: Tx, revisionId: string): Promise<void> {
  const prefix = sharedPrefix(revisionId);
  if (!prefix) return Promise.resolve();
  return Promise.all([
    prefetchPrefixed(tx, keys.articlePosts.range(), prefix, 2),
    prefetchRevisionsOf(tx, revisionId),
  ]).then(() => {});
}
