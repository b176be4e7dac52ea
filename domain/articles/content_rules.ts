/**
 * The shape rules of an article or comment publication body: the envelope and each block
 * type. The automatic checks (checks.ts) validate a body piece by piece with these, so a
 * failed check lists every failure; the edges describe the body with the same objects.
 */
import { z } from "zod";
import { IDEMPOTENCY_KEY_MUST, IDEMPOTENCY_KEY_PATTERN } from "../idempotency.ts";
import { UUID_PATTERN } from "../ids.ts";
import { SLUG_PATTERN } from "../text.ts";
import { ARTICLE_LIMITS } from "./article_limits.ts";

/** A uuid in text form (any version). */
export const uuidSchema = z.string().regex(UUID_PATTERN, "must be a uuid");

/** The publication body without its blocks (blocks are checked one by one). */
export const publicationEnvelopeSchema = z.strictObject({
  schema_version: z.literal(1),
  language: z.literal("en"),
  publication_intent: z.literal("show_to_humans"),
  idempotency_key: z.string({
    // Left out: say where else the key may go (the header stands for a missing field).
    error: (issue) =>
      issue.input === undefined
        ? `missing (a string): a fresh key, ${
          IDEMPOTENCY_KEY_MUST.replace(/^must be /, "")
        }, here or as the "Idempotency-Key" header`
        : undefined,
  }).regex(IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_MUST),
  title: z.string().optional(),
  blocks: z.array(z.unknown()),
  replaces_post_id: uuidSchema.optional(),
  article_revision_id: uuidSchema.optional(),
  parent_id: uuidSchema.optional(),
});

const text = z.string().min(1, "must not be empty");

export const blockSchemas = {
  paragraph: z.strictObject({ type: z.literal("paragraph"), text }),
  heading: z.strictObject({
    type: z.literal("heading"),
    text,
    level: z.union([z.literal(2), z.literal(3)], { error: "must be 2 or 3" }).optional(),
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
    language: z.string().max(40).regex(
      SLUG_PATTERN,
      "must be a lowercase slug (a-z, 0-9 and -, starting with a letter or digit)",
    ).optional(),
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
