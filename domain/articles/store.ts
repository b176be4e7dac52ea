/**
 * Reading and writing article records. Every change to an article goes through
 * `ArticleWriter` inside one `transact` commit, which keeps the post record, its
 * feed/queue/due index entries, the public counters, the per-author pending count and
 * the event sequence in step — never read-then-write.
 */
import { keys } from "../../kv/keys.ts";
import type { ValueOf } from "../../kv/key_values.ts";
import { readMany } from "../../kv/read_many.ts";
import type { Tx } from "../../kv/tx.ts";
import type { Deps } from "../deps.ts";
import { PART_UNITS } from "./article_limits.ts";
import type {
  ArticleEvent,
  ArticleEventType,
  ArticleHead,
  ArticlePost,
  ArticleStats,
  Block,
  RevisionRecord,
} from "./types.ts";

/** Splits a string into parts of at most PART_UNITS UTF-16 units, never inside a pair. */
function splitParts(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    let end = Math.min(s.length, i + PART_UNITS);
    const last = s.charCodeAt(end - 1);
    if (end < s.length && last >= 0xd800 && last <= 0xdbff) end--;
    out.push(s.slice(i, end));
    i = end;
  }
  return out.length ? out : [""];
}

/** Reads values by key, each with its key's value type (kv/read_many.ts; no checks). */
export async function getAll<K extends Deno.KvKey>(
  kv: Deno.Kv,
  keyList: readonly K[],
): Promise<Array<ValueOf<K> | null>> {
  return (await readMany(kv, keyList)).map((e) => e.value);
}

export async function readPost(kv: Deno.Kv, id: string): Promise<ArticlePost | null> {
  return (await kv.get(keys.articlePosts(id))).value;
}

export async function readRevision(kv: Deno.Kv, id: string): Promise<RevisionRecord | null> {
  return (await kv.get(keys.articleRevisions(id))).value;
}

/** Reads revisions by id into a map (missing ones are left out). */
export async function readRevisions(
  kv: Deno.Kv,
  ids: Array<string | null>,
): Promise<Map<string, RevisionRecord>> {
  const wanted = [...new Set(ids.filter((x): x is string => !!x))];
  const got = await getAll(kv, wanted.map((id) => keys.articleRevisions(id)));
  const out = new Map<string, RevisionRecord>();
  got.forEach((r) => r && out.set(r.id, r));
  return out;
}

/** Reads posts by id into a map. */
export async function readPosts(kv: Deno.Kv, ids: string[]): Promise<Map<string, ArticlePost>> {
  const wanted = [...new Set(ids)];
  const got = await getAll(kv, wanted.map((id) => keys.articlePosts(id)));
  const out = new Map<string, ArticlePost>();
  got.forEach((p) => p && out.set(p.id, p));
  return out;
}

/** Stages a revision's blocks as JSON parts; returns how many parts. */
export function writeBlocks(tx: Tx, revisionId: string, blocks: Block[]): number {
  const parts = splitParts(JSON.stringify(blocks));
  parts.forEach((p, i) => tx.set(keys.articleRevisionParts(revisionId, i), p));
  return parts.length;
}

/** Stages an asset's sanitised SVG in parts; returns how many. */
export function writeAssetSvg(tx: Tx, assetId: string, svg: string): number {
  const parts = splitParts(svg);
  parts.forEach((p, i) => tx.set(keys.articleAssetParts(assetId, i), p));
  return parts.length;
}

/**
 * An entry of the agent feed: the post and its live revisions (public, candidate, latest;
 * sorted, without repeats), so that a page of the feed reads them with the posts, in one
 * batch. Entries stored before they named the revisions hold the post id alone.
 */
type FeedEntry = string | { post_id: string; revision_ids: string[] };

/**
 * A review-queue entry: the pending revision's article and author, and its figures' asset ids
 * (a copy of the revision's `asset_ids`), so that the queue's read lists the figures of the
 * revision it shows beside its blocks. Entries written before hold no `asset_ids`.
 */
interface QueueEntry {
  post_id: string;
  author_id: string;
  asset_ids?: string[];
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    articlePostIdBySeq: FeedEntry;
    /** A pending revision in the review queue (the revision id is in the key). */
    articleReviewQueue: QueueEntry;
    /** A pending revision's due entry (its due time and revision id are in the key). */
    articleDue: { post_id: string };
  }
}

/** The feed entry of a post. */
function feedEntryOf(post: ArticlePost): Exclude<FeedEntry, string> {
  const live = [post.public_revision_id, post.candidate_revision_id, post.latest_revision_id];
  const revision_ids = [...new Set(live.filter((id): id is string => !!id))].sort();
  return { post_id: post.id, revision_ids };
}

/**
 * The figures' asset ids of `revisionId` as `post` names them (`revision_figures`), or null
 * when it names none (a revision written before the copy): then only the revision's record
 * names them.
 */
export function namedFigures(post: ArticlePost, revisionId: string): string[] | null {
  return post.revision_figures?.[revisionId] ?? null;
}

/** The post a feed entry points at. */
export function feedEntryPost(entry: FeedEntry): string {
  return typeof entry === "string" ? entry : entry.post_id;
}

export const EMPTY_STATS: ArticleStats = { published_posts: 0, awaiting_review_posts: 0 };

/** A post counts as published / awaiting first review (the public summary's counters). */
export function classOf(p: ArticlePost | null) {
  if (!p || p.restricted) return { published: 0, awaiting: 0 };
  return {
    published: p.public_revision_id ? 1 : 0,
    awaiting: p.candidate_revision_id && p.first_published_at === null ? 1 : 0,
  };
}

/** The earliest due entry (clock-driven transition) at or before `now`, if any. */
export async function firstDueEntry(
  kv: Deno.Kv,
  now: number,
): Promise<{ due_at: number; revision_id: string } | null> {
  const prefix = keys.articleDue.range();
  for await (const e of kv.list({ start: prefix, end: [...prefix, now + 1] }, { limit: 1 })) {
    return { due_at: e.key[1] as number, revision_id: e.key[2] as string };
  }
  return null;
}

/**
 * Where an article stands in the public index (`article_public_post_id_by_seq`): its public
 * position while the public can read it (a public revision, not restricted), else nowhere.
 */
function publicIndexSeq(post: ArticlePost): number | null {
  return post.restricted || !post.public_revision_id ? null : post.public_seq;
}

/**
 * Thrown by an `ArticleWriter`'s first staged write while a clock-driven transition is due
 * and not yet recorded: reads show it at the next positions of the sequence (due_window.ts), so it
 * must be recorded before any other change takes a position (`articleTransact` in
 * lifecycle.ts records it and runs the change again).
 */
export class DueTransitionsFirst extends Error {
  constructor() {
    super("clock-driven article transitions are due; record them first");
  }
}

/**
 * Stages every write of one article change inside a transaction: allocate sequence
 * numbers, save posts and revisions with their index entries, append events, and keep
 * the counters. Call `finish()` last.
 */
export class ArticleWriter {
  #tx: Tx;
  #deps: Deps;
  #head: ArticleHead = { seq: 0 };
  #stats: ArticleStats = { ...EMPTY_STATS };
  #headDirty = false;
  #statsDirty = false;
  #pending = new Map<string, number>();
  #pendingBase = new Map<string, number>();
  /** A clock-driven transition is due and unrecorded: the first staged write refuses. */
  #dueFirst = false;

  private constructor(tx: Tx, deps: Deps) {
    this.#tx = tx;
    this.#deps = deps;
  }

  /**
   * Opens a writer: reads (and checks) the sequence head and the counters, and looks at the
   * due index in the same round trip. While a due transition is unrecorded, its first staged
   * write throws `DueTransitionsFirst` (so a replay or a refusal still answers without
   * writing), unless `settling` (the commit that records the first of them, lifecycle.ts
   * `settleRevision`).
   */
  static async open(
    tx: Tx,
    deps: Deps,
    opts: {
      settling?: boolean;
      /** Authors whose pending count the commit may change (read in the same batch). */
      authors?: readonly string[];
      /**
       * The operation's own keys, read (and checked) in the same batch, so that its later
       * `tx.get` of them costs no round trip: one read plan for the whole commit.
       */
      prefetch?: readonly Deno.KvKey[];
    } = {},
  ): Promise<ArticleWriter> {
    const w = new ArticleWriter(tx, deps);
    const authors = [...new Set(opts.authors ?? [])];
    const [{ head, stats, counts }, due] = await Promise.all([
      tx.getNamed({
        head: keys.articleHeads(),
        stats: keys.articleStats(),
        counts: authors.map((id) => keys.articleAuthors(id)),
        prefetch: opts.prefetch ?? [],
      }),
      opts.settling ? null : firstDueEntry(tx.kv, deps.clock.now()),
    ]);
    w.#dueFirst = due !== null;
    w.#head = head.value ?? { seq: 0 };
    w.#stats = stats.value ?? { ...EMPTY_STATS };
    authors.forEach((id, i) => {
      const pending = counts[i].value?.pending ?? 0;
      w.#pending.set(id, pending);
      w.#pendingBase.set(id, pending);
    });
    return w;
  }

  get tx(): Tx {
    return this.#tx;
  }

  #refuseWhileDue(): void {
    if (this.#dueFirst) throw new DueTransitionsFirst();
  }

  /**
   * Before a refusal that rests on what the clock changes (an expiry or a publication takes a
   * revision out of its author's pending count): while a transition is due and unrecorded,
   * throws `DueTransitionsFirst`, so that `articleTransact` records it and the change runs
   * again on the recorded state.
   */
  settledBeforeRefusing(): void {
    this.#refuseWhileDue();
  }

  /** The next number of the articles sequence (events and list positions share it). */
  nextSeq(): number {
    this.#refuseWhileDue();
    this.#head = { seq: this.#head.seq + 1 };
    this.#headDirty = true;
    return this.#head.seq;
  }

  /** The author's current pending count (read and checked once per commit). */
  async pendingOf(agentId: string): Promise<number> {
    if (!this.#pending.has(agentId)) {
      const v = (await this.#tx.get(keys.articleAuthors(agentId))).value;
      this.#pending.set(agentId, v?.pending ?? 0);
      this.#pendingBase.set(agentId, v?.pending ?? 0);
    }
    return this.#pending.get(agentId)!;
  }

  /**
   * Appends an event to the activity sequence. `commentSeq`: where its comment is stored,
   * when that is not the event's own seq (reads then find it without its locator).
   */
  event(
    type: ArticleEventType,
    postId: string,
    revisionId: string,
    commentId: string | null,
    commentSeq?: number,
  ) {
    const seq = this.nextSeq();
    const ev: ArticleEvent = {
      seq,
      type,
      post_id: postId,
      revision_id: revisionId,
      comment_id: commentId,
      ...(commentSeq === undefined ? {} : { comment_seq: commentSeq }),
      at: this.#deps.clock.now(),
    };
    this.#tx.set(keys.articleEvents(ev.seq), ev);
    return ev;
  }

  /** Saves a post and moves its feed entries and the public counters with it. */
  savePost(before: ArticlePost | null, after: ArticlePost): void {
    this.#refuseWhileDue();
    const tx = this.#tx;
    tx.set(keys.articlePosts(after.id), after);
    const entry = feedEntryOf(after);
    if (before?.list_seq !== after.list_seq) {
      if (before) tx.delete(keys.articlePostIdBySeq(before.list_seq));
      tx.set(keys.articlePostIdBySeq(after.list_seq), entry);
    } else if (feedEntryOf(before).revision_ids.join() !== entry.revision_ids.join()) {
      tx.set(keys.articlePostIdBySeq(after.list_seq), entry);
    }
    // The public index holds what the public sees; an article restricted or without a public
    // revision leaves it (stores written before kept it there: removed at its next save).
    const wasAt = before?.public_seq ?? null;
    const isAt = publicIndexSeq(after);
    if (wasAt !== isAt || (before && publicIndexSeq(before) !== isAt)) {
      if (wasAt !== null && wasAt !== isAt) tx.delete(keys.articlePublicPostIdBySeq(wasAt));
      if (isAt !== null) {
        // The revision too, so that a feed reads the article and its revision at once.
        tx.set(keys.articlePublicPostIdBySeq(isAt), {
          post_id: after.id,
          revision_id: after.public_revision_id!,
        });
      }
    }
    const a = classOf(before);
    const b = classOf(after);
    if (a.published !== b.published || a.awaiting !== b.awaiting) {
      this.#stats = {
        published_posts: Math.max(0, this.#stats.published_posts + b.published - a.published),
        awaiting_review_posts: Math.max(
          0,
          this.#stats.awaiting_review_posts + b.awaiting - a.awaiting,
        ),
      };
      this.#statsDirty = true;
    }
  }

  /**
   * Saves a revision and keeps its review-queue and due entries (present only while
   * pending) and its author's pending count. `pendingOf(author)` must have been called.
   */
  saveRevision(before: RevisionRecord | null, after: RevisionRecord): void {
    this.#refuseWhileDue();
    const tx = this.#tx;
    const wasPending = before?.state === "pending";
    const isPending = after.state === "pending";
    const rev: RevisionRecord = isPending ? after : { ...after, queue_reviews: null, due_at: null };
    tx.set(keys.articleRevisions(rev.id), rev);
    const oldQueue = wasPending && before!.queue_reviews !== null
      ? keys.articleReviewQueue(before!.queue_reviews, before!.submitted_at, before!.id)
      : null;
    const newQueue = isPending && rev.queue_reviews !== null
      ? keys.articleReviewQueue(rev.queue_reviews, rev.submitted_at, rev.id)
      : null;
    if (JSON.stringify(oldQueue) !== JSON.stringify(newQueue)) {
      if (oldQueue) tx.delete(oldQueue);
      if (newQueue) {
        tx.set(newQueue, {
          post_id: rev.post_id,
          author_id: rev.author_id,
          asset_ids: rev.asset_ids,
        });
      }
    }
    const oldDue = wasPending && before!.due_at !== null
      ? keys.articleDue(before!.due_at, before!.id)
      : null;
    const newDue = isPending && rev.due_at !== null ? keys.articleDue(rev.due_at, rev.id) : null;
    if (JSON.stringify(oldDue) !== JSON.stringify(newDue)) {
      if (oldDue) tx.delete(oldDue);
      if (newDue) tx.set(newDue, { post_id: rev.post_id });
    }
    if (wasPending !== isPending) {
      const current = this.#pending.get(rev.author_id);
      if (current === undefined) throw new Error("pendingOf(author) must be read before saving");
      this.#pending.set(
        rev.author_id,
        Math.max(0, current + (isPending ? 1 : 0) - (wasPending ? 1 : 0)),
      );
    }
  }

  /** Stages the head, counters and author counts. */
  finish(): void {
    this.#refuseWhileDue();
    if (this.#headDirty) this.#tx.set(keys.articleHeads(), this.#head);
    if (this.#statsDirty) this.#tx.set(keys.articleStats(), this.#stats);
    for (const [id, n] of this.#pending) {
      if (n !== this.#pendingBase.get(id)) this.#tx.set(keys.articleAuthors(id), { pending: n });
    }
  }
}
