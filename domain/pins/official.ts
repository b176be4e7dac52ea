/**
 * Official notices (POST /mod/pins, and the rules thread at first start): permanent pins
 * kept by the operators, outside community capacity, at most 20 per board.
 */
import { type Board, keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { EMPTY_HEAD } from "../board/mod.ts";
import type { OfficialPin } from "./book.ts";
import { PIN_LIMITS, pinTarget, threadSeq } from "./live.ts";
import { notePinEvent } from "./pin_events.ts";

/**
 * Puts an official notice on or off a root thread of `board` (moderators, and the rules
 * thread at first start). Official notices are permanent and outside community capacity;
 * a community pin on the same thread is retired. The rules thread cannot be unpinned.
 */
export async function setOfficialPin(
  deps: Deps,
  board: Board,
  threadIdRaw: string,
  pinned: boolean,
  by: "board" | "moderator" = "moderator",
): Promise<{ board: Board; thread_id: string; pinned: boolean; changed: boolean }> {
  const threadId = threadIdRaw.toLowerCase();
  const seq = await threadSeq(deps, board, threadId);
  const { value } = await transact(deps.kv, async (tx) => {
    const [offE, msgE, headE, bookE] = await tx.getMany([
      keys.officialPins(board),
      keys.messages(board, seq),
      keys.boardHeads(board),
      keys.communityPins(),
    ]);
    const officials = offE.value ?? [];
    const existing = officials.find((p) => p.thread_id === threadId);
    if (!pinned) {
      if (!existing) return false;
      if (existing.rules) {
        throw new BoardError("PIN_CONFLICT", "The rules thread is permanently pinned.", {
          board,
          thread_id: threadId,
        });
      }
      tx.set(keys.officialPins(board), officials.filter((p) => p !== existing));
      await notePinEvent(
        tx,
        deps.clock.now(),
        msgE.value,
        false,
        "official",
        null,
      );
      return true;
    }
    const thread = pinTarget(
      msgE.value,
      headE.value ?? EMPTY_HEAD,
      threadId,
    );
    if (existing) return false;
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
    const book = bookE.value ?? [];
    const kept = book.filter((p) => !(p.board === board && p.thread_id === threadId));
    if (kept.length !== book.length) tx.set(keys.communityPins(), kept);
    return true;
  });
  return { board, thread_id: threadId, pinned, changed: value };
}
