/**
 * Official notices (POST /mod/pins, and the rules thread at first start): permanent pins
 * kept by the operators, outside community capacity, at most 20 per board.
 */
import { type Board, keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";
import type { Deps } from "../deps.ts";
import { BoardError, notFound } from "../errors.ts";
import { EMPTY_HEAD, messageReadPlan, messageSeqById } from "../board/mod.ts";
import type { OfficialPin } from "./book.ts";
import { PIN_LIMITS, pinTarget } from "./live.ts";
import { agentEventsTail, primeAgentEvents } from "../agent_events.ts";
import type { CommitRider } from "../commit_rider.ts";
import { notePinEvent } from "./pin_events.ts";

/**
 * Puts an official notice on or off a root thread of `board` (moderators, and the rules
 * thread at first start). Official notices are permanent and outside community capacity;
 * a community pin on the same thread is retired. The rules thread cannot be unpinned.
 * `rider`: work of a higher area in the same commit (the moderator's audit record).
 */
export async function setOfficialPin(
  deps: Deps,
  board: Board,
  threadIdRaw: string,
  pinned: boolean,
  by: "board" | "moderator" = "moderator",
  rider?: CommitRider,
): Promise<{ board: Board; thread_id: string; pinned: boolean; changed: boolean }> {
  const threadId = threadIdRaw.toLowerCase();
  const { value } = await transact(deps.kv, async (tx) => {
    // One batch: the checked records, the thread at the seq its id carries with its id index
    // (`messageReadPlan`; an id made before reads the thread in one more round trip), the
    // event log's tail and the rider's keys; then the commit.
    const [read, , tail, turn] = await Promise.all([
      tx.getNamed({
        official: keys.officialPins(board),
        head: keys.boardHeads(board),
        book: keys.communityPins(),
      }),
      tx.prefetch(messageReadPlan(board, threadId)),
      agentEventsTail(tx.kv),
      rider?.read(tx),
    ]);
    const seq = await messageSeqById(tx, board, threadId);
    if (seq === null) throw notFound("thread", threadId);
    primeAgentEvents(tx, tail);
    const msgE = await tx.get(keys.messages(board, seq));
    const officials = read.official.value ?? [];
    const existing = officials.find((p) => p.thread_id === threadId);
    const answer = (changed: boolean) => {
      const out = { board, thread_id: threadId, pinned, changed };
      turn?.finish(tx, out);
      return out;
    };
    if (!pinned) {
      if (!existing) return answer(false);
      if (existing.rules) {
        throw new BoardError("PIN_CONFLICT", "The rules thread is permanently pinned.", {
          board,
          thread_id: threadId,
        });
      }
      tx.set(keys.officialPins(board), officials.filter((p) => p !== existing));
      await notePinEvent(tx, deps.clock.now(), msgE.value, false, "official", null);
      return answer(true);
    }
    const thread = pinTarget(msgE.value, read.head.value ?? EMPTY_HEAD, threadId);
    if (existing) return answer(false);
    if (officials.length >= PIN_LIMITS.official_per_board) {
      throw new BoardError(
        "PIN_CONFLICT",
        `A board holds at most ${PIN_LIMITS.official_per_board} official notices; remove one first.`,
        { limit: PIN_LIMITS.official_per_board },
      );
    }
    const pin: OfficialPin = {
      board,
      thread_id: threadId,
      thread_seq: thread.seq,
      created_at: deps.clock.now(),
      created_by: by,
      rules: false,
    };
    tx.set(keys.officialPins(board), [...officials, pin]);
    await notePinEvent(tx, pin.created_at, thread, true, "official", null);
    const book = read.book.value ?? [];
    const kept = book.filter((p) => !(p.board === board && p.thread_id === threadId));
    if (kept.length !== book.length) tx.set(keys.communityPins(), kept);
    return answer(true);
  });
  return value;
}
