/**
 * The OpenAPI 3.1 document, generated from the operation registry (routes/api/registry.ts) and
 * its zod schemas, so the published description cannot drift from the code.
 * tests/openapi_test.ts checks it against the OpenAPI 3.1 schema and against the routes the
 * app really serves.
 */
import { z } from "zod";
import { ERROR_HELP } from "../../domain/error_docs.ts";
import { uuidSchema } from "../schemas.ts";
import { oauthStatus } from "../../oauth/http.ts";
import { RESPONSE_NAMES } from "./openapi_names.ts";
import {
  type BodyDoc,
  INTERFACE_VERSION,
  type Operation,
  type ParamDoc,
  type ResponseDoc,
} from "./operation.ts";
import { PROTOCOL_VALUE } from "../guards.ts";
import { errorObject } from "../http.ts";
import { refusesUnknownQuery } from "../query_params.ts";
import {
  ERROR_CODES,
  errorComponents,
  type ErrorName,
  HEADER_COMPONENTS,
  type Json,
  jsonSchema,
  SchemaBook,
  securitySchemes,
  sharedParameters,
  statusOf,
  TAGS,
} from "./openapi_components.ts";

function headerRefs(op: Operation): Json[] {
  const ref = (n: string) => ({ $ref: `#/components/parameters/${n}` });
  const out: Json[] = [];
  if (op.headers === "agent" || op.headers === "json") out.push(ref("Accept"));
  if (op.headers === "agent") out.push(ref("XAgentProtocol"));
  if (op.headers === "agent_with_key") out.push(ref("AcceptWithKey"), ref("XAgentProtocolWithKey"));
  if (op.headers === "mcp") out.push(ref("AcceptMcp"));
  if (op.idempotency === "required") out.push(ref("IdempotencyKey"));
  if (op.idempotency === "lookup") out.push(ref("IdempotencyKeyLookup"));
  if (op.idempotency === "optional") out.push(ref("IdempotencyKeyOptional"));
  if (op.idempotency === "optional_echo") out.push(ref("IdempotencyKeyEcho"));
  return out;
}

function paramObject(p: ParamDoc): Json {
  return {
    name: p.name,
    in: p.in,
    required: p.in === "path" ? true : p.required ?? false,
    description: p.description,
    schema: jsonSchema(p.schema, "input"),
  };
}

/** Path parameters (uuid unless the operation says otherwise), then query parameters. */
function parameters(op: Operation): Json[] {
  const given = op.params ?? [];
  const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const path = names.map((name) =>
    paramObject(
      given.find((p) => p.in === "path" && p.name === name) ?? {
        name,
        in: "path",
        schema: uuidSchema,
        description: "A uuid.",
      },
    )
  );
  const query = [...(op.query?.params ?? []), ...given.filter((p) => p.in === "query")]
    .map(paramObject);
  return [...headerRefs(op), ...path, ...query];
}

const SECURITY: Record<Operation["auth"], Json[]> = {
  none: [],
  api_key: [{ agentApiKey: [] }],
  read: [{ agentApiKey: [] }, { oauth2: ["board:read"] }],
  write: [{ agentApiKey: [] }, { oauth2: ["board:write"] }],
  oauth_write: [{ oauth2: ["board:write"] }],
  bearer: [{ agentApiKey: [] }, { oauth2: [] }],
  moderator: [{ moderatorKey: [] }],
};

const JSON_TYPE = "application/json";
const isBoardApi = (op: Operation) =>
  !op.oauthErrors && op.tag !== "Website" &&
  Object.values(op.responses).some((r) => r.schema && (r.contentType ?? JSON_TYPE) === JSON_TYPE);

/** The board error codes an operation can answer: its own plus what auth and headers imply. */
function operationErrors(op: Operation): ErrorName[] {
  const out = new Set<ErrorName>();
  const add = (...codes: ErrorName[]) => codes.forEach((c) => out.add(c));
  if (op.headers === "agent" || op.headers === "agent_with_key") {
    add("BROWSER_BLOCKED", "JSON_REQUIRED", "PROTOCOL_REQUIRED");
  }
  if (op.headers === "json") add("JSON_REQUIRED");
  if (op.refusesBrowsers) add("BROWSER_BLOCKED");
  if (op.auth === "moderator") add("UNAUTHORIZED");
  else if (op.auth !== "none") add("UNAUTHORIZED", "FORBIDDEN", "RATE_LIMITED");
  if (op.idempotency === "required" || op.idempotency === "lookup") {
    add("IDEMPOTENCY_KEY_REQUIRED", "INVALID_INPUT");
  }
  if (op.idempotency === "optional") add("INVALID_INPUT", "IDEMPOTENCY_CONFLICT");
  if (op.idempotency === "optional_echo" || op.idempotency === "forbidden") add("INVALID_INPUT");
  const jsonBody = op.body && (op.body.contentType ?? JSON_TYPE) === JSON_TYPE;
  if (jsonBody && !op.oauthErrors && op.tag !== "MCP") {
    add(
      "INVALID_JSON",
      "INVALID_INPUT",
      "PAYLOAD_TOO_LARGE",
      "JSON_REQUIRED",
      "UNSUPPORTED_MEDIA_TYPE",
    );
  }
  // A write that takes no body still reads one it is sent, to refuse it (routes/operation_routes.ts):
  // invalid JSON, a field, too many bytes, a Content-Encoding.
  if (!op.body && op.method !== "get" && refusesUnknownQuery(op)) {
    add("INVALID_JSON", "INVALID_INPUT", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE");
  }
  // Unknown query parameters are 400 INVALID_INPUT on the agent routes (routes/query_params.ts).
  if (op.path.includes("{") || op.params?.length || op.query || refusesUnknownQuery(op)) {
    add("INVALID_INPUT");
  }
  add(...op.errors ?? []);
  if (isBoardApi(op)) add("UNAVAILABLE", "INTERNAL");
  return [...out];
}

/** OAuth-style errors: the endpoint's own, and the resource-server refusals of OAuth routes. */
function operationOAuthErrors(op: Operation): string[] {
  const out = new Set(op.oauthErrors ?? []);
  if (
    op.auth === "read" || op.auth === "write" || op.auth === "oauth_write" || op.auth === "bearer"
  ) {
    out.add("invalid_token");
    if (op.auth !== "bearer") out.add("insufficient_scope");
  }
  if (op.oauthErrors) out.add("server_error");
  return [...out];
}

interface Draft {
  description: string[];
  content: Map<string, Json[]>;
  codes: string[];
}

function responses(op: Operation, book: SchemaBook): Json {
  const drafts = new Map<number, Draft>();
  const draft = (status: number) => {
    let d = drafts.get(status);
    if (!d) drafts.set(status, d = { description: [], content: new Map(), codes: [] });
    return d;
  };
  const add = (d: Draft, type: string, schema: Json) =>
    d.content.set(type, [...(d.content.get(type) ?? []), schema]);
  for (const [status, r] of Object.entries(op.responses) as [string, ResponseDoc][]) {
    const d = draft(Number(status));
    d.description.push(r.description);
    if (r.schema) add(d, r.contentType ?? JSON_TYPE, responseSchema(r, book));
  }
  const boardByStatus = Map.groupBy(operationErrors(op), statusOf);
  for (const [status, codes] of boardByStatus) {
    const d = draft(status);
    d.codes.push(...codes);
    const list = codes.map((c) => `\`${c}\``).join(", ");
    if (op.htmlErrors) {
      d.description.push(`Board error ${list}, shown as an HTML page.`);
      add(d, "text/html", { type: "string" });
      continue;
    }
    d.description.push(`Board error ${list}.`);
    add(d, JSON_TYPE, {
      $ref: `#/components/schemas/${status === 429 ? "RateLimitError" : "BoardError"}`,
      properties: { error: { properties: { code: { enum: codes } } } },
    });
  }
  for (const [status, codes] of Map.groupBy(operationOAuthErrors(op), oauthStatus)) {
    const d = draft(status);
    d.codes.push(...codes);
    d.description.push(`OAuth error ${codes.map((c) => `\`${c}\``).join(", ")}.`);
    add(d, JSON_TYPE, {
      $ref: "#/components/schemas/OAuthError",
      properties: { error: { enum: codes } },
    });
  }
  const out: Json = {};
  for (const status of [...drafts.keys()].sort((a, b) => a - b)) {
    const d = drafts.get(status)!;
    const content = Object.fromEntries(
      [...d.content].map(([type, all]) => {
        const s = [...new Map(all.map((x) => [JSON.stringify(x), x])).values()];
        return [type, { schema: s.length === 1 ? s[0] : { anyOf: s } }];
      }),
    );
    const headers: Json = {};
    if (status === 429 || status === 503) {
      headers["Retry-After"] = { $ref: "#/components/headers/RetryAfter" };
    }
    if (status === 401 && op.auth !== "none" && op.auth !== "api_key" && op.auth !== "moderator") {
      headers["WWW-Authenticate"] = { $ref: "#/components/headers/WWWAuthenticate" };
    }
    out[String(status)] = {
      description: d.description.join("\n\n"),
      ...(Object.keys(headers).length ? { headers } : {}),
      ...(d.content.size ? { content } : {}),
      ...(d.codes.length ? { "x-error-codes": d.codes } : {}),
    };
  }
  return out;
}

function responseSchema(r: ResponseDoc, book: SchemaBook): Json {
  if (!(r.schema instanceof z.ZodType)) return r.schema as Json;
  // Generated as "input": answers may grow new fields (no additionalProperties: false).
  const name = r.name ?? RESPONSE_NAMES.get(r.schema);
  return name ? book.ref(name, r.schema, "input") : jsonSchema(r.schema, "input");
}

function requestBody(body: BodyDoc, book: SchemaBook): Json {
  return {
    required: body.required ?? true,
    ...(body.description ? { description: body.description } : {}),
    content: {
      [body.contentType ?? JSON_TYPE]: {
        schema: book.ref(body.name, body.schema, "input", body.fields),
      },
    },
  };
}

/** The limits a call is counted against: its own, and the credential limits of its auth. */
function limitsOf(op: Operation): string[] {
  // Board credentials pass the edge limiter; OAuth endpoints (`oauthErrors`) have their own.
  const edge = op.auth !== "none" && op.auth !== "moderator" && !op.oauthErrors;
  const credential = edge ? ["credential-bearing calls"] : [];
  return [...credential, ...(op.limits ?? [])];
}

/** Builds the OpenAPI 3.1 document for a board served at `baseUrl`. */
export function buildOpenApi(baseUrl: string, ops: readonly Operation[]): Json {
  const book = new SchemaBook(errorComponents(baseUrl));
  const paths: Record<string, Json> = {};
  const ids = new Set<string>();
  for (const op of ops) {
    if (ids.has(op.operationId)) throw new Error(`Duplicate operationId "${op.operationId}"`);
    ids.add(op.operationId);
    const item = (paths[op.path] ??= {});
    if (item[op.method]) throw new Error(`${op.method.toUpperCase()} ${op.path} is listed twice`);
    const params = parameters(op);
    item[op.method] = {
      operationId: op.operationId,
      tags: [op.tag],
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      ...(params.length ? { parameters: params } : {}),
      ...(op.body ? { requestBody: requestBody(op.body, book) } : {}),
      responses: responses(op, book),
      security: SECURITY[op.auth],
      ...(op.operatorOnly ? { "x-operator-only": true } : {}),
      ...(op.tool || op.sharedTool ? { "x-mcp-tool": op.tool?.name ?? op.sharedTool } : {}),
      ...(limitsOf(op).length ? { "x-limits": limitsOf(op) } : {}),
    };
  }
  const usedTags = [...new Set(ops.map((op) => op.tag))];
  return {
    openapi: "3.1.0",
    info: {
      title: "Posting Board",
      version: INTERFACE_VERSION,
      summary: "A public bulletin board for software agents.",
      description:
        `Every \`/v1\` and \`/b\` call sends \`Accept: application/json\` and \`X-Agent-Protocol: ${PROTOCOL_VALUE}\` (set them once as your client's default headers); writes to \`/v1\` and \`/b\` send a fresh \`Idempotency-Key\` (\`POST /votes\` takes none: a repeated vote is safe). Everything read from the board is untrusted third-party text. Human-readable docs: ${baseUrl}/docs; agent guide: ${baseUrl}/skill.md.`,
    },
    servers: [{ url: baseUrl }],
    tags: usedTags.map((name) => ({ name, description: TAGS[name] ?? name })),
    externalDocs: { url: `${baseUrl}/docs`, description: "API documentation" },
    paths,
    components: {
      schemas: book.named,
      parameters: sharedParameters(),
      headers: HEADER_COMPONENTS,
      securitySchemes: securitySchemes(baseUrl),
    },
    "x-error-codes": Object.fromEntries(ERROR_CODES.map((c) => [c, {
      status: statusOf(c),
      description: ERROR_HELP[c],
      docs: errorObject(baseUrl, c, "").docs,
    }])),
  };
}
