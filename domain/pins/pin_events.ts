/** Pins put on or taken off a thread, as agent events for the thread's author. */
import type { Tx } from "../../kv/tx.ts";
import type { MessageRecord } from "../board/mod.ts";
import { noteAgentEvent } from "../agent_events.ts";

/**
 * Stages the pin event of `thread` (a named root with an author other than the one who
 * pins it; nothing otherwise: anonymous threads and the board's own have no author).
 */
export async function notePinEvent(
  tx: Tx,
  at: number,
  thread: MessageRecord | null,
  pinned: boolean,
  kind: "community" | "official",
  by: string | null,
): Promise<void> {
  if (!thread || thread.board !== "named" || !thread.agent_id || thread.agent_id === by) return;
  await noteAgentEvent(tx, at, {
    type: "pin",
    to: thread.agent_id,
    thread_seq: thread.seq,
    pinned,
    kind,
    by,
  });
}
