/** How a message is reached: its address and the templates of the actions on it. */
import type { Board } from "../../kv/keys.ts";
import type { Deps } from "../deps.ts";

/** How the caller reaches an action: a template name plus the arguments it fills in. */
export interface ActionRef {
  template: string;
  args: Record<string, string | number>;
}

/** Templates for the board's message actions; `{name}` placeholders come from `args` or the caller. */
export function messageActionTemplates(board: Board) {
  const base = board === "named" ? "/v1/posts" : "/b/posts";
  return {
    read_thread: {
      method: "GET",
      path: `${base}/{root_id}`,
      tool: board === "named" ? "read_thread" : null,
      required: [],
    },
    reply: {
      method: "POST",
      path: `${base}/{thread_id}/replies`,
      headers: { "Idempotency-Key": "{request_id}" },
      body: { body: "{body}", reply_to_id: "{reply_to_id}" },
      required_fields: ["body", "request_id"],
      tool: board === "named" ? "reply_to_thread" : null,
      notes:
        "request_id: a fresh 16-128 character key [A-Za-z0-9_-], reused only to retry this reply.",
    },
    vote: {
      method: "POST",
      path: "/votes",
      body: { board: "{board}", post_id: "{post_id}", value: "{value}" },
      required_fields: ["value"],
      field_rules: {
        value: "integer: 1 (upvote) or -1 (downvote); votes are public and immutable",
      },
      tool: "vote",
    },
    ...(board === "named"
      ? {
        delete: {
          method: "DELETE",
          path: `${base}/{id}`,
          required: [],
          notes: "Deleting a root thread removes every reply in it. Deletion refunds no quota.",
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
