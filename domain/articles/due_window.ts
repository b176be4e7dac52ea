/**
 * Due transitions as reads see them, without writing (a read never writes).
 *
 * A clock-driven transition (publication once support has settled, expiry) is recorded
 * by the periodic sweep or by the next article change (`settleDue`, lifecycle.ts), first
 * due first, and each takes the next position of the articles sequence. Until then every
 * read shows it at exactly that position: the *window* is the due index up to now, in
 * due order, and its i-th entry will be recorded at `head + i`. Nothing else can take
 * those positions first — every other article change records the due transitions before
 * it takes one (`ArticleWriter.open` refuses while any is due) — so a reader paging with
 * cursors sees a projected event at the seq it keeps once stored: never missed, never
 * repeated (docs/articles.md "Due transitions").
 */
import { keys } from "../../kv/keys.ts";
import { listTyped, type TypedListSelector } from "../../kv/read_many.ts";
import { reached } from "../clock.ts";
import type { Deps } from "../deps.ts";
import type { Page, PageParams } from "../paging.ts";
import { AgentCache, loadBundles, type PostBundle, project } from "./lifecycle.ts";
import type { PolicyContext } from "./policy.ts";
import { classOf, readPosts } from "./store.ts";
import type { ArticleEvent } from "./types.ts";

/** At most this many due transitions are shown before they are recorded. */
const WINDOW_MAX = 100;

/** A due, unrecorded transition and the position it will be recorded at. */
interface DueSlot {
  seq: number;
  due_at: number;
  revision_id: string;
  post_id: string;
}

/** The stored head of the articles sequence and the due transitions after it. */
export interface DueWindow {
  /** The head the slots are numbered from (Infinity when there are none: read everything stored). */
  head: number;
  /** Ascending positions head+1, head+2, … */
  slots: DueSlot[];
  /** revision id → position (for `project`). */
  seqOf: ReadonlyMap<string, number>;
}

/** The stored head of the articles sequence (0 before the first event). */
export async function readArticleHead(kv: Deno.Kv): Promise<number> {
  return (await kv.get(keys.articleHeads())).value?.seq ?? 0;
}

/** No due transition: every position is recorded, none is projected. */
export const NOTHING_DUE: DueWindow = { head: Infinity, slots: [], seqOf: new Map() };

/**
 * The window at `now`. Nothing due (the usual case) costs one listing. Otherwise the
 * head is read before and after the due index: when they differ (a transition was
 * recorded meanwhile) it reads again; if that keeps happening it projects nothing — only
 * what is stored is shown, which can never hand out a position twice. Reports the next
 * due time to the read cache.
 */
export async function dueWindow(deps: Deps, now: number): Promise<DueWindow> {
  const prefix = keys.articleDue.range();
  let first: number | null = null;
  for await (const e of deps.kv.list({ prefix }, { limit: 1 })) first = e.key[1] as number;
  if (first === null || !reached(now, first)) return NOTHING_DUE;
  for (let attempt = 0; attempt < 3; attempt++) {
    const head = await readArticleHead(deps.kv);
    const slots: DueSlot[] = [];
    for await (const e of listTyped(deps.kv, { prefix }, { limit: WINDOW_MAX + 1 })) {
      // The first entry not yet due ends the window (and is when what reads show changes).
      if (!reached(now, e.key[1] as number) || slots.length === WINDOW_MAX) break;
      slots.push({
        seq: head + slots.length + 1,
        due_at: e.key[1] as number,
        revision_id: e.key[2] as string,
        post_id: e.value.post_id,
      });
    }
    if (slots.length === 0) return NOTHING_DUE;
    if (await readArticleHead(deps.kv) !== head) continue;
    return { head, slots, seqOf: new Map(slots.map((s) => [s.revision_id, s.seq])) };
  }
  return NOTHING_DUE;
}

/** The event a due slot is shown as (visible only while its revision projects as published). */
function slotEvent(s: DueSlot): ArticleEvent {
  return {
    seq: s.seq,
    type: "article_published",
    post_id: s.post_id,
    revision_id: s.revision_id,
    comment_id: null,
    at: s.due_at,
  };
}

/**
 * One page of the articles sequence: the stored events up to the window's head, then
 * the window's slots as events — with exactly the paging of `listPage` (paging.ts).
 */
export async function streamPage(
  deps: Deps,
  window: DueWindow,
  params: PageParams,
): Promise<Page<ArticleEvent>> {
  const prefix = keys.articleEvents.range();
  const { limit, before, after } = params;
  const virtual = window.slots.map(slotEvent);
  // Stored events are read up to the head the slots were numbered from.
  const storedEnd = window.head + 1;
  const raw: ArticleEvent[] = [];
  if (after !== undefined) {
    if (after < storedEnd) {
      const selector: TypedListSelector<typeof prefix> = storedEnd === Infinity
        ? { prefix, start: [...prefix, after + 1] }
        : { start: [...prefix, after + 1], end: [...prefix, storedEnd] };
      for await (const e of listTyped(deps.kv, selector, { limit: limit + 1 })) {
        raw.push(e.value);
      }
    }
    for (const v of virtual) if (v.seq > after && raw.length <= limit) raw.push(v);
    const more = raw.length > limit;
    const page = raw.slice(0, limit);
    const highest = page.length ? page[page.length - 1].seq : null;
    return {
      items: page.reverse(),
      next_before: null,
      next_after: more ? highest : null,
      newest_cursor: highest,
    };
  }
  const upper = before ?? Infinity;
  for (const v of virtual.toReversed()) if (v.seq < upper && raw.length <= limit) raw.push(v);
  if (raw.length <= limit) {
    const end = Math.min(upper, storedEnd);
    const selector: TypedListSelector<typeof prefix> = end === Infinity
      ? { prefix }
      : { prefix, end: [...prefix, end] };
    for await (
      const e of listTyped(deps.kv, selector, {
        reverse: true,
        limit: limit + 1 - raw.length,
      })
    ) raw.push(e.value);
  }
  const more = raw.length > limit;
  const page = raw.slice(0, limit);
  return {
    items: page,
    next_before: more && page.length ? page[page.length - 1].seq : null,
    next_after: null,
    newest_cursor: page.length ? page[0].seq : null,
  };
}

/** Each slot's post as stored and as projected to now. */
interface ProjectedSlot {
  slot: DueSlot;
  stored: PostBundle;
  projected: PostBundle;
}

/** Projects the posts of every slot (for the public feed and its summary counters). */
export async function projectWindow(
  deps: Deps,
  ctx: PolicyContext,
  window: DueWindow,
): Promise<ProjectedSlot[]> {
  if (window.slots.length === 0) return [];
  const posts = await readPosts(deps.kv, window.slots.map((s) => s.post_id));
  const stored = await loadBundles(deps, [...posts.values()]);
  const byPost = new Map(stored.map((b) => [b.post.id, b]));
  const agents = new AgentCache(deps);
  const out: ProjectedSlot[] = [];
  for (const slot of window.slots) {
    const b = byPost.get(slot.post_id);
    if (!b) continue;
    const { bundle } = await project(deps, ctx, b, agents, window.seqOf);
    out.push({ slot, stored: b, projected: bundle });
  }
  return out;
}

/** Whether a slot shows as a publication (its revision projects public at that position). */
export function publishesAt(p: ProjectedSlot): boolean {
  return p.projected.post.public_revision_id === p.slot.revision_id &&
    p.projected.post.public_seq === p.slot.seq;
}

/** How the public counters move once the window's transitions are recorded. */
export function statsDelta(projected: ProjectedSlot[]) {
  let published = 0;
  let awaiting = 0;
  const seen = new Set<string>();
  for (const p of projected) {
    if (seen.has(p.stored.post.id)) continue;
    seen.add(p.stored.post.id);
    const a = classOf(p.stored.post);
    const b = classOf(p.projected.post);
    published += b.published - a.published;
    awaiting += b.awaiting - a.awaiting;
  }
  return { published, awaiting };
}
