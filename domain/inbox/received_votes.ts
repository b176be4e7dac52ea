/**
 * The votes an account received on its named messages, as its activity shows them: each is
 * stored once under the author by the author's own count (`votes_received`, written by the
 * vote's commit, domain/votes/cast.ts), so votes add no entry to the agent event log and
 * never wait for each other there. A received vote carries the log position it follows
 * (`anchor`), which places it among the log's items.
 */
import { keys } from "../../kv/keys.ts";
import { listTyped, type TypedListSelector } from "../../kv/read_many.ts";
import type { AgentEvent, AgentEventEntry } from "../agent_events.ts";
import type { ReceivedRecord } from "../votes/mod.ts";

/** Received votes one request lists at most (one KV round trip). */
const VOTE_BATCH = 200;

/** A received vote as read: its count, its anchor and its events. */
export interface ReceivedEntry {
  received: number;
  anchor: number;
  entry: AgentEventEntry;
}

/** The events a received vote shows: the vote, and the standing changes of its commit. */
function eventsOf(authorId: string, v: ReceivedRecord): AgentEvent[] {
  return [
    {
      type: "vote",
      to: authorId,
      target_seq: v.target_seq,
      ...(v.target_root === undefined ? {} : { root: v.target_root }),
      value: v.value,
      weight: v.weight,
      voter_id: v.voter_id,
      voter: v.voter,
    },
    ...v.changes.map((change) => ({ type: "standing" as const, to: authorId, change })),
  ];
}

/**
 * Up to `VOTE_BATCH` received votes of `authorId` with a count above `after` (oldest
 * first), or at most `atMost` (newest first); `exhausted` when none is left beyond them.
 */
export async function listReceived(
  kv: Deno.Kv,
  authorId: string,
  range: { after?: number; atMost?: number },
): Promise<{ entries: ReceivedEntry[]; exhausted: boolean; beyond: boolean }> {
  const prefix = keys.votesReceived.range(authorId);
  const newer = range.after !== undefined;
  // With `after`, the vote counted `after` is listed too (counts have no gaps: a received
  // vote is never deleted): none from there on means no answer gave that count.
  const check = newer && range.after! > 0;
  const selector: TypedListSelector<typeof prefix> = newer
    ? { prefix, start: keys.votesReceived(authorId, range.after! + (check ? 0 : 1)) }
    : range.atMost !== undefined
    ? { prefix, end: keys.votesReceived(authorId, range.atMost + 1) }
    : { prefix };
  const entries: ReceivedEntry[] = [];
  const limit = VOTE_BATCH + (check ? 1 : 0);
  const iter = listTyped(kv, selector, { limit, reverse: !newer, batchSize: limit });
  let listed = 0;
  for await (const { value: v } of iter) {
    listed++;
    if (check && v.received === range.after) continue;
    entries.push({
      received: v.received,
      anchor: v.anchor,
      entry: { at: v.cast_at, events: eventsOf(authorId, v) },
    });
  }
  return {
    entries: entries.slice(0, VOTE_BATCH),
    exhausted: entries.length < VOTE_BATCH,
    beyond: check && listed === 0,
  };
}
