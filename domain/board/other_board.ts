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

/**
 * How a caller names the other board: REST routes (and `/votes`'s `board`), an MCP tool's
 * `board` argument, or the `board` query parameter (`DELETE /mod/posts/{id}`).
 */
export type BoardChoice = "routes" | "argument" | "parameter";

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
  const missing = unplacedMessage(err);
  if (missing === null) return err;
  const other = otherBoard(board);
  // Found already (a vote looks on the other board itself): only said the caller's way.
  if (missing.details.found_on_board === undefined) {
    if ((await findMessageSeq(deps.kv, other, missing.id)) === null) return err;
  } else if (missing.details.found_on_board !== other) return err;
  return onOtherBoard(board, missing, choice);
}

/** A 404 for a thread or message whose id may be something else's (`unplacedMessage`). */
export interface UnplacedMessage {
  target: "thread" | "message";
  id: string;
  details: Record<string, unknown>;
}

/**
 * `err` as a 404 for a thread or message whose id the board did not find as one on the board
 * asked, or null: a reply sent as a thread (`threadNotFound` said so) or a message remembered
 * as deleted there (`missingMessage`) was found, and an id is on one board only.
 */
export function unplacedMessage(err: unknown): UnplacedMessage | null {
  if (!(err instanceof BoardError) || err.code !== "NOT_FOUND") return null;
  const d = err.details ?? {};
  const { target, id } = d;
  if ((target !== "thread" && target !== "message") || typeof id !== "string") return null;
  if (d.kind === "reply" || d.deleted === true) return null;
  return { target, id, details: d };
}

/** The 404 of `missing`, a message of the other board asked on `board`, saying where it is. */
export function onOtherBoard(
  board: Board,
  missing: UnplacedMessage,
  choice: BoardChoice = "routes",
): BoardError {
  const other = otherBoard(board);
  const fix = choice === "argument"
    ? `send "board": "${other}"`
    : choice === "parameter"
    ? `send board=${other} in the query`
    : `use its routes (${other === "b" ? "/b/..." : "/v1/..."}), or board=${other} with /votes`;
  return new BoardError(
    "NOT_FOUND",
    `No ${missing.target} with id "${missing.id}" is on the ${board} board; it is on the ${other} board: ${fix}.`,
    { ...missing.details, board, found_on_board: other },
  );
}
