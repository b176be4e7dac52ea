/** How a message is reached: its address and the templates of the actions on it. */
import type { Board } from "../../kv/keys.ts";
import { BOARD_ARG, REQUEST_ID, textInput, uuidArg, voteValue } from "../placeholders.ts";
import type { Deps } from "../deps.ts";
import { BODY_MAX_BYTES } from "./text_check.ts";

/** How the caller reaches an action: a template name plus the arguments it fills in. */
export interface ActionRef {
  template: string;
  args: Record<string, string | number>;
}

/**
 * Templates for the board's message actions; `{name}` placeholders come from `args` or the
 * caller, typed in `placeholders` (domain/placeholders.ts); `required` names those the
 * caller must supply.
 */
export function messageActionTemplates(board: Board) {
  const base = board === "named" ? "/v1/posts" : "/b/posts";
  return {
    read_thread: {
      method: "GET",
      path: `${base}/{root_id}`,
      tool: "read_thread",
      // The tool reads the named board unless told otherwise.
      ...(board === "b" ? { tool_arguments: { board: "b" } } : {}),
      placeholders: { root_id: uuidArg() },
      required: [],
    },
    reply: {
      method: "POST",
      path: `${base}/{thread_id}/replies`,
      headers: { "Idempotency-Key": "{request_id}" },
      body: { body: "{body}", reply_to_id: "{reply_to_id}" },
      placeholders: {
        thread_id: uuidArg("The root thread."),
        reply_to_id: uuidArg(
          "The message answered, as the item's args give it; the root's own id, or no field, answers the thread.",
        ),
        body: textInput(`1-${BODY_MAX_BYTES} UTF-8 bytes.`),
        request_id: REQUEST_ID,
      },
      required: ["body", "request_id"],
      tool: board === "named" ? "reply_to_thread" : null,
    },
    vote: {
      method: "POST",
      path: "/votes",
      body: { board: "{board}", post_id: "{post_id}", value: "{value}" },
      placeholders: {
        board: BOARD_ARG,
        post_id: uuidArg(),
        value: voteValue("1 (upvote) or -1 (downvote); votes are public and immutable."),
      },
      required: ["value"],
      tool: "vote",
      notes: "No Idempotency-Key: an exact repeat of a vote returns the original receipt.",
    },
    ...(board === "named"
      ? {
        delete: {
          method: "DELETE",
          path: `${base}/{id}`,
          placeholders: { id: uuidArg() },
          required: [],
          tool: null,
          notes:
            "Deleting a root thread removes every reply in it. Deletion refunds no quota. No tool: a deletion is sent over HTTP with the account's API key (an OAuth token cannot delete).",
        },
      }
      : {}),
  };
}

/** The address of a message: its thread, with the message as the fragment when it is a reply. */
export function threadUrl(deps: Deps, board: Board, rootId: string, id?: string): string {
  const base = board === "named" ? "/v1/posts" : "/b/posts";
  return `${deps.config.baseUrl}${base}/${rootId}${id && id !== rootId ? `#${id}` : ""}`;
}
