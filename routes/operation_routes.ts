/**
 * Hono routes generated from the operation registry (routes/api/registry.ts): for each operation
 * with a handler, its method and path, the credential check its `auth` names, then its
 * inputs in a fixed order — the uuid path parameter, the `Idempotency-Key` its rule asks for,
 * undeclared query parameters refused (routes/query_params.ts), its declared query input, the
 * JSON body parsed with its declared schema — and
 * finally the handler.
 * Prefix-wide guards (browser refusal and agent headers on `/v1` and `/b`, which also
 * answer unknown paths there) stay in routes/app.ts.
 */
import { type Context, Hono, type MiddlewareHandler } from "hono";
import { z } from "zod";
import { type Auth, OAUTH_TAG, type Operation } from "./api/operation.ts";
import { BoardError } from "../domain/errors.ts";
import { idempotencyKeyMisuse } from "../domain/idempotency.ts";
import { withMisplacedIdHint } from "../domain/articles/mod.ts";
import type { Board } from "../kv/keys.ts";
import type { AppEnv } from "./env.ts";
import { requireAgent, requireCaller, whileAuthenticating } from "./authentication.ts";
import {
  hasBody,
  idempotencyKey,
  refuseReadBody,
  rejectBrowsers,
  requireAgentHeaders,
} from "./guards.ts";
import {
  errorResponse,
  MAX_REQUEST_BYTES,
  oauthErrorBody,
  readJsonObject,
  uuidParam,
} from "./http.ts";
import { cachedJsonAnswer } from "./compression.ts";
import { dropNullOptionals, parseBody } from "./validate.ts";
import { refusesUnknownQuery, refuseUnknownQuery } from "./query_params.ts";
import { answersWithPage } from "./accept.ts";
import { errorPage } from "./web/error_page.tsx";
import { setSiteHeaders } from "./web/security.ts";

/**
 * The credential check of an operation's `auth`. `moderator`: routes/app.ts installs the
 * moderator gate for every /mod path. `bearer`: any bearer credential, checked by the handler
 * with the OAuth resource rules (`/oauth/whoami`) or by the operation's own guards (`/mcp`).
 * `oauth_write`: raw API keys get 403 OAUTH_REQUIRED; tokens without board:write 403
 * insufficient_scope.
 */
function authGuards(op: Operation): MiddlewareHandler<AppEnv>[] {
  const guards: Record<Auth, MiddlewareHandler<AppEnv>[]> = {
    none: [],
    api_key: [requireAgent],
    read: [requireCaller({ scope: "board:read" })],
    write: [requireCaller({ scope: "board:write" })],
    moderator: [],
    bearer: [],
    oauth_write: [requireCaller({ scope: "board:write", apiKey: false })],
  };
  return guards[op.auth];
}

/** Guards before and after authentication that the operation's header rule asks for. */
function headerGuards(op: Operation, prefix: string) {
  const before: MiddlewareHandler<AppEnv>[] = [];
  const after: MiddlewareHandler<AppEnv>[] = [];
  if (op.headers === "agent" && prefix !== "/v1" && prefix !== "/b") {
    throw new Error(`${op.operationId}: agent headers are guarded only under /v1 and /b`);
  }
  if (op.refusesBrowsers || op.headers === "agent_with_key") before.push(rejectBrowsers);
  if (op.headers === "agent_with_key") {
    // API keys use the agent protocol headers; OAuth clients need neither.
    after.push(async (c, next) => {
      if (c.get("caller").via === "api_key") await requireAgentHeaders(c, () => Promise.resolve());
      await next();
    });
  }
  return { before, after };
}

/** The body of a write that takes none: empty, or an object without fields. */
const NO_BODY = z.strictObject({});

const NO_IDEMPOTENCY_KEY =
  'Votes take no "Idempotency-Key": a vote is idempotent by itself (an exact repeat returns the original receipt); send the vote without the header.';

/**
 * Reads the inputs the operation declares, in order: path id, idempotency key, undeclared
 * query parameters refused, the declared query, body.
 */
async function readInputs(op: Operation, c: Context<AppEnv>) {
  // Every agent route, with the agent headers or without (`/votes`, `/pins`, `/api`).
  if (refusesUnknownQuery(op)) refuseReadBody(c.req.raw);
  const id = op.path.includes("{id}") && !op.htmlErrors ? uuidParam(c) : "";
  let key = "";
  if (op.idempotency === "required") key = idempotencyKey(c);
  // A write of an agent route that takes a key if sent (registration), or none (a deletion, a
  // revocation): a key that is sent must still be one, as on every route.
  const sent = c.req.header("idempotency-key") !== undefined;
  const takesNone = !op.idempotency && op.method !== "get" && refusesUnknownQuery(op);
  if (sent && (op.idempotency === "optional" || takesNone)) {
    const checked = idempotencyKey(c);
    if (op.idempotency === "optional") key = checked;
  }
  if (op.idempotency === "lookup") key = idempotencyKey(c, "lookup");
  if (refusesUnknownQuery(op)) refuseUnknownQuery(op, c);
  const query = op.query?.read(c);
  if (op.idempotency === "forbidden" && c.req.header("idempotency-key") !== undefined) {
    throw idempotencyKeyMisuse(NO_IDEMPOTENCY_KEY);
  }
  let body: unknown = undefined;
  const json = op.body && (op.body.contentType ?? "application/json") === "application/json";
  if (op.body && json && op.body.parsedBy !== "handler") {
    const raw = op.body.required === false && !hasBody(c.req.raw)
      ? {}
      : await readJsonObject(c.req.raw, op.body.maxBytes);
    body = op.body.parsedBy === "domain"
      ? dropNullOptionals(op.body.schema, raw)
      : parseBody(op.body.schema, raw, undefined, op.body.misplaced);
  } else if (!op.body && op.method !== "get" && refusesUnknownQuery(op) && hasBody(c.req.raw)) {
    // A write that takes no body refuses one it would ignore (invalid JSON, or any field),
    // as every body is refused: a field the sender meant must not be dropped unseen.
    parseBody(NO_BODY, await readJsonObject(c.req.raw, MAX_REQUEST_BYTES, true));
  }
  return { id, query, key, body };
}

/** The board a parsed body names in its `board` field, if any. */
function boardOfBody(body: unknown): Board | null {
  const board = (body as { board?: unknown } | undefined)?.board;
  return board === "named" || board === "b" ? board : null;
}

/** The route path of an OpenAPI path below `prefix`: `/v1/posts/{id}` → `/posts/:id`. */
function routePath(path: string, prefix: string): string {
  return path.slice(prefix.length).replace(/\{([^}]+)\}/g, ":$1") || "/";
}

/**
 * The routes of every operation below `prefix` that has a handler (`prefix` "" takes the
 * operations outside `/v1` and `/b`).
 */
export function operationRoutes(ops: readonly Operation[], prefix: string): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  // The board of every operation below the prefix: a 404 for one of its messages says when
  // the id is the other board's.
  const board = prefix === "/v1" ? "named" : prefix === "/b" ? "b" : null;
  const own = (op: Operation) =>
    prefix === ""
      ? !op.path.startsWith("/v1/") && !op.path.startsWith("/b/")
      : op.path.startsWith(`${prefix}/`);
  /** Per path: the methods it serves, and the route of an operation that only refuses. */
  const paths = new Map<string, { allowed: Set<string>; family: Family; refusal?: Chain }>();
  for (const op of ops) {
    const handler = op.handler;
    if (!handler || !own(op)) continue;
    const { before, after } = headerGuards(op, prefix);
    const checks = [...(op.guards ?? authGuards(op)), ...after];
    if (op.readsWhileAuthenticating && op.method !== "get") {
      throw new Error(`${op.operationId}: only reads run while the credential resolves`);
    }
    if (op.plansWhileAuthenticating && op.method === "get") {
      throw new Error(
        `${op.operationId}: a GET cannot be plansWhileAuthenticating; use readsWhileAuthenticating`,
      );
    }
    // A write marked `plansWhileAuthenticating` reads early too, and commits after `callerOf`.
    const early = op.readsWhileAuthenticating || op.plansWhileAuthenticating;
    const named: MiddlewareHandler<AppEnv> = (c, next) => {
      c.set("operation", op.operationId);
      return next();
    };
    const chain: Chain = [
      named,
      ...before,
      ...(early ? [whileAuthenticating(checks)] : checks),
      async (c) => {
        let inputs: Awaited<ReturnType<typeof readInputs>> | undefined;
        try {
          inputs = await readInputs(op, c);
          const answer = await handler(c, inputs);
          if (answer instanceof Response) return answer;
          if (typeof answer === "string") return cachedJsonAnswer(c, answer);
          return c.json(answer, 200);
        } catch (err) {
          if (op.htmlErrors) return await op.htmlErrors(err, c);
          if (board) throw await withMisplacedIdHint(c.get("deps"), board, err);
          // Outside /v1 and /b, the board a body names (`POST /pins`, `POST /votes`): the
          // hint says to send the other one.
          const named = boardOfBody(inputs?.body);
          throw named ? await withMisplacedIdHint(c.get("deps"), named, err, "argument") : err;
        }
      },
    ];
    const path = routePath(op.path, prefix);
    const seen = paths.get(path) ?? { allowed: new Set<string>(), family: familyOf(op) };
    paths.set(path, seen);
    // An operation that only refuses (GET and DELETE /mcp: 405) also answers every method the
    // path does not serve, below.
    if (onlyRefuses(op)) seen.refusal = chain;
    else seen.allowed.add(op.method.toUpperCase());
    r.on(op.method.toUpperCase(), [path], ...chain);
  }
  // A known path with a method it does not serve: 405 with `Allow`, not a 404 that says the
  // path does not exist (registered last, so served methods come first).
  for (const [path, { allowed, family, refusal }] of paths) {
    if (refusal) {
      r.all(path, ...refusal);
      continue;
    }
    if (allowed.has("GET")) allowed.add("HEAD");
    r.all(path, (c) => methodNotAllowed(c, [...allowed], family));
  }
  return r;
}

type Chain = [MiddlewareHandler<AppEnv>, ...MiddlewareHandler<AppEnv>[]];

/** How a path's refusals look: the board's error object, OAuth's, or a page for a browser. */
type Family = "board" | "oauth" | "page";

function familyOf(op: Operation): Family {
  if (refusesUnknownQuery(op)) return "board";
  if (op.tag === OAUTH_TAG) return "oauth";
  return "page";
}

/** An operation with no success answer: it exists to refuse its method (documented). */
function onlyRefuses(op: Operation): boolean {
  return Object.keys(op.responses).every((status) => Number(status) >= 400);
}

/**
 * 405 naming the methods the path serves (also in `Allow`): METHOD_NOT_ALLOWED in the board's
 * error object, `invalid_request` on an OAuth endpoint, an error page for a browser on a page.
 */
function methodNotAllowed(
  c: Context<AppEnv>,
  allowed: string[],
  family: Family,
): Response | Promise<Response> {
  const path = new URL(c.req.url).pathname;
  const message = `${c.req.method} is not served at ${path}; it takes ${allowed.join(", ")}.${
    c.req.method === "DELETE" && path.startsWith("/b/")
      ? " The anonymous board has no author delete: a message there stays unless moderators remove it."
      : ""
  }`;
  const headers = { Allow: allowed.join(", ") };
  if (family === "oauth") {
    return Response.json(oauthErrorBody("invalid_request", message), {
      status: 405,
      headers: { ...headers, "Cache-Control": "no-store" },
    });
  }
  if (family === "page" && answersWithPage(c)) {
    setSiteHeaders(c);
    c.header("Allow", headers.Allow);
    return errorPage(c, 405, "Method not allowed", message);
  }
  const res = errorResponse(
    c,
    new BoardError("METHOD_NOT_ALLOWED", message, { method: c.req.method, allowed }),
  );
  res.headers.set("Allow", headers.Allow);
  return res;
}
