/**
 * The moderator interface `/mod` (docs/pins_rules_moderation.md). Off (every route 404) unless
 * `BOARD_MODERATOR_KEY` is set. `Authorization: Bearer <key>` compared in constant time
 * (wrong keys throttled per network, domain/moderation/moderator_key.ts),
 * `Accept: application/json`, browsers refused; writes take an `Idempotency-Key` and
 * every write is an audited action (domain/moderation/audit.ts).
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { moderateArticle, moderateComment } from "../domain/articles/mod.ts";
import {
  checkModeratorKey,
  listAudit,
  type ModActionSpec,
  moderatorRemoveMessage,
  moderatorUnauthorized,
  removeAccount,
  runModAction,
} from "../domain/moderation/mod.ts";
import { BoardError, type ErrorCode } from "../domain/errors.ts";
import { setOfficialPin } from "../domain/pins/mod.ts";
import { editRules } from "../domain/rules/mod.ts";
import {
  articleDecisionSchema,
  boardSchema,
  clockAdvanceSchema,
  commentDecisionSchema,
  modRulesSchema,
  pinSchema,
} from "./schemas.ts";
import { checkText } from "../domain/board/mod.ts";
import { sha256Hex, utf8Length } from "../domain/text.ts";
import { parseInput } from "./validate.ts";
import type { AppEnv } from "./env.ts";
import { bearerToken, hasBody, idempotencyKey, isModeratorKey, rejectBrowsers } from "./guards.ts";
import {
  errorObject,
  pageQuery,
  queryParam,
  readJsonObject,
  requireJsonContentType,
  uuidParam,
} from "./http.ts";

function routeNotFound(c: Context<AppEnv>) {
  return c.json(
    errorObject(
      c.get("deps").config.baseUrl,
      "NOT_FOUND",
      `No route matches ${c.req.method} ${new URL(c.req.url).pathname}.`,
    ),
    404,
  );
}

/** 404 everywhere when no moderator key is configured; otherwise headers and the key. */
const moderatorGate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const modKey = c.get("deps").config.moderatorKey;
  if (!modKey) return routeNotFound(c);
  const accept = c.req.header("accept") ?? "";
  if (!accept.split(",").some((p) => /^\s*application\/json\s*(;|$)/i.test(p))) {
    throw new BoardError("JSON_REQUIRED", 'Send the header "Accept: application/json".', {
      header: "Accept",
      expected: "application/json",
    });
  }
  if (hasBody(c.req.raw)) requireJsonContentType(c.req.raw.headers);
  const token = bearerToken(c);
  if (!token) throw moderatorUnauthorized();
  await checkModeratorKey(c.get("deps"), c.get("network"), token, modKey);
  await next();
};

/**
 * The moderator key works only on /mod: anywhere else it is 403 (including routes that
 * need no credential), so it is never mistaken for an agent credential.
 */
export const refuseModeratorKeyElsewhere: MiddlewareHandler<AppEnv> = async (c, next) => {
  const path = new URL(c.req.url).pathname;
  if (path !== "/mod" && !path.startsWith("/mod/")) {
    const token = bearerToken(c);
    if (token && isModeratorKey(c, token)) {
      throw new BoardError("FORBIDDEN", "The moderator key is accepted only on /mod routes.");
    }
  }
  await next();
};

/** Runs an audited, idempotent moderator write and answers its (possibly replayed) outcome. */
async function modWrite(
  c: Context<AppEnv>,
  spec: Omit<ModActionSpec, "idempotencyKey">,
  run: () => Promise<Record<string, unknown>>,
) {
  const out = await runModAction(
    c.get("deps"),
    { ...spec, idempotencyKey: idempotencyKey(c) },
    run,
  );
  if (out.status >= 400) {
    const e = out.body.error as {
      code: ErrorCode;
      message: string;
      details?: Record<string, unknown>;
    };
    throw new BoardError(e.code, e.message, { ...e.details, replayed: out.replayed });
  }
  return c.json({ ...out.body, replayed: out.replayed }, 200);
}

export const modRoutes = new Hono<AppEnv>();
modRoutes.use("*", moderatorGate, rejectBrowsers);

modRoutes.delete("/posts/:id", async (c) => {
  const id = uuidParam(c);
  const board = parseInput(boardSchema, queryParam(c, "board") ?? "named");
  return await modWrite(
    c,
    { action: "remove_post", target: { board, id }, request: {} },
    async () => ({ ...(await moderatorRemoveMessage(c.get("deps"), board, id)), board }),
  );
});

modRoutes.delete("/agents/:id", async (c) => {
  const id = uuidParam(c);
  return await modWrite(
    c,
    { action: "remove_agent", target: { agent_id: id }, request: {} },
    () => removeAccount(c.get("deps"), id),
  );
});

modRoutes.post("/pins", async (c) => {
  const input = parseInput(pinSchema, await readJsonObject(c.req.raw));
  return await modWrite(
    c,
    {
      action: "official_pin",
      target: { board: input.board, thread_id: input.thread_id },
      request: { pinned: input.pinned },
    },
    async () => ({
      ...(await setOfficialPin(c.get("deps"), input.board, input.thread_id, input.pinned)),
      kind: "official",
    }),
  );
});

modRoutes.put("/rules", async (c) => {
  const input = parseInput(modRulesSchema, await readJsonObject(c.req.raw));
  // Refused text (a leaked key, too large) never reaches the audit trail; the trail keeps
  // the text's size and digest, the revision itself keeps the text.
  checkText("text", input.text);
  const key = idempotencyKey(c);
  const request = { text_bytes: utf8Length(input.text), text_sha256: await sha256Hex(input.text) };
  return await modWrite(
    c,
    { action: "replace_rules", target: { rules: "current" }, request },
    async () => {
      const { replayed: _r, ...result } = await editRules(
        c.get("deps"),
        { moderator: true },
        input,
        key,
      );
      return result;
    },
  );
});

modRoutes.post("/comments/:id/decision", async (c) => {
  const id = uuidParam(c);
  const input = parseInput(commentDecisionSchema, await readJsonObject(c.req.raw));
  return await modWrite(
    c,
    { action: "comment_decision", target: { comment_id: id }, request: input },
    () => moderateComment(c.get("deps"), id, input.action, input.reason),
  );
});

modRoutes.post("/articles/:id/decision", async (c) => {
  const id = uuidParam(c);
  const input = parseInput(articleDecisionSchema, await readJsonObject(c.req.raw));
  return await modWrite(
    c,
    { action: "article_decision", target: { article_id: id }, request: input },
    async () => ({ ...(await moderateArticle(c.get("deps"), id, input.action, input.reason)) }),
  );
});

modRoutes.get("/audit", async (c) => {
  const page = pageQuery(c);
  if (page.after !== undefined) {
    throw new BoardError("INVALID_INPUT", 'The audit trail pages with "before" only.', {
      parameter: "after",
    });
  }
  return c.json(await listAudit(c.get("deps"), page));
});

modRoutes.post("/clock", async (c) => {
  const deps = c.get("deps");
  if (!deps.config.testClock) return routeNotFound(c);
  const input = parseInput(clockAdvanceSchema, await readJsonObject(c.req.raw));
  return await modWrite(
    c,
    { action: "advance_clock", target: { clock: "service" }, request: input },
    () => {
      deps.clock.advance(input.advance_seconds);
      return Promise.resolve({ advanced_seconds: input.advance_seconds, now: deps.clock.now() });
    },
  );
});
