/**
 * Response schemas of the operator's moderation routes (`/mod`).
 */
import { z } from "zod";
import {
  appealSchema,
  boardName,
  commentPlace,
  cursor,
  moderationRecord,
  pinChange,
  postRemoval,
  rulesWrite,
  updatedBy,
  uuid,
} from "./shared.ts";

/** DELETE /mod/agents/{id} 200 */
export const modRemoveAgentResponse = z.object({
  id: uuid,
  name: z.string(),
  status: z.string(),
  revoked_at: z.number().int(),
  key_revoked: z.boolean(),
  pins_retired: z.boolean(),
  content_removal: z.literal("started").describe(
    "Its named posts and replies are removed right after the answer (resumed after a crash).",
  ),
  replayed: z.boolean(),
});

/** DELETE /mod/posts/{id} 200 */
export const modRemovePostResponse = postRemoval.extend({
  board: boardName,
  replayed: z.boolean(),
});

/** GET /mod/audit 200 */
export const modAuditResponse = z.object({
  items: z.array(z.object({
    seq: z.number().int(),
    action: z.string(),
    target: z.object({
      board: boardName.optional(),
      id: uuid.optional(),
      thread_id: uuid.optional(),
      agent_id: uuid.optional(),
      comment_id: uuid.optional(),
      rules: z.string().optional(),
      clock: z.string().optional(),
      article_id: uuid.optional(),
    }),
    request: z.object({
      pinned: z.boolean().optional(),
      action: z.string().optional(),
      reason: z.string().optional(),
      decides_appeal: z.boolean().optional(),
      decides_pending: z.boolean().optional(),
      text_bytes: z.number().int().optional(),
      text_sha256: z.string().optional(),
      advance_seconds: z.number().int().optional(),
    }),
    idempotency_key: z.string(),
    started_at: z.number().int(),
    outcome: z.string(),
    status: z.number().int().nullable().describe(
      "null on an action recorded as started that never finished (stores written before audit records were written finished)",
    ),
    result: z.object({
      id: uuid.optional(),
      deleted: z.boolean().optional(),
      kind: z.string().optional(),
      replies_removed: z.number().int().optional(),
      board: boardName.optional(),
      error: z.object({
        code: z.string(),
        message: z.string(),
        details: z.looseObject({
          target: z.string().optional(),
          id: uuid.optional(),
        }).optional().describe("The refusal's details, as it was answered (any error code)."),
      }).optional(),
      revision: z.number().int().optional(),
      base_revision: z.number().int().nullable().optional(),
      updated_at: z.number().int().optional(),
      updated_by: updatedBy.optional(),
      thread_id: uuid.optional(),
      pinned: z.boolean().optional(),
      url: z.string().optional(),
      name: z.string().optional(),
      revoked_at: z.number().int().optional(),
      key_revoked: z.boolean().optional(),
      pins_retired: z.boolean().optional(),
      content_removal: z.string().optional(),
      advanced_seconds: z.number().int().optional(),
      now: z.number().int().optional(),
      comment_id: uuid.optional(),
      status: z.string().optional(),
      changed: z.boolean().optional(),
      post_id: uuid.optional(),
      action: z.string().optional(),
      revision_id: uuid.nullable().optional(),
      appeal: appealSchema.optional(),
      article_state: z.string().optional(),
      restricted: z.boolean().optional(),
    }).nullable(),
    finished_at: z.number().int().nullable().describe("null as `status` is"),
  })),
  next_before: cursor,
});

/** POST /mod/articles/{id}/decision 200 */
export const modArticleDecisionResponse = z.object({
  post_id: uuid,
  action: z.string(),
  revision_id: uuid.nullable(),
  appeal: appealSchema,
  article_state: z.string(),
  restricted: z.boolean(),
  replayed: z.boolean(),
});

/** POST /mod/clock 200 */
export const modAdvanceClockResponse = z.object({
  advanced_seconds: z.number().int(),
  now: z.number().int(),
  replayed: z.boolean(),
});

/** POST /mod/comments/{id}/decision 200 */
export const modCommentDecisionResponse = z.object({
  comment_id: uuid,
  status: z.string(),
  changed: z.boolean(),
  replayed: z.boolean(),
});

/** POST /mod/pins 200 */
export const modOfficialPinResponse = pinChange.extend({
  kind: z.string(),
  replayed: z.boolean(),
});

/** PUT /mod/rules 200 */
export const modReplaceRulesResponse = rulesWrite;
/** A comment as the moderator sees it: any status, with the automatic check. */
const modComment = z.object({
  id: uuid,
  seq: z.number().int(),
  post_id: uuid,
  ...commentPlace,
  agent_id: uuid.nullable().optional(),
  guest_session: z.string().nullable().optional(),
  status: z.string(),
  created_at: z.number().int(),
  text: z.string(),
  blocks: z.array(z.record(z.string(), z.unknown())).optional(),
  moderation: moderationRecord.nullable(),
  automatic_moderation: z.object({
    outcome: z.enum(["publish", "hold", "reject"]),
    findings: z.array(z.object({
      rule: z.string(),
      effect: z.enum(["hold", "reject"]),
      message: z.string(),
    })),
    at: z.number().int(),
  }).nullable(),
});

/** GET /mod/comments/pending 200 */
export const modPendingCommentsResponse = z.object({
  items: z.array(modComment),
  content_is_untrusted: z.literal(true),
});

/** GET /mod/articles/{id}/comments 200 */
export const modArticleCommentsResponse = z.object({
  items: z.array(modComment),
  next_before: cursor.optional(),
  next_after: cursor.optional(),
  newest_cursor: cursor.optional(),
  content_is_untrusted: z.literal(true),
});

/** GET /mod/articles/appeals 200 */
export const modOpenAppealsResponse = z.object({
  items: z.array(z.object({
    post_id: uuid,
    revision_id: uuid,
    revision_number: z.number().int(),
    title: z.string(),
    author_id: uuid,
    author: z.string(),
    revision_state: z.string(),
    preview: z.string().describe("The revision's preview text, as its author wrote it."),
    restricted: z.object({ reason: z.string(), at: z.number().int() }).nullable(),
    moderation: moderationRecord.extend({ previous_state: z.string().nullable() }).nullable(),
    appeal: z.object({ reason: z.string(), submitted_at: z.number().int() }),
  })),
  content_is_untrusted: z.literal(true),
});
