import type { z } from "zod";
import { BoardError } from "../domain/errors.ts";
import { zodIssues } from "./schemas.ts";

/** Parses `input` with a zod schema or throws 400 INVALID_INPUT listing every issue. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = zodIssues(result.error);
  const first = issues[0];
  throw new BoardError(
    "INVALID_INPUT",
    `Field "${first.field}" is invalid: ${first.message}.`,
    { field: first.field, issues },
  );
}
