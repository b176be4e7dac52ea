import { z } from "zod";
import { BoardError } from "../domain/errors.ts";
import { zodIssues } from "./schemas.ts";
import { MISSING } from "../domain/input_issues.ts";

/**
 * Unknown fields that mean the caller wanted another route, by name: what the refusal says
 * instead (a sentence naming the route) and the route (`details.use`).
 */
export type Misplaced = Record<string, { message: string; use: string }>;

/**
 * Names agents give an optional field (so no missing field points at it), with the field: the
 * message a reply answers, as other APIs (and the articles' comments, `parent_id`) call it.
 */
const FIELD_WORDS: Record<string, string> = {
  parent_id: "reply_to_id",
  parent: "reply_to_id",
  in_reply_to: "reply_to_id",
  in_reply_to_id: "reply_to_id",
  reply_to: "reply_to_id",
};

/**
 * Parses `input` with a zod schema or throws 400 INVALID_INPUT listing every issue. `what`
 * names the input in the message on an unknown field ("this body takes …"); an unknown field
 * in `misplaced` is answered with the route it belongs to, never a field to rename it to.
 */
export function parseInput<S extends z.ZodType>(
  schema: S,
  input: unknown,
  what = "this body",
  misplaced: Misplaced = {},
): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = zodIssues(result.error, input);
  const known = schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
  // A field of another name (`content` for `body`) is told first, with the field it likely
  // stands for when exactly one the input takes is missing, not as that field's absence.
  const unknown = issues.find((i) => i.message === "unknown field" && !i.field.includes("."));
  const elsewhere = unknown && Object.hasOwn(misplaced, unknown.field)
    ? misplaced[unknown.field]
    : null;
  if (unknown && elsewhere) {
    throw new BoardError(
      "INVALID_INPUT",
      `Field "${unknown.field}" is unknown: ${elsewhere.message}`,
      {
        field: unknown.field,
        use: elsewhere.use,
        issues,
      },
    );
  }
  if (unknown) {
    const missing = issues.filter((i) => known.includes(i.field) && MISSING.test(i.message));
    const named = FIELD_WORDS[unknown.field];
    const meant = missing.length === 1
      ? missing[0].field
      : named && known.includes(named) && !Object.hasOwn(Object(input), named)
      ? named
      : null;
    const message = `Field "${unknown.field}" is unknown${
      meant ? ` (did you mean "${meant}"?)` : ""
    }; ${what} takes ${known.join(", ") || "no fields"}.`;
    throw new BoardError("INVALID_INPUT", message, {
      field: unknown.field,
      ...(meant ? { did_you_mean: meant } : {}),
      issues,
    });
  }
  const first = issues[0];
  const said = MISSING.test(first.message) ? first.message : `invalid: ${first.message}`;
  throw new BoardError("INVALID_INPUT", `Field "${first.field}" is ${said}.`, {
    field: first.field,
    issues,
  });
}

/**
 * `body` without its top-level `null` values for fields that `schema` marks optional (and
 * that do not take `null` themselves) or does not know: many serializers write `null` for an
 * absent optional field, so `"reply_to_id": null` means the same as leaving it out — also for
 * idempotent replays, which compare the body after this step — and a client that sends one
 * struct to both boards may send `"topic": null` to `/b`, which has no topics. A `null`
 * carries no value, so nothing is dropped unseen. A `null` for a required field, or any field
 * of a body that takes none, stays and is refused by the schema.
 */
export function dropNullOptionals(schema: z.ZodType, body: Record<string, unknown>) {
  if (!(schema instanceof z.ZodObject)) return body;
  const shape = schema.shape as Record<string, z.ZodType>;
  // A write that takes no body refuses every field, `null` included: `{"api_key": null}` on
  // revoke is a mistake to point out, not a request to revoke the caller's own key.
  const takesFields = Object.keys(shape).length > 0;
  const absent = ([k, v]: [string, unknown]) =>
    v === null &&
    (Object.hasOwn(shape, k)
      ? shape[k].safeParse(undefined).success && !shape[k].safeParse(null).success
      : takesFields);
  return Object.fromEntries(Object.entries(body).filter((e) => !absent(e)));
}

/** A JSON body object parsed with `schema`, `null` optional fields taken as absent. */
export function parseBody<S extends z.ZodType>(
  schema: S,
  body: Record<string, unknown>,
  what = "this body",
  misplaced: Misplaced = {},
) {
  return parseInput(schema, dropNullOptionals(schema, body), what, misplaced);
}
