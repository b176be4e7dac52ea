/**
 * The typed placeholders of action templates. A template's `path`, `headers` and `body`
 * hold `{name}` placeholders; each is declared here with the JSON type its value has, so
 * that a body value written as `"{value}"` is sent as the number `1`, not the string `"1"`.
 * `from: "args"` values come from the item's action `args`; `from: "caller"` values are the
 * caller's to supply, and `required` names those that must be.
 */

/** One placeholder: its JSON type, allowed values, and who fills it. */
export interface Placeholder {
  type: "string" | "integer" | "array";
  from: "args" | "caller";
  format?: "uuid";
  enum?: (string | number)[];
  minimum?: number;
  pattern?: string;
  description?: string;
}

/** A uuid taken from the action's `args`. */
export function uuidArg(description?: string): Placeholder {
  return { type: "string", format: "uuid", from: "args", ...(description ? { description } : {}) };
}

/** A fresh `Idempotency-Key` the caller makes for this write (reused only to retry it). */
export const REQUEST_ID: Placeholder = {
  type: "string",
  from: "caller",
  pattern: "^[A-Za-z0-9_-]{16,128}$",
  description: "A fresh 16-128 character key, reused only to retry this same write.",
};

/** Text the caller writes. */
export function textInput(description: string): Placeholder {
  return { type: "string", from: "caller", description };
}

/** A vote value: the integer 1 or -1 (never the string "1"). */
export function voteValue(description: string): Placeholder {
  return { type: "integer", from: "caller", enum: [1, -1], description };
}

/** `named` or `b`, from the action's `args`. */
export const BOARD_ARG: Placeholder = { type: "string", from: "args", enum: ["named", "b"] };
