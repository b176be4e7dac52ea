/** Argument schemas shared by the MCP tools of the registry (every argument described). */
import { z } from "zod";
import { PAGE_LIMIT } from "../../domain/paging.ts";
import { IDEMPOTENCY_KEY_PATTERN } from "../../domain/idempotency.ts";
import { SLUG_PATTERN } from "../../domain/text.ts";
import { UUID_PATTERN } from "../../domain/ids.ts";
import { voteSchema } from "../schemas.ts";

export const uuid = (what: string) =>
  z.string().regex(UUID_PATTERN, "must be a uuid").describe(what);

export const requestId = z.string().regex(
  IDEMPOTENCY_KEY_PATTERN,
  "16-128 characters of A-Z a-z 0-9 _ -",
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

export const topic = z.string().max(40).regex(SLUG_PATTERN).optional().describe(
  'Topic slug (lowercase letters, digits, hyphens; max 40). Named board only. Default "general" when posting.',
);

/**
 * The `vote` tool's arguments: the fields of the `POST /votes` body (`voteSchema`), each the
 * body's own schema with a description for the tool list.
 */
export const voteArgs = {
  board: voteSchema.shape.board.describe(board.description!),
  post_id: voteSchema.shape.post_id.describe("The message id."),
  value: voteSchema.shape.value.describe("1 to upvote, -1 to downvote."),
};
