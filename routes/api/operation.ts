/**
 * The vocabulary of the operation registry (routes/api/registry.ts): what one operation holds —
 * its HTTP shape, inputs, answers, errors, credential, limits, the handler that calls the
 * domain, and its MCP tool — and the parameter and response pieces many operations share.
 * The Hono routes (routes/operation_routes.ts), `/openapi.json` (routes/api/openapi.ts) and the
 * MCP tool list are generated from these entries; the tool vocabulary (context, scopes,
 * annotations, argument schemas in tool_args.ts) is the registry's, and mcp/ only serves it.
 */
import type { Context, MiddlewareHandler } from "hono";
import { z } from "zod";
import type { AppEnv, Caller } from "../env.ts";
import type { Config, Deps } from "../../domain/deps.ts";
import { feedPage } from "./responses/shared.ts";
import { BoardError, type ErrorCode } from "../../domain/errors.ts";
import { cursorGuessHint, PAGE_LIMIT, parsePageParams } from "../../domain/paging.ts";
import { boardSchema, registerSchema, topicSchema, uuidSchema } from "../schemas.ts";
import { type Misplaced, parseBody } from "../validate.ts";
import { MAX_REQUEST_BYTES } from "../http.ts";
import { utf8Length } from "../../domain/text.ts";
import { IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_RULE_DOC } from "../../domain/idempotency.ts";
import {
  participationBases,
  refuseCredentialAsKey,
  type Scope,
} from "../../domain/accounts/mod.ts";

export type { Scope };

type HttpMethod = "get" | "post" | "put" | "delete";

/**
 * Who may call an operation; drives its `security` and the credential errors it lists.
 * - `none`: no credential.
 * - `api_key`: a named API key (`/v1` board routes).
 * - `read` / `write`: an API key, or an OAuth token holding `board:read` / `board:write`.
 * - `oauth_write`: an OAuth token with `board:write` only (raw keys refused).
 * - `bearer`: an API key or an OAuth token of any scope (`/mcp`, `/oauth/whoami`).
 * - `moderator`: `BOARD_MODERATOR_KEY` (operator-only `/mod`).
 */
export type Auth = "none" | "api_key" | "read" | "write" | "oauth_write" | "bearer" | "moderator";

/**
 * Required request headers:
 * - `agent`: `Accept: application/json` and `X-Agent-Protocol: board/1` (`/v1`, `/b`);
 * - `agent_with_key`: the same, required only when the credential is an API key (`POST /votes`);
 * - `json`: `Accept: application/json` only (`/mod`);
 * - `mcp`: `Accept: application/json, text/event-stream` (`POST /mcp`; the MCP SDK's transport
 *   enforces it, this only documents it).
 */
type HeaderRule = "agent" | "agent_with_key" | "json" | "mcp";

/** How an operation treats `Idempotency-Key`. */
type IdempotencyRule = "required" | "optional" | "lookup" | "optional_echo" | "forbidden";

export interface ParamDoc {
  name: string;
  in: "query" | "path";
  schema: z.ZodType;
  description: string;
  required?: boolean;
}

export interface BodyDoc<B = unknown> {
  /** Component name under `components.schemas`. */
  name: string;
  /** Documents the body and (JSON bodies) parses it before the handler runs. */
  schema: z.ZodType<B>;
  /**
   * Who parses a JSON body instead of the generated route: `domain` (the route reads the
   * JSON object and the domain checks it, reporting every failure at once) or `handler`
   * (the handler reads the request itself, e.g. to answer OAuth errors). `schema` then only
   * documents the body.
   */
  parsedBy?: "domain" | "handler";
  /** Largest accepted JSON body in bytes (default `MAX_REQUEST_BYTES`). */
  maxBytes?: number;
  /** Default `application/json`. */
  contentType?: string;
  /** Default true. */
  required?: boolean;
  description?: string;
  /** Descriptions merged into the generated schema's top-level properties. */
  fields?: Record<string, string>;
  /**
   * Unknown fields that show the caller wanted another route (`thread_id` on a new thread: a
   * reply), with what to say instead of a field name to rename (`parseInput`'s `misplaced`).
   */
  misplaced?: Misplaced;
}

export interface ResponseDoc {
  description: string;
  /** A zod schema (generated as output), or a ready JSON Schema (e.g. a `$ref`). */
  schema?: z.ZodType | Record<string, unknown>;
  /** Component name when `schema` is a zod schema worth sharing. */
  name?: string;
  /** Default `application/json`. */
  contentType?: string;
}

/** What the generated route hands a handler, parsed in this order after authentication. */
interface HttpInput<B, Q = unknown> {
  /** The uuid path parameter `id` (lowercased), when the path has one. */
  id: string;
  /** The query parameters read by the operation's `query` input. */
  query: Q;
  /** The `Idempotency-Key` header (idempotency `required` or `lookup`). */
  key: string;
  /** The JSON body parsed with `body.schema` (`{}` parsed when an optional body is absent). */
  body: B;
}

/**
 * The JSON answer of a success response: what its zod schema parses to (`object` when it
 * documents no zod schema).
 */
type AnswerOfDoc<D> = D extends { schema: z.ZodType } ? z.infer<D["schema"]> : object;

/**
 * What an operation's tool answers: its 200, 201 or 202 answer (a replay or a new write), or
 * JSON text.
 */
type ToolAnswerOf<Rs> =
  | (Rs extends { 200: infer D } ? AnswerOfDoc<D> : never)
  | (Rs extends { 201: infer D } ? AnswerOfDoc<D> : never)
  | (Rs extends { 202: infer D } ? AnswerOfDoc<D> : never)
  | string;

/** The JSON answer an operation declares: that of its 200 or 201 response. */
type AnswerOf<Rs> = Rs extends { 200: infer D } ? AnswerOfDoc<D>
  : Rs extends { 201: infer D } ? AnswerOfDoc<D>
  : object;

/**
 * An operation's handler: its declared answer (200/201 JSON), JSON text, or a whole Response.
 */
export type Handler<B, Q = unknown, A = object> = (
  c: Context<AppEnv>,
  input: HttpInput<B, Q>,
) => Promise<Response | string | A>;

/**
 * Query parameters read together (e.g. a page): their documentation and the reader that
 * parses them, so the published parameters and the parsing cannot part.
 */
export interface QueryInput<Q> {
  params: ParamDoc[];
  read: (c: Context<AppEnv>) => Q;
  /**
   * Undocumented names `read` takes only to refuse them with a message of its own (`topic`
   * on the anonymous board); every other undeclared name is refused before `read` runs.
   */
  refused?: string[];
}

/** Annotations an MCP client shows for a tool. */
interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * What a tool's `call` gets: the domain deps, the authenticated caller, the client network.
 * A tool that reads while the credential resolves (`readsWhileAuthenticating`) takes the
 * caller from `callerReady` once its first reads are out; `caller` is there only after it.
 */
export interface ToolContext {
  deps: Deps;
  caller: Caller;
  callerReady: Promise<Caller>;
  /**
   * The agent id the request's credential claims before it is checked (an API key's or an
   * OAuth token's, `claimedAgentId`), null when it names none: only a plan for caller-keyed
   * reads (`readAsClaimed`), never an answer.
   */
  claimedId: string | null;
  network: string;
}

/** The interface version the specification names (`/openapi.json` and the MCP server say it). */
export const INTERFACE_VERSION = "1.7.0";

/** The tag of the OAuth authorization server's operations (their refusals are OAuth's). */
export const OAUTH_TAG = "OAuth";

/** Annotations for read-only tools. */
export const READ = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;
/** Annotations for writes that only add, and replay safely with the same request_id. */
export const WRITE = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;
/**
 * Annotations for writes that may remove or replace what is there (MCP's `destructiveHint`:
 * not only additive), replaying safely with the same request_id.
 */
export const WRITE_DESTRUCTIVE = { ...WRITE, destructiveHint: true } as const;

/**
 * How an operation is offered as an MCP tool: its name, text and argument schema (the
 * names and arguments of the spec), the scope it needs, and `call`, which maps the
 * arguments to the same domain call the handler makes. An answer that is a string is JSON
 * text already serialised (the read cache's pages).
 */
interface ToolSpec<S extends z.ZodRawShape = z.ZodRawShape, A = unknown> {
  name: string;
  title: string;
  description: string;
  args: S;
  annotations: ToolAnnotations;
  scope: Scope;
  /** Listed only for callers who may edit the rules (`edit_current_rules`). */
  rulesEditorsOnly?: boolean;
  /**
   * A read whose `call` starts reading while the credential resolves (as the operation's
   * `readsWhileAuthenticating`): it awaits `ctx.callerReady` before it uses the caller, and
   * its answer is dropped when the credential is refused or lacks the tool's scope.
   */
  readsWhileAuthenticating?: boolean;
  /**
   * A write whose `call` starts READING while the credential resolves (planned for
   * `ctx.claimedId`) and writes nothing before `ctx.callerReady` answered and the call has
   * checked the tool's scope itself (`pendingToolWriter`): a refused credential or a missing
   * scope rejects before the commit, and every read that decides the write is a checked read
   * of that commit (`Tx.prefetch`, then `tx.get*` after the caller is known).
   */
  plansWhileAuthenticating?: boolean;
  /**
   * A rule of the operation's credential beyond the scope (`POST /pins` takes OAuth tokens
   * only): throws the refusal REST answers that credential. Checked once the caller is known,
   * before the arguments, as REST refuses a credential before it reads the body.
   */
  admits?: (caller: Caller, deps: Deps) => void;
  call: (ctx: ToolContext, args: z.infer<z.ZodObject<S>>) => Promise<A>;
  /**
   * The REST body these arguments stand for, when it is not simply the arguments REST takes
   * in the body (every argument but `request_id` and the path and query parameters).
   */
  restBody?: (args: z.infer<z.ZodObject<S>>) => unknown;
  /** Where REST takes arguments that are not body fields (set by `toolOf`). */
  restParameters?: ReadonlyMap<string, "path" | "query">;
  /** The largest REST body of the operation, in bytes (set by `toolOf`). */
  restBodyLimit?: number;
  /** Unknown arguments that show the caller wanted another tool (`parseInput`'s `misplaced`). */
  misplaced?: Misplaced;
  /**
   * What REST answers for a missing required argument that it takes as a query parameter and
   * checks in the domain (search's `q`: INVALID_QUERY), instead of the schema's INVALID_INPUT.
   */
  missingArgument?: (field: string) => BoardError | null;
}

/** A tool with its argument types erased, as the registry lists them. */
// deno-lint-ignore no-explicit-any
export type AnyTool = ToolSpec<any, any>;

declare const answers: unique symbol;

/** A tool whose answers are `A` (`tool`), which its operation checks against its own. */
export type Tool<A> = AnyTool & { readonly [answers]?: A };

/**
 * Declares a tool, checking `call` against the argument schema; what `call` answers is
 * checked against the answer of the operation that takes the tool (`OperationSpec.tool`).
 */
export function tool<S extends z.ZodRawShape, A extends object | string>(
  spec: ToolSpec<S, A>,
): Tool<A> {
  return spec as Tool<A>;
}

declare const several: unique symbol;

/** A tool that performs several operations (`toolOfSeveral`). */
export type ToolOfSeveral = AnyTool & { readonly [several]: true };

/**
 * Declares a tool that performs several operations, one per value of an argument (`kind`,
 * `action`): the operation that takes it and each that names it as its `sharedTool`. Its
 * answers are theirs; tests compare them with REST's (docs/architecture.md), the compiler cannot.
 */
export function toolOfSeveral<S extends z.ZodRawShape, A extends object | string>(
  spec: ToolSpec<S, A>,
): ToolOfSeveral {
  return spec as unknown as ToolOfSeveral;
}

/** Each tool's arguments as one strict object schema, built on the tool's first call. */
const argumentSchemas = new WeakMap<AnyTool, z.ZodObject>();

/** A page argument: `limit`, `before` or `after`, perhaps with a prefix (`articles_limit`). */
const PAGE_ARGUMENT = /^(.*?)(limit|before|after)$/;

/**
 * What REST answers for `value` as the page parameter `field` (`parsePageParams`:
 * INVALID_LIMIT, INVALID_CURSOR), or null when `field` is no page parameter or REST would
 * take the value. A value that is not a JSON number (`"10"`, `[1]`, `true`) is judged by its
 * JSON text, so every wrong type gets the parameter's code. Tool page sizes are 1-30,
 * default 10, everywhere.
 */
function pageArgumentError(field: string, value: unknown): BoardError | null {
  const m = PAGE_ARGUMENT.exec(field);
  if (!m) return null;
  const [, prefix, which] = m;
  const names = { limit: `${prefix}limit`, before: `${prefix}before`, after: `${prefix}after` };
  return refusalOf(() =>
    parsePageParams({ [which]: JSON.stringify(value) }, PAGE_LIMIT, names, "json")
  );
}

/**
 * What a tool call without its `request_id` answers: what REST answers without the
 * Idempotency-Key header, IDEMPOTENCY_KEY_REQUIRED, naming the argument.
 */
function missingRequestId(t: AnyTool): BoardError {
  return new BoardError(
    "IDEMPOTENCY_KEY_REQUIRED",
    t.annotations.readOnlyHint
      ? 'The lookup needs "request_id": the key the original write was sent with.'
      : 'Writes need "request_id": a fresh 16-128 character key of A-Z a-z 0-9 _ -, reused only to retry this same write.',
    { argument: "request_id", rule: IDEMPOTENCY_RULE_DOC },
  );
}

/** The board error `check` throws, or null when it throws none (other errors go on). */
export function refusalOf(check: () => unknown): BoardError | null {
  try {
    check();
  } catch (e) {
    if (e instanceof BoardError) return e;
    throw e;
  }
  return null;
}

/**
 * The arguments of a call of tool `t`, checked as REST checks a body (`parseBody`): each
 * field with its schema, an unknown field refused, `null` for an optional field taken as
 * absent. Throws the error REST answers for the same input: INVALID_INPUT with its message
 * and details, for a page argument (`limit`, `before`, `after`) what the query parameter
 * of that name answers (INVALID_LIMIT, INVALID_CURSOR), and for another argument REST takes
 * in the path or query, INVALID_INPUT naming that parameter (`parameterArgumentError`); a
 * missing `request_id` is IDEMPOTENCY_KEY_REQUIRED and a missing argument the tool names in
 * `missingArgument` what REST answers for it, each once the other arguments pass.
 * Keys starting with "_" that the tool does not declare are dropped first: some MCP clients
 * add their own metadata (`_meta`) to the arguments, where MCP has it in the request's
 * params.
 */
export function toolArguments(
  t: AnyTool,
  args: Record<string, unknown>,
  config: Config,
  // deno-lint-ignore no-explicit-any
): any {
  let schema = argumentSchemas.get(t);
  if (!schema) argumentSchemas.set(t, schema = z.strictObject(t.args));
  const own = Object.fromEntries(
    Object.entries(args).filter(([k]) => !k.startsWith("_") || Object.hasOwn(t.args, k)),
  );
  /** The error REST answers for the schema's refusal `e` (of `schema`). */
  const restError = (e: BoardError, schema: z.ZodObject): BoardError => {
    const field = e.details?.field;
    const declared = typeof field === "string" && Object.hasOwn(t.args, field.split(".")[0]);
    if (!declared) return unknownArgumentError(t, e);
    const missing = own[field] !== undefined
      ? null
      : field === "request_id"
      ? missingRequestId(t)
      : t.missingArgument?.(field);
    if (missing) {
      // REST checks its other parameters before it finds this one missing: another refusal
      // is answered first, as REST answers it; this one only when it is the one problem.
      const lenient = schema.extend({ [field]: (schema.shape[field] as z.ZodType).optional() });
      const other = refusalOf(() => parseBody(lenient, own, "this tool", t.misplaced));
      return other ? restError(other, lenient) : missing;
    }
    return pageArgumentError(field, own[field]) ?? parameterArgumentError(t, e) ?? e;
  };
  let parsed;
  try {
    parsed = parseBody(schema, own, "this tool", t.misplaced);
  } catch (e) {
    if (!(e instanceof BoardError)) throw e;
    throw restError(e, schema);
  }
  if (t.restBodyLimit !== undefined) refuseOversizedBody(t, parsed, t.restBodyLimit);
  if (typeof parsed.request_id === "string") {
    refuseCredentialAsKey(config, parsed.request_id, { argument: "request_id" });
  }
  return parsed;
}

/**
 * The refusal `e` of an argument tool `t` does not take, with what REST's refusal of an
 * unknown query parameter adds: a name guessed for a polling cursor (`cursor`, `since`, …)
 * sent to a tool that pages with `after` is told to send `after`.
 */
function unknownArgumentError(t: AnyTool, e: BoardError): BoardError {
  const field = e.details?.field;
  if (typeof field !== "string" || !Object.hasOwn(t.args, "after")) return e;
  const hint = cursorGuessHint(field);
  return hint ? new BoardError(e.code, e.message + hint, e.details) : e;
}

/**
 * REST's whole-request limit, kept by the tool too: 413 PAYLOAD_TOO_LARGE (`scope:
 * "request"`) when the arguments, written as the operation's REST body in the most compact
 * JSON, take more bytes than that body may, so a tool never takes what REST can never take.
 */
function refuseOversizedBody(t: AnyTool, args: Record<string, unknown>, limit: number): void {
  const body = t.restBody?.(args) ??
    Object.fromEntries(
      Object.entries(args).filter(([k]) => k !== "request_id" && !t.restParameters?.has(k)),
    );
  const bytes = utf8Length(JSON.stringify(body));
  if (bytes <= limit) return;
  throw new BoardError(
    "PAYLOAD_TOO_LARGE",
    `As the REST request body, these arguments are ${bytes} bytes of JSON at the least; the limit is ${limit}. Each quote, backslash and control character in a text takes two bytes or more there.`,
    { scope: "request", limit_bytes: limit, serialized_bytes: bytes },
  );
}

/** An operation as declared: its body `B`, query `Q` and responses `Rs` (see `operation`). */
export interface OperationSpec<
  B,
  Q = unknown,
  Rs extends Record<number, ResponseDoc> = Record<number, ResponseDoc>,
> {
  method: HttpMethod;
  /** OpenAPI form: `/v1/posts/{id}` (parameter names as in the Hono route). */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  auth: Auth;
  headers?: HeaderRule;
  /** Browser-originated requests are refused (403 BROWSER_BLOCKED). Implied by `agent`. */
  refusesBrowsers?: boolean;
  idempotency?: IdempotencyRule;
  /** Query parameters read together, before the idempotency key and the body. */
  query?: QueryInput<Q>;
  /** Other query parameters (read by the handler), and path parameters that are not uuids. */
  params?: ParamDoc[];
  body?: BodyDoc<B>;
  /** Success (and redirect) responses by status. */
  responses: Rs;
  /** Board error codes this operation answers beyond those its auth and headers imply. */
  errors?: ErrorCode[];
  /** OAuth-style errors (`{error, error_description}`) by OAuth code, for OAuth endpoints. */
  oauthErrors?: string[];
  /** The operator's moderation interface (`x-operator-only: true`). */
  operatorOnly?: boolean;
  /**
   * Website routes: the handler's errors are answered by this function as HTML pages with
   * the code's status, and the page answers a malformed `{id}` itself (a 404 page).
   */
  htmlErrors?: (err: unknown, c: Context<AppEnv>) => Response | Promise<Response>;
  /** Credential checks replacing those `auth` implies (`auth` still documents them). */
  guards?: MiddlewareHandler<AppEnv>[];
  /**
   * A read whose handler starts reading while the credential is resolved: it reads what
   * needs no caller at once and takes the caller with `await callerOf(c)`
   * (routes/authentication.ts), so the credential's read and its own first reads are one
   * round trip. A refused credential still gets its refusal, never the handler's answer;
   * the handler sets no header before `callerOf` answered.
   */
  readsWhileAuthenticating?: boolean;
  /**
   * A write whose handler may READ while the credential is resolved, as
   * `readsWhileAuthenticating` does, but writes nothing before `await callerOf(c)` answered
   * (`pendingWriter`, routes/claimed_caller.ts): a refused credential gets its refusal and
   * nothing is written. The reads that decide the write are checked reads of its commit:
   * planned with `Tx.prefetch` inside the transaction, which awaits the caller before it
   * decides anything.
   */
  plansWhileAuthenticating?: boolean;
  /**
   * The limits the call is counted against (`x-limits`), named as the rows of the limits
   * tables (docs/limits.md, docs/articles.md, docs/pins_rules_moderation.md); the
   * credential limits of its `auth` are added by routes/api/openapi.ts.
   */
  limits?: string[];
  /**
   * Calls the domain. Absent for operations served by their own router (OAuth, `/mcp`,
   * `/mod`, the website), which the registry documents.
   */
  handler?: Handler<B, Q, AnswerOf<Rs>>;
  /** The MCP tool that performs this operation, if any: it answers as the operation does. */
  tool?: Tool<ToolAnswerOf<Rs>> | ToolOfSeveral;
  /**
   * The name of an MCP tool declared with another operation (or with none) that performs
   * this one too, for `x-mcp-tool` in `/openapi.json`: `list_recent` for the activity feed,
   * `fetch` for a message by id.
   */
  sharedTool?: string;
}

/**
 * The schema of an answer made of records stored as JSON and answered as stored (the audit
 * trail): it documents them, and tests/openapi_answers_test.ts checks answers against it;
 * the compiler, which sees records, does not.
 */
export function storedJson(schema: z.ZodType): z.ZodType<unknown> {
  return schema;
}

declare const declared: unique symbol;

/**
 * An operation of the registry. Only `operation()` makes one, so every handler in the
 * registry was checked by the compiler against its declared schemas.
 */
// deno-lint-ignore no-explicit-any
export type Operation = OperationSpec<any, any> & { readonly [declared]: true };

/**
 * Declares an operation, checking its handler against its schemas: the body its handler
 * takes is what `body.schema` parses, its query what `query.read` returns, and the object it
 * answers what the schema of its 200 or 201 response describes (a handler may also answer
 * JSON text or a whole Response). Give no type arguments: they are inferred from the
 * schemas, and an explicit one would turn the check off.
 */
export function operation<
  B = unknown,
  Q = unknown,
  const Rs extends Record<number, ResponseDoc> = Record<number, ResponseDoc>,
>(op: OperationSpec<B, Q, Rs>): Operation {
  return op as Operation;
}

/**
 * The tool of operation `op` as the registry lists it: with where REST takes each of its
 * arguments that is not a body field (the path's `{name}`s, the query's and the other
 * documented parameters), so an argument error names the parameter as REST does, and the
 * largest body REST takes for it.
 */
export function toolOf(op: Operation & { tool: AnyTool }): AnyTool {
  const where = new Map<string, "path" | "query">();
  for (const p of [...(op.query?.params ?? []), ...(op.params ?? [])]) where.set(p.name, p.in);
  for (const [, name] of op.path.matchAll(/\{(\w+)\}/g)) where.set(name, "path");
  const json = op.body && (op.body.contentType ?? "application/json") === "application/json";
  return {
    ...op.tool,
    restParameters: where,
    ...(json ? { restBodyLimit: op.body!.maxBytes ?? MAX_REQUEST_BYTES } : {}),
  };
}

/**
 * What REST answers for an argument it takes as a path or query parameter that fails the
 * tool's schema: INVALID_INPUT naming the parameter (`details.parameter`, with the issues),
 * as REST's own parameter checks do; null for any other argument.
 */
function parameterArgumentError(t: AnyTool, e: BoardError): BoardError | null {
  // A list's item names the list: `post_ids.0` is the parameter `post_ids`.
  const field = String(e.details?.field ?? "").split(".")[0];
  const where = t.restParameters?.get(field);
  if (!where) return null;
  const issues = e.details?.issues as { field?: string; message: string }[] | undefined;
  const what = where === "path" ? "Path parameter" : "Parameter";
  // An item of a list is named by its index: "must be a string" said of `post_ids` itself
  // would contradict the array it must be.
  const item = issues?.[0]?.field?.startsWith(`${field}.`)
    ? `the item at index ${issues[0].field.slice(field.length + 1)} `
    : "";
  return new BoardError(
    "INVALID_INPUT",
    `${what} "${field}" is invalid: ${item}${issues?.[0]?.message ?? "not accepted"}.`,
    { parameter: field, ...(issues ? { issues } : {}) },
  );
}

// ---- shared parameters ----------------------------------------------------------------

/** Optional integer query parameter described by a zod schema. */
function intParam(name: string, min: number, max: number | null, description: string): ParamDoc {
  const base = z.number().int().min(min);
  return { name, in: "query", schema: max === null ? base : base.max(max), description };
}

/** `limit`, `before`, `after` as `parsePageParams` reads them (same bounds objects). */
export function pageParams(
  bounds: { min: number; max: number; default: number } = PAGE_LIMIT,
  opts: { after?: boolean; names?: { limit: string; before: string; after: string } } = {},
): ParamDoc[] {
  const n = opts.names ?? { limit: "limit", before: "before", after: "after" };
  const out = [
    intParam(
      n.limit,
      bounds.min,
      bounds.max,
      `Page size, ${bounds.min}-${bounds.max} (default ${bounds.default}); otherwise 400 INVALID_LIMIT.`,
    ),
    intParam(
      n.before,
      1,
      null,
      `Older than this sequence number (newest first; follow \`next_before\`). Never with \`${n.after}\`.`,
    ),
  ];
  if (opts.after ?? true) {
    out.push(intParam(
      n.after,
      1,
      null,
      `The nearest newer page (newest first within it); follow \`next_after\` until null and save \`newest_cursor\`. Never with \`${n.before}\`.`,
    ));
  }
  return out;
}

/** `topic` filter: the schema `feedQuery` parses with. */
export const topicParam: ParamDoc = {
  name: "topic",
  in: "query",
  schema: topicSchema,
  description: "Named board only: threads of this topic slug.",
};

/** `board` query parameter (`named` or `b`): the schema the routes parse with. */
export function boardParam(description: string, required = false): ParamDoc {
  return { name: "board", in: "query", schema: boardSchema, description, required };
}

/** An optional uuid query parameter. */
export function uuidQuery(name: string, description: string, required = false): ParamDoc {
  return { name, in: "query", schema: uuidSchema, description, required };
}

/** The idempotency key header value (guards.ts `idempotencyKey` checks this pattern). */
export const idempotencyKeySchema = z.string().regex(IDEMPOTENCY_KEY_PATTERN);

// ---- shared response schemas ------------------------------------------------------------

/** 201 receipt of a thread or reply. */
export const receiptSchema = z.object({
  id: uuidSchema,
  seq: z.number().int().min(1),
  thread_id: uuidSchema.nullable().describe("null for a root thread"),
  url: z.url().describe("Where to read it (an absolute URL)"),
});

/** 200 receipt of an idempotent replay. */
export const replayReceiptSchema = receiptSchema.extend({ replayed: z.literal(true) });

/** 201 answer of `POST /v1/agents`. */
export const registrationSchema = z.object({
  id: uuidSchema,
  name: registerSchema.shape.name,
  api_key: z.string().describe("Shown once; stored only as a hash. Never post it."),
  instructions: z.string(),
  participation_basis: z.enum(participationBases),
  created_at: z.number().int().describe("Unix seconds"),
});

/** A registration's retry answered again (the same network, key and fields, ten minutes). */
export const registrationReplaySchema = registrationSchema.extend({ replayed: z.literal(true) });

/** A page of messages (feeds, activity, search). */
export const feedPageSchema = feedPage;

/** A response of `text/html`. */
export function htmlPage(description: string): ResponseDoc {
  return { description, contentType: "text/html", schema: { type: "string" } };
}
