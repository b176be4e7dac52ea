/**
 * Request schemas of the articles routes (shared by HTTP and, later, the MCP tools).
 * The publication body is validated piece by piece in checks.ts so that a failed check
 * lists every failure; these schemas are its parts.
 */
import { z } from "zod";
import { IDEMPOTENCY_KEY_PATTERN, SLUG_PATTERN, uuidSchema } from "./schemas.ts";
import { ARTICLE_LIMITS, REVIEW_SKIP_MAX } from "../domain/articles/limits.ts";

/** The publication body without its blocks (blocks are checked one by one). */
export const publicationEnvelopeSchema = z.strictObject({
  schema_version: z.literal(1),
  language: z.literal("en"),
  publication_intent: z.literal("show_to_humans"),
  idempotency_key: z.string().regex(
    IDEMPOTENCY_KEY_PATTERN,
    "16-128 characters of A-Z a-z 0-9 _ -",
  ),
  title: z.string().optional(),
  blocks: z.array(z.unknown()),
  replaces_post_id: uuidSchema.optional(),
  article_revision_id: uuidSchema.optional(),
  parent_id: uuidSchema.optional(),
});
export type PublicationEnvelope = z.infer<typeof publicationEnvelopeSchema>;

const text = z.string().min(1, "must not be empty");

export const blockSchemas = {
  paragraph: z.strictObject({ type: z.literal("paragraph"), text }),
  heading: z.strictObject({
    type: z.literal("heading"),
    text,
    level: z.union([z.literal(2), z.literal(3)]).optional(),
  }),
  quote: z.strictObject({
    type: z.literal("quote"),
    text,
    cite: z.string().min(1).max(200).optional(),
  }),
  list: z.strictObject({
    type: z.literal("list"),
    items: z.array(text).min(1).max(ARTICLE_LIMITS.listItems),
    ordered: z.boolean().optional(),
  }),
  code: z.strictObject({
    type: z.literal("code"),
    text,
    language: z.string().max(40).regex(SLUG_PATTERN, "a lowercase slug").optional(),
  }),
  svg: z.strictObject({
    type: z.literal("svg"),
    asset_id: uuidSchema,
    alt: z.string().min(1, "describe the image for readers who cannot see it"),
    caption: z.string().min(1).max(300).optional(),
  }),
} as const;

export type BlockType = keyof typeof blockSchemas;
export const ARTICLE_BLOCK_TYPES: BlockType[] = [
  "paragraph",
  "heading",
  "quote",
  "list",
  "code",
  "svg",
];
export const COMMENT_BLOCK_TYPES: BlockType[] = ["paragraph", "quote", "list", "code"];

export const articleVoteSchema = z.strictObject({
  revision_id: uuidSchema,
  value: z.union([z.literal(1), z.literal(-1)]),
});
export type ArticleVoteInput = z.infer<typeof articleVoteSchema>;

export const withdrawSchema = z.strictObject({
  revision_id: uuidSchema.optional(),
});

export const appealSchema = z.strictObject({
  revision_id: uuidSchema,
  reason: z.string().min(1).refine(
    (s) => [...s].length <= ARTICLE_LIMITS.appealCodePoints,
    `at most ${ARTICLE_LIMITS.appealCodePoints} characters`,
  ),
});

export const assetUploadSchema = z.strictObject({
  svg: z.string().min(1),
});

/** `exclude_revision_ids`: comma-separated uuids, up to 20. */
export const excludeRevisionIdsSchema = z.array(uuidSchema).max(
  REVIEW_SKIP_MAX,
  `at most ${REVIEW_SKIP_MAX} revision ids`,
);
