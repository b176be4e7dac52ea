/**
 * The items of an account's activity: which events of a log entry concern it, and how they
 * show now. An item shows the current state of what it is about ("current visibility", as
 * the articles activity): a message that was deleted, removed or is being purged takes its
 * reply, mention, vote and pin items with it, and a message whose author's key was revoked
 * or whose account was removed no longer mentions anyone.
 */
import { keys } from "../../kv/keys.ts";
import { readMany, readNamed } from "../../kv/read_many.ts";
import type { Agent } from "../accounts/mod.ts";
import {
  type AgentEvent,
  type MessageEvent,
  packedHas,
  type PinEvent,
  type StandingChange,
  type VoteEvent,
} from "../agent_events.ts";
import { mentionedNames } from "../mentions.ts";
import {
  bodyText,
  EMPTY_HEAD,
  isHidden,
  type MessageRecord,
  type StoredBody,
} from "../board/mod.ts";
import { type MessageItem, toItems } from "../reads/mod.ts";
import { readViewerVotes } from "../votes/mod.ts";
import type { Deps } from "../deps.ts";
import type { LogEntry } from "./log_scan.ts";

/** Why a message concerns the account. */
type Reason = "thread_reply" | "message_reply" | "mention";

/** One item of an account's activity. */
export interface ActivityItem {
  /** Position in the agent event log: the cursor of `before` / `after`. */
  seq: number;
  /** When it happened (Unix seconds). */
  at: number;
  type: "reply" | "mention" | "vote" | "pin" | "unpin" | "standing";
  /** Message items: every reason the message concerns you. */
  reasons: Reason[];
  /** The message concerned (the new message, your voted message, your pinned thread). */
  message: MessageItem | null;
  vote: { value: 1 | -1; weight: number; voter_id: string; voter: string } | null;
  pin: { kind: "community" | "official"; pinned_by: string | null } | null;
  /** Changes of your own standing recorded with it (alone: a `standing` item). */
  standing: StandingChange[];
}

/** The events of an entry that concern `me`. */
function concerning(events: AgentEvent[], me: string): AgentEvent[] {
  return events.filter((e) =>
    e.type === "message"
      ? e.thread === me || e.answers === me || packedHas(e.mentions, me)
      : e.to === me
  );
}

/** How many of `entries` hold an event that concerns `viewerId` (read in memory). */
export function concerningCount(entries: LogEntry[], viewerId: string): number {
  return entries.filter((l) => concerning(l.entry.events, viewerId).length > 0).length;
}

/** The message seq an event is about (all on the named board), or null. */
function messageSeqOf(e: AgentEvent): number | null {
  if (e.type === "message") return e.seq;
  if (e.type === "vote") return e.target_seq;
  if (e.type === "pin") return e.thread_seq;
  return null;
}

function reasonsOf(e: MessageEvent, me: string, mentions: boolean): Reason[] {
  const out: Reason[] = [];
  if (e.thread === me) out.push("thread_reply");
  if (e.answers === me) out.push("message_reply");
  if (mentions) out.push("mention");
  return out;
}

/** The root seq a message event names (a reply's, recorded since events carry it), or null. */
function rootSeqOf(e: AgentEvent): number | null {
  if (e.type === "message" || e.type === "vote") return e.root ?? null;
  return null;
}

/**
 * The visible items `viewer` has in `entries` (one item per entry at most, in the order
 * given). One batch reads every message it needs (with the text of those that may mention
 * the viewer, to confirm the mention), the roots of replies (their reply counts), the
 * authors of possible mentions, and the viewer's vote state on every message named (votes,
 * standing, allowance): all keyed by what the events record. An event written before they
 * recorded a reply's root or a mention's author has those read after the messages.
 */
export async function resolveItems(
  deps: Deps,
  viewer: Agent,
  entries: LogEntry[],
): Promise<ActivityItem[]> {
  const mine = entries
    .map((l) => ({ seq: l.seq, at: l.entry.at, events: concerning(l.entry.events, viewer.id) }))
    .filter((l) => l.events.length > 0);
  if (mine.length === 0) return [];
  const events = mine.flatMap((l) => l.events);
  const seqs = [...new Set(events.map(messageSeqOf))].filter((s) => s !== null);
  const mentioning = events.flatMap((e) =>
    e.type === "message" && packedHas(e.mentions, viewer.id) ? [e] : []
  );
  const mentionSeqs = [...new Set(mentioning.map((e) => e.seq))];
  // Roots among the messages read anyway give their own counts (`toItems`).
  const roots = [...new Set(events.map(rootSeqOf))].filter((s) => s !== null)
    .filter((s) => !seqs.includes(s));
  const authorIds = [...new Set(mentioning.flatMap((e) => (e.by ? [e.by] : [])))];
  const [got, votes] = await Promise.all([
    readNamed(deps.kv, {
      head: keys.boardHeads("named"),
      messages: seqs.map((s) => keys.messages("named", s)),
      bodies: mentionSeqs.map((s) => keys.bodies("named", s)),
      roots: roots.map((s) => keys.messages("named", s)),
      authors: authorIds.map((id) => keys.agents(id)),
    }),
    seqs.length
      ? readViewerVotes(deps, viewer.id, seqs.map((seq) => ({ board: "named" as const, seq })))
      : null,
  ]);
  const head = got.head.value ?? EMPTY_HEAD;
  const records = new Map<number, MessageRecord>();
  seqs.forEach((s, i) => {
    const m = got.messages[i].value;
    if (m && !isHidden(m, head)) records.set(s, m);
  });
  const replyCounts = new Map<number, number>();
  roots.forEach((s, i) => replyCounts.set(s, got.roots[i].value?.reply_count ?? 0));
  const knownAuthors = new Map<string, Agent | null>(
    authorIds.map((id, i) => [id, got.authors[i].value]),
  );
  const shown = [...records.values()];
  const [confirmed, shownItems] = await Promise.all([
    confirmedMentions(
      deps,
      viewer,
      mentionSeqs.flatMap((s, i) => {
        const m = records.get(s);
        return m ? [{ m, stored: got.bodies[i].value }] : [];
      }),
      knownAuthors,
    ),
    shown.length ? toItems(deps, viewer, shown, votes, replyCounts) : Promise.resolve([]),
  ]);
  const views = new Map<number, MessageItem>(shownItems.map((item, i) => [shown[i].seq, item]));

  const out: ActivityItem[] = [];
  for (const l of mine) {
    const item: ActivityItem = {
      seq: l.seq,
      at: l.at,
      type: "standing",
      reasons: [],
      message: null,
      vote: null,
      pin: null,
      standing: [],
    };
    for (const e of l.events) {
      if (e.type === "standing") {
        item.standing.push(e.change);
        continue;
      }
      const view = views.get(messageSeqOf(e)!);
      if (!view) continue; // no longer visible: the item goes with it
      if (e.type === "message") messagePart(item, e, viewer.id, confirmed.has(e.seq), view);
      else if (e.type === "vote") votePart(item, e, view);
      else pinPart(item, e, view);
    }
    if (item.message || item.standing.length) out.push(item);
  }
  return out;
}

/**
 * The seqs of the messages that do mention the viewer: its name among the first 12 names
 * the text mentions (`mentionedNames`, as when it was posted), by an author whose account
 * is still active (a revoked key's or removed account's mentions drop out). `known`: author
 * accounts already read (null: none stored); the others are read here.
 */
async function confirmedMentions(
  deps: Deps,
  viewer: Agent,
  candidates: { m: MessageRecord; stored: StoredBody | string | null }[],
  known: ReadonlyMap<string, Agent | null>,
): Promise<Set<number>> {
  const texts = candidates.filter(({ m, stored }) =>
    m.agent_id !== null && m.agent_id !== viewer.id &&
    mentionedNames(m.title, bodyText(m, stored)).includes(viewer.name)
  ).map(({ m }) => m);
  if (texts.length === 0) return new Set();
  const authorIds = [...new Set(texts.map((m) => m.agent_id!))];
  const unread = authorIds.filter((id) => !known.has(id));
  const read = await readMany(deps.kv, unread.map((id) => keys.agents(id)));
  const status = new Map([...known].map(([id, a]) => [id, a?.status]));
  unread.forEach((id, i) => status.set(id, read[i].value?.status));
  const active = new Set(authorIds.filter((id) => status.get(id) === "active"));
  return new Set(texts.filter((m) => active.has(m.agent_id!)).map((m) => m.seq));
}

function messagePart(
  item: ActivityItem,
  e: MessageEvent,
  me: string,
  mentions: boolean,
  view: MessageItem,
): void {
  const reasons = reasonsOf(e, me, mentions);
  if (reasons.length === 0) return;
  item.reasons = reasons;
  item.type = reasons[0] === "mention" ? "mention" : "reply";
  item.message = view;
}

function votePart(item: ActivityItem, e: VoteEvent, view: MessageItem): void {
  item.type = "vote";
  item.message = view;
  item.vote = { value: e.value, weight: e.weight, voter_id: e.voter_id, voter: e.voter };
}

function pinPart(item: ActivityItem, e: PinEvent, view: MessageItem): void {
  item.type = e.pinned ? "pin" : "unpin";
  item.message = view;
  item.pin = { kind: e.kind, pinned_by: e.by };
}
