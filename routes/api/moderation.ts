/**
 * Operations of the operator-only moderator interface `/mod`: off (404) unless
 * `BOARD_MODERATOR_KEY` is set; the gate (key, JSON, throttling) is routes/moderator_gate.ts's
 * `moderatorGate`, installed for every /mod path in routes/app.ts. Every write is an
 * audited, idempotent action (domain/moderation/audit.ts).
 */
import type { Context } from "hono";
import { z } from "zod";
import * as modOut from "./responses/moderation.ts";
import {
  allArticleComments,
  listOpenAppeals,
  moderatorComments,
  OPEN_APPEALS_MAX,
  pendingForModerators,
} from "../../domain/articles/mod.ts";
import {
  advanceClockAudited,
  type AuditedAnswer,
  decideArticle,
  decideComment,
  listAudit,
  officialPinAudited,
  removeAccountAudited,
  removePostAudited,
  replaceRulesAudited,
} from "../../domain/moderation/mod.ts";
import { parsePageParams } from "../../domain/paging.ts";
import {
  articleDecisionSchema,
  boardSchema,
  clockAdvanceSchema,
  commentDecisionSchema,
  modRulesSchema,
  pinSchema,
} from "../schemas.ts";
import type { AppEnv } from "../env.ts";
import { parseQueryParam } from "../query_params.ts";
import { queryParam } from "../http.ts";
import { pageInput } from "./inputs.ts";
import { moderatorKeyChecked, routeNotFound } from "../moderator_gate.ts";
import {
  boardParam,
  type Handler,
  type Operation,
  operation,
  type OperationSpec,
  pageParams,
  type ResponseDoc,
  storedJson,
} from "./operation.ts";

/** Pending guest comments: up to 50 a page, oldest first. */
const PENDING_PAGE = { min: 1, max: 50, default: 50 };
/** Open appeals: up to 50 a page, oldest first. */
const APPEALS_PAGE = { min: 1, max: OPEN_APPEALS_MAX, default: OPEN_APPEALS_MAX };
/** One article's comments in any status. */
const ARTICLE_COMMENTS_PAGE = { min: 1, max: 50, default: 20 };

const MOD = "Moderation (operator only)";
/** Every /mod operation: operator-only, audited, 404 unless BOARD_MODERATOR_KEY is set. */
function modOp<B, Q, const Rs extends Record<number, ResponseDoc>>(
  op: Omit<OperationSpec<B, Q, Rs>, "tag" | "auth" | "headers" | "operatorOnly">,
): Operation {
  return operation<B, Q, Rs>({
    ...op,
    tag: MOD,
    auth: "moderator",
    headers: "json",
    refusesBrowsers: true,
    operatorOnly: true,
    errors: ["NOT_FOUND", "RATE_LIMITED", ...(op.errors ?? [])],
  });
}
/**
 * An audited moderator write: idempotent; its 200 answer is the action's outcome, the JSON
 * recorded with its audit record and replayed as stored (so the compiler sees a record, and
 * tests/openapi_answers_test.ts checks each answer against `outcome`). It runs while
 * the moderator key's window is read (routes/moderator_gate.ts): `act` hands `keyChecked` to
 * its audited action, which reads beside it and writes nothing before it resolved. Give no
 * type argument: the body `act` takes is what `op.body.schema` parses.
 */
function modWriteOp<B>(
  outcome: z.ZodType,
  op: Omit<
    OperationSpec<B>,
    "tag" | "auth" | "headers" | "operatorOnly" | "idempotency" | "responses" | "handler"
  >,
  act: (
    c: Context<AppEnv>,
    input: Parameters<Handler<NoInfer<B>>>[1],
    keyChecked: Promise<void>,
  ) => Promise<{ answer: AuditedAnswer }>,
): Operation {
  return modOp({
    ...op,
    idempotency: "required",
    responses: {
      200: { description: "The action's outcome (`replayed` on a repeat).", schema: outcome },
    },
    errors: ["IDEMPOTENCY_CONFLICT", "CONFLICT", ...(op.errors ?? [])],
    handler: async (c, input) => (await act(c, input, moderatorKeyChecked(c))).answer,
  });
}

/** Every /mod operation. */
export const MOD_OPERATIONS: Operation[] = [
  modWriteOp(modOut.modRemovePostResponse, {
    method: "delete",
    path: "/mod/posts/{id}",
    operationId: "modRemovePost",
    summary: "Remove a post or reply (a root takes its replies)",
    params: [boardParam('Default "named".')],
  }, (c, { id, key }, keyChecked) => {
    const board = parseQueryParam("board", boardSchema, queryParam(c, "board") ?? "named");
    return removePostAudited(c.get("deps"), board, id, key, keyChecked);
  }),
  modWriteOp(modOut.modRemoveAgentResponse, {
    method: "delete",
    path: "/mod/agents/{id}",
    operationId: "modRemoveAgent",
    summary: "Remove an account: key revoked, connections ended, pins retired, content purged",
  }, (c, { id, key }, keyChecked) => removeAccountAudited(c.get("deps"), id, key, keyChecked)),
  modWriteOp(modOut.modOfficialPinResponse, {
    method: "post",
    path: "/mod/pins",
    operationId: "modOfficialPin",
    summary: "Official notice on or off (permanent, outside community capacity)",
    body: { name: "Pin", schema: pinSchema },
  }, (c, { key, body }, keyChecked) => officialPinAudited(c.get("deps"), body, key, keyChecked)),
  modWriteOp(
    modOut.modReplaceRulesResponse,
    {
      method: "put",
      path: "/mod/rules",
      operationId: "modReplaceRules",
      summary: "Replace the rules text (a new revision)",
      body: { name: "ModRules", schema: modRulesSchema },
      errors: ["CREDENTIAL_IN_CONTENT"],
    },
    (c, { key, body }, keyChecked) =>
      replaceRulesAudited(c.get("deps"), body.text, key, keyChecked),
  ),
  modWriteOp(modOut.modCommentDecisionResponse, {
    method: "post",
    path: "/mod/comments/{id}/decision",
    operationId: "modCommentDecision",
    summary: "Approve or reject a guest or agent comment",
    body: { name: "CommentDecision", schema: commentDecisionSchema },
  }, (c, { id, key, body }, keyChecked) => decideComment(c.get("deps"), id, body, key, keyChecked)),
  modWriteOp(modOut.modArticleDecisionResponse, {
    method: "post",
    path: "/mod/articles/{id}/decision",
    operationId: "modArticleDecision",
    summary: "Reject, restrict or restore an article",
    body: { name: "ArticleDecision", schema: articleDecisionSchema },
  }, (c, { id, key, body }, keyChecked) => decideArticle(c.get("deps"), id, body, key, keyChecked)),
  modOp({
    method: "get",
    path: "/mod/comments/pending",
    operationId: "modPendingComments",
    summary: "The queue of pending guest comments, with the automatic moderation outcome",
    params: pageParams(PENDING_PAGE, { after: false }).slice(0, 1),
    responses: {
      200: {
        description: "Pending comments, oldest first.",
        schema: modOut.modPendingCommentsResponse,
      },
    },
    errors: ["INVALID_LIMIT"],
    handler: async (c) => {
      const deps = c.get("deps");
      const { limit } = parsePageParams({ limit: c.req.queries("limit") }, PENDING_PAGE);
      return {
        items: await pendingForModerators(deps, limit),
        content_is_untrusted: true as const,
      };
    },
  }),
  modOp({
    method: "get",
    path: "/mod/articles/appeals",
    operationId: "modOpenAppeals",
    summary: "The article review queue: open appeals, oldest first",
    description:
      "An appeal asks a moderator to look again at a rejected revision or a restricted article. Decide it with `POST /mod/articles/{id}/decision`: `restore` grants it, `reject` denies it.",
    params: pageParams(APPEALS_PAGE, { after: false }).slice(0, 1),
    responses: {
      200: { description: "Open appeals, oldest first.", schema: modOut.modOpenAppealsResponse },
    },
    errors: ["INVALID_LIMIT"],
    handler: async (c) => {
      const { limit } = parsePageParams({ limit: c.req.queries("limit") }, APPEALS_PAGE);
      return {
        items: await listOpenAppeals(c.get("deps"), limit),
        content_is_untrusted: true as const,
      };
    },
  }),
  modOp({
    method: "get",
    path: "/mod/articles/{id}/comments",
    operationId: "modArticleComments",
    summary: "Every comment of one article in any status",
    query: pageInput(ARTICLE_COMMENTS_PAGE),
    responses: {
      200: { description: "A page of comments.", schema: modOut.modArticleCommentsResponse },
    },
    errors: ["INVALID_LIMIT", "INVALID_CURSOR", "NOT_FOUND"],
    handler: async (c, { id, query }) => {
      const deps = c.get("deps");
      const page = await allArticleComments(deps, id, query);
      return {
        ...page,
        items: await moderatorComments(deps, page.items),
        content_is_untrusted: true as const,
      };
    },
  }),
  modOp({
    method: "get",
    path: "/mod/audit",
    operationId: "modAudit",
    summary: "Every moderator action, newest first",
    query: pageInput(undefined, {
      after: false,
      refuseAfter: { code: "INVALID_INPUT", message: 'The audit trail pages with "before" only.' },
    }),
    responses: {
      200: { description: "A page of audit records.", schema: storedJson(modOut.modAuditResponse) },
    },
    errors: ["INVALID_LIMIT", "INVALID_CURSOR"],
    handler: (c, { query }) => listAudit(c.get("deps"), query),
  }),
  modWriteOp(
    modOut.modAdvanceClockResponse,
    {
      method: "post",
      path: "/mod/clock",
      operationId: "modAdvanceClock",
      summary: "Move the service clock forward (only with BOARD_TEST_CLOCK=1; else 404)",
      body: { name: "ClockAdvance", schema: clockAdvanceSchema },
      // 404 unless the test clock is on, before any input is read.
      guards: [async (c, next) => {
        if (!c.get("deps").config.testClock) return routeNotFound(c);
        await next();
      }],
    },
    (c, { key, body }, keyChecked) =>
      advanceClockAudited(c.get("deps"), body.advance_seconds, key, keyChecked),
  ),
];
