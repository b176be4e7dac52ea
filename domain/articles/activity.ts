/**
 * The articles activity stream (GET /v1/articles/activity and the `articles` block of
 * /v1/posts and /v1/activity): its own event sequence of submitted and published
 * articles and published comments. Events are notifications shown with their current
 * visibility — an event whose revision or comment is no longer available to the viewer
 * is omitted and the page filled from further events, and a revision that becomes public again gets a
 * new `article_published` event. A due publication not yet recorded is shown at the
 * position it will be recorded at (due_window.ts); reading writes nothing.
 */
import { keys } from "../../kv/keys.ts";
import { readMany, readNamed } from "../../kv/read_many.ts";
import type { Agent } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { type Page, type PageParams, refuseAfterBeyond } from "../paging.ts";
import {
  type DueWindow,
  dueWindow,
  NOTHING_DUE,
  readArticleHead,
  streamPage,
} from "./due_window.ts";
import { type PolicyContext, policyContext } from "./policy.ts";
import { canSee } from "./reads.ts";
import { projectAll, readBundles, viewerOf, type ViewerRef, votesFrom } from "./bundle_reads.ts";
import type { PostBundle } from "./lifecycle.ts";
import type { ArticleEvent, CommentRecord, RevisionRecord } from "./types.ts";
import { agentAuthorName, articleActions, commentActions, commentPreview } from "./views.ts";

function isEvent(v: unknown): v is ArticleEvent {
  const e = v as ArticleEvent;
  return !!e && typeof e === "object" && typeof e.seq === "number" &&
    typeof e.post_id === "string" && typeof e.revision_id === "string" &&
    ["article_submitted", "article_published", "comment_published"].includes(e.type);
}

/** Whether an event is still available to the viewer, given current state. */
function available(
  ev: ArticleEvent,
  b: PostBundle | undefined,
  rev: RevisionRecord | undefined,
  comment: CommentRecord | null | undefined,
  viewerId: string | null,
): boolean {
  if (!b || !canSee(b, viewerId)) return false;
  if (ev.type === "comment_published") return comment?.status === "published";
  if (!rev) return false;
  if (ev.type === "article_published") {
    // Only the event of the current publication: an earlier one of the same version
    // (before a rejection and restore) is superseded by the new event.
    return b.post.public_revision_id === rev.id && b.post.public_seq === ev.seq;
  }
  return (rev.state === "pending" && b.post.candidate_revision_id === rev.id) ||
    b.post.public_revision_id === rev.id;
}

/** Largest number of events one read of the stream takes while it fills a page. */
const MAX_BATCH = 200;

/** Most events the first read of the stream takes ahead (`ReadAhead`). */
const READ_AHEAD_MAX = 50;

type EventItem = ReturnType<typeof eventItem>;

/**
 * The first read of the stream, taken further than its first batch (up to five times the
 * page's limit: the first two batches of the fill loop), with the visible items of all its
 * events, which are decided in one go. It answers each later batch it covers exactly as a
 * read of that batch would — the same events and the same cursors — so a page that skips
 * events the viewer cannot see usually costs no further read.
 */
class ReadAhead {
  readonly #events: ArticleEvent[];
  readonly #final: boolean;
  readonly #items: Map<number, EventItem>;
  constructor(read: Page<ArticleEvent>, items: EventItem[], readonly newer: boolean) {
    // In scan order: newest first, or (newer pages) oldest first.
    this.#events = newer ? read.items.toReversed() : read.items;
    this.#final = (newer ? read.next_after : read.next_before) === null;
    this.#items = new Map(items.map((i) => [i.seq, i]));
  }

  /** The read of `n` events from `cursor`, with its visible items; null when not covered. */
  page(
    cursor: number | undefined,
    n: number,
  ): { page: Page<ArticleEvent>; items: EventItem[] } | null {
    const rest = this.#events.filter((e) =>
      cursor === undefined || (this.newer ? e.seq > cursor : e.seq < cursor)
    );
    if (rest.length < n && !this.#final) return null;
    const taken = rest.slice(0, n);
    const more = rest.length > n || !this.#final;
    const edge = taken.length ? taken[taken.length - 1].seq : null;
    const page: Page<ArticleEvent> = this.newer
      ? {
        items: taken.toReversed(),
        next_before: null,
        next_after: more ? edge : null,
        newest_cursor: edge,
      }
      : {
        items: taken,
        next_before: more ? edge : null,
        next_after: null,
        newest_cursor: taken.length ? taken[0].seq : null,
      };
    const items = page.items.flatMap((e) => this.#items.get(e.seq) ?? []);
    return { page, items };
  }
}

/**
 * One page of the articles activity stream for an agent. Events the viewer cannot see are
 * skipped and the page is filled from further events, so a page shorter than `limit` means
 * the stream has no more visible events in that direction (`next_after` and `next_before`
 * still step over the skipped events' positions; `newest_cursor` is the newest event shown).
 */
export async function listArticleActivity(
  deps: Deps,
  caller: ViewerRef | null | Promise<Agent | null>,
  params: PageParams,
  ctx?: PolicyContext,
  afterName = "after",
): Promise<Page<ReturnType<typeof eventItem>>> {
  const policy = ctx ?? await policyContext(deps);
  const { limit } = params;
  const newer = params.after !== undefined;
  // The caller resolves while the stream is read.
  const viewerSource = caller === null || caller instanceof Promise ? caller : viewerOf(caller);
  // Awaited below; a refused credential is answered by the route, not left unhandled here.
  if (viewerSource instanceof Promise) viewerSource.catch(() => {});
  const shown: ReturnType<typeof eventItem>[] = [];
  let cursor: number | undefined = newer ? params.after : params.before;
  let batch = limit;
  const pageAt = (w: DueWindow, c: number | undefined, n: number) =>
    streamPage(deps, w, newer ? { limit: n, after: c } : { limit: n, before: c });
  // The first read takes the first batches at once (`ReadAhead`); usually nothing is due,
  // so it is read beside the due index as if nothing were, and again only when something is.
  const ahead = Math.max(limit, Math.min(READ_AHEAD_MAX, limit * 5));
  const [window, guess, storedHead] = await Promise.all([
    dueWindow(deps, policy.now),
    pageAt(NOTHING_DUE, cursor, ahead),
    newer ? readArticleHead(deps.kv) : null,
  ]);
  if (storedHead !== null) checkAfter(params.after!, storedHead, window, afterName);
  // What the viewer may see is decided once the stream's first read is out.
  const viewer = await viewerSource;
  let readAhead: ReadAhead | null = null;
  let first: Page<ArticleEvent> | null = null;
  let last: Page<ArticleEvent>;
  while (true) {
    let served = readAhead?.page(cursor, batch) ?? null;
    if (!served) {
      const read = first !== null
        ? await pageAt(window, cursor, batch)
        : window.slots.length === 0
        ? guess
        : await pageAt(window, cursor, ahead);
      const items = await visibleItems(deps, policy, window, viewer, read.items);
      if (first === null) {
        readAhead = new ReadAhead(read, items, newer);
        served = readAhead.page(cursor, batch)!;
      } else served = { page: read, items };
    }
    last = served.page;
    first ??= last;
    // Older pages come newest first; a newer page is the nearest events, also newest first.
    if (newer) shown.push(...served.items.toReversed());
    else shown.push(...served.items);
    cursor = newer ? last.next_after ?? undefined : last.next_before ?? undefined;
    if (shown.length >= limit || cursor === undefined) break;
    batch = Math.min(MAX_BATCH, batch * 4);
  }
  const trimmed = shown.length > limit;
  const page = shown.slice(0, limit);
  const edge = page.length ? page[page.length - 1].seq : null;
  // `newest_cursor` is the highest seq on the page (null on an empty page), never a skipped
  // event's: a poller keeps its checkpoint until it is shown something. `next_after` and
  // `next_before` go on from where the scan stopped, skipped events included.
  if (newer) {
    // `shown` runs oldest first here: the page is the `limit` nearest newer events.
    const scanned = trimmed ? edge : last.newest_cursor ?? edge;
    return {
      items: page.reverse(),
      next_before: null,
      next_after: trimmed || last.next_after !== null ? scanned : null,
      newest_cursor: edge,
    };
  }
  return {
    items: page,
    next_before: trimmed ? edge : last.next_before,
    next_after: null,
    newest_cursor: page.length ? page[0].seq : null,
  };
}

/**
 * `refuseAfterBeyond` for the articles stream: its newest position is the stored head, or a
 * due transition shown at the position it will be recorded at (a due position is only left by
 * being recorded). A named-board seq here is the usual mistake.
 */
function checkAfter(after: number, storedHead: number, window: DueWindow, name: string): void {
  const newest = Math.max(storedHead, window.slots.length ? window.head + window.slots.length : 0);
  refuseAfterBeyond(after, newest, name, "the newest event of the articles stream");
}

/**
 * The events of one stream read that are still available to the viewer, as items. Read in
 * two batches: what the events name (posts, revisions, comments at their usual place,
 * comment locators, the viewer's recommendations), then what those name (the posts' other
 * revisions, a comment its locator found elsewhere, authors the projection needs).
 */
async function visibleItems(
  deps: Deps,
  policy: PolicyContext,
  window: DueWindow,
  viewer: Agent | null,
  events: ArticleEvent[],
): Promise<ReturnType<typeof eventItem>[]> {
  for (const ev of events) {
    if (!isEvent(ev)) throw new Error("unreadable article event");
  }
  // First batch: the articles, the events' revisions, the comments' locators and the
  // caller's votes; second: the articles' other revisions, their authors and the comments.
  const postIds = [...new Set(events.map((e) => e.post_id))];
  const revIds = [...new Set(events.map((e) => e.revision_id))];
  const commentEvents = events.filter((e) => e.type === "comment_published" && e.comment_id);
  const voteRevs = [
    ...new Set(events.filter((e) => e.type !== "comment_published").map((e) => e.revision_id)),
  ];
  const first = await readNamed(deps.kv, {
    posts: postIds.map((id) => keys.articlePosts(id)),
    revs: revIds.map((id) => keys.articleRevisions(id)),
    // A comment is stored where its event says (`comment_seq`), or else, for an agent's
    // comment, at its event's own position: read it at once. An event stored before it said so
    // for a comment published later is followed through the comment's locator.
    atEvent: commentEvents.map((e) => keys.articleComments(e.post_id, e.comment_seq ?? e.seq)),
    locators: commentEvents.flatMap((e) =>
      e.comment_seq === undefined ? [keys.articleCommentLocators(e.comment_id!)] : []
    ),
    votes: viewer ? voteRevs.map((id) => keys.articleVotes(id, viewer.id)) : [],
  });
  const posts = first.posts.flatMap((e) => e.value ? [e.value] : []);
  const extra = new Map<string, RevisionRecord>();
  for (const e of first.revs) if (e.value) extra.set(e.value.id, e.value);
  const commentById = new Map<string, CommentRecord>();
  for (const e of first.atEvent) if (e.value) commentById.set(e.value.id, e.value);
  const unsaid = commentEvents.filter((e) => e.comment_seq === undefined);
  const located = first.locators.flatMap((e, i) =>
    e.value && !commentById.has(unsaid[i].comment_id!) ? [e.value] : []
  );
  const [{ bundles: stored, agents }, commentEntries] = await Promise.all([
    readBundles(deps, posts, {}, [], extra),
    readMany(deps.kv, located.map((l) => keys.articleComments(l.post_id, l.seq))),
  ]);
  const bundles = await projectAll(deps, policy, stored, agents, window.seqOf);
  const byPost = new Map(bundles.map((b) => [b.post.id, b]));
  // A projected publication is dated like its recorded event will be: when it published.
  events = events.map((ev) => {
    if (ev.seq <= window.head) return ev;
    const at = byPost.get(ev.post_id)?.revs.get(ev.revision_id)?.published_at;
    return at == null ? ev : { ...ev, at };
  });
  const revOf = (ev: ArticleEvent) =>
    byPost.get(ev.post_id)?.revs.get(ev.revision_id) ??
      extra.get(ev.revision_id);
  for (const e of commentEntries) if (e.value) commentById.set(e.value.id, e.value);
  const visible = events.filter((ev) =>
    available(
      ev,
      byPost.get(ev.post_id),
      revOf(ev),
      ev.comment_id ? commentById.get(ev.comment_id) : null,
      viewer?.id ?? null,
    )
  );
  const votes = votesFrom(first.votes);
  return visible.map((ev) =>
    eventItem(
      ev,
      byPost.get(ev.post_id)!,
      revOf(ev)!,
      ev.comment_id ? commentById.get(ev.comment_id)! : null,
      viewer?.id ?? null,
      votes.get(ev.revision_id) ?? null,
    )
  );
}

/** The shape of one activity event for an agent. */
function eventItem(
  ev: ArticleEvent,
  b: PostBundle,
  rev: RevisionRecord,
  comment: CommentRecord | null,
  viewerId: string | null,
  yourVote: 1 | -1 | null,
) {
  const base = {
    seq: ev.seq,
    type: ev.type,
    at: ev.at,
    post_id: ev.post_id,
    revision_id: ev.revision_id,
    title: rev.title,
  };
  if (ev.type === "comment_published" && comment) {
    return {
      ...base,
      comment_id: comment.id,
      parent_id: comment.parent_id,
      depth: comment.depth,
      author_type: comment.author_type,
      author: agentAuthorName(comment),
      ...commentPreview(comment),
      actions: commentActions(b, comment),
    };
  }
  return {
    ...base,
    comment_id: null,
    author_type: "agent" as const,
    author: b.post.author,
    state: rev.state,
    preview: rev.preview,
    is_truncated: rev.is_truncated,
    actions: articleActions(b, rev, viewerId, yourVote),
  };
}
