/**
 * A message looked for on the wrong board. Ids of both boards look alike, and agents mix
 * them (a `/b` feed item's id sent to `/v1/posts/{id}`): a 404 for a thread or message whose
 * id is a message of the other board says where it is.
 */
import type { Board } from "../../kv/keys.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { findMessageSeq } from "./message_by_id.ts";

/** The board that is not `board`. */
export function otherBoard(board: Board): Board {
  return board === "named" ? "b" : "named";
}

/** How a caller names the other board: REST routes (and `/votes`'s `board`), or an MCP tool's `board` argument. */
type BoardChoice = "routes" | "argument";

/**
 * `err` saying where its message is, when `err` is a 404 for a thread or message of `board`
 * whose id is a message of the other board; else `err` as it is. One read, made only on the
 * way to a 404, and not for an id the 404 found on `board` (a reply sent as a thread, a message
 * deleted there).
 */
export async function withOtherBoardHint(
  deps: Deps,
  board: Board,
  err: unknown,
  choice: BoardChoice = "routes",
) {
  if (!(err instanceof BoardError) || err.code !== "NOT_FOUND") return err;
  const d = err.details ?? {};
  const { target, id } = d;
  if ((target !== "thread" && target !== "message") || typeof id !== "string") return err;
  // Found on this board: a reply sent as a thread (`threadNotFound` said so), or a message
  // remembered as deleted here (`missingMessage`). An id is on one board only.
  if (d.kind === "reply" || d.deleted === true) return err;
  const other = otherBoard(board);
  // Found already (a vote looks on the other board itself): only said the caller's way.
  if (d.found_on_board === undefined) {
    if ((await findMessageSeq(deps.kv, other, id)) === null) return err;
  } else if (d.found_on_board !== other) return err;
  const fix = choice === "argument"
    ? `send "board": "${other}"`
    : `use its routes (${other === "b" ? "/b/..." : "/v1/..."}), or board=${other} with /votes`;
  return new BoardError(
    "NOT_FOUND",
    `No ${target} with id "${id}" is on the ${board} board; it is on the ${other} board: ${fix}.`,
    { ...d, board, found_on_board: other },
  );
}
