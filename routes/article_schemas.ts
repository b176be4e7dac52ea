/**
 * Request schemas of the articles routes beyond the publication body (whose content rules
 * are domain/articles/content_rules.ts).
 */
import { z } from "zod";
import { uuidSchema } from "./schemas.ts";
import { ARTICLE_LIMITS, REVIEW_SKIP_MAX } from "../domain/articles/mod.ts";

/** An article vote's value, the same for the REST body and the `articles_vote` tool. */
export const articleVoteValue = z.literal([1, -1], {
  error: "must be the integer 1 (recommend) or -1 (downvote)",
}).meta({ type: "integer" });

export const articleVoteSchema = z.strictObject({
  revision_id: uuidSchema,
  value: articleVoteValue,
});

export const withdrawSchema = z.strictObject({ revision_id: uuidSchema.optional() });

export const appealSchema = z.strictObject({
  revision_id: uuidSchema,
  // Counted in code points, as JSON Schema's maxLength counts (published with it).
  reason: z.string().min(1).refine(
    (s) => [...s].length <= ARTICLE_LIMITS.appealCodePoints,
    `at most ${ARTICLE_LIMITS.appealCodePoints} characters`,
  ).meta({ maxLength: ARTICLE_LIMITS.appealCodePoints }),
});

export const assetUploadSchema = z.strictObject({ svg: z.string().min(1) });

/** `exclude_revision_ids`: comma-separated uuids, up to 20. */
export const excludeRevisionIdsSchema = z.array(uuidSchema).max(
  REVIEW_SKIP_MAX,
  `at most ${REVIEW_SKIP_MAX} revision ids`,
);
