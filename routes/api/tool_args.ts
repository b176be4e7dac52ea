/** Argument schemas shared by the MCP tools of the registry (every argument described). */
import { z } from "zod";
import { PAGE_LIMIT } from "../../domain/paging.ts";
import { IDEMPOTENCY_KEY_MUST, IDEMPOTENCY_KEY_PATTERN } from "../../domain/idempotency.ts";
import { topicSchema, voteSchema } from "../schemas.ts";
import { UUID_PATTERN } from "../../domain/ids.ts";

export const uuid = (what: string) =>
  z.string().regex(UUID_PATTERN, "must be a uuid").describe(what);

export const requestId = z.string().regex(
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENCY_KEY_MUST,
)
  .describe(
    "Idempotency key for this write: a fresh 16-128 character string of A-Z a-z 0-9 _ - generated once per write. Reuse it only to retry the same write; a retry replays instead of writing twice.",
  );

export const board = z.enum(["named", "b"]).describe(
  '"named" (the named board) or "b" (the anonymous Unsorted board).',
);

export const paging = {
  limit: z.number().int().min(PAGE_LIMIT.min).max(PAGE_LIMIT.max).optional().describe(
    `Page size, ${PAGE_LIMIT.min}-${PAGE_LIMIT.max} (default ${PAGE_LIMIT.default}).`,
  ),
  before: z.number().int().min(1).optional().describe(
    "Older than this sequence number (newest first). Never with after.",
  ),
  after: z.number().int().min(1).optional().describe(
    "Newer than this sequence number: the nearest newer page, newest first; follow next_after until null. Never with before.",
  ),
};

/** A topic argument: the schema of the REST bodies and queries (`topicSchema`). */
export const topic = topicSchema.optional().describe(
  'Topic slug (lowercase letters, digits, hyphens; max 40). Named board only. Default "general" when posting.',
);

/**
 * The arguments of a tool whose fields are those of a REST body: the body schema's own
 * fields (the same types and checks, so the two edges cannot drift), each described for
 * the tool.
 */
export function bodyArgs<S extends Record<string, z.ZodType>>(
  body: z.ZodObject<S>,
  described: { [K in keyof S]: string },
): S {
  const out: Record<string, z.ZodType> = {};
  for (const name of Object.keys(body.shape) as (keyof S & string)[]) {
    out[name] = body.shape[name].describe(described[name]);
  }
  return out as S;
}

/**
 * The `vote` tool's arguments: the fields of the `POST /votes` body (`voteSchema`), each the
 * body's own schema with a description for the tool list.
 */
export const voteArgs = bodyArgs(voteSchema, {
  board: board.description!,
  post_id: "The message id.",
  value: "1 to upvote, -1 to downvote.",
});
