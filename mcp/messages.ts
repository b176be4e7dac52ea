/**
 * The JSON-RPC rules of `POST /mcp`, checked on the parsed body before the SDK sees it
 * (docs/mcp.md "Protocol errors"), with the SDK's own schemas:
 *
 * - a body that is no JSON-RPC message, or a batch that is empty, too long, has a member
 *   that is no JSON-RPC message or repeats a request id, is refused whole: 400 with
 *   `-32600` Invalid Request (`invalidBody`, before anything is counted);
 * - a request of a method the server serves whose params its schema refuses, or a
 *   `tools/call` of a tool that does not exist, is answered `-32602` Invalid params with
 *   its id, and the rest of the body runs (`checkParams`, then `answerWith`).
 *
 * The SDK would answer the first with `-32700` Parse error and the second with `-32603`
 * Internal error carrying the schema's raw issue list.
 */
import { valueAt } from "../routes/json_keys.ts";
import { redactCredentials } from "../domain/accounts/mod.ts";
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  JSONRPCErrorResponseSchema,
  JSONRPCMessageSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
  ListToolsRequestSchema,
  MAX_BATCH_SIZE,
  PingRequestSchema,
} from "./sdk.ts";

/** A JSON-RPC error answer outside any exchange (`id: null`), with its HTTP status. */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });
}

/** The JSON-RPC code of a request that is no valid JSON-RPC request. */
const INVALID_REQUEST = -32600;
/** The JSON-RPC code of a valid request whose params its method refuses. */
const INVALID_PARAMS = -32602;

type RequestId = string | number;

/** One issue of a zod parse, as much of it as the messages below read. */
interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  values?: unknown[];
  keys?: string[];
}

/** What a JSON-RPC envelope member must be, by its path. */
const ENVELOPE_RULES: Record<string, string> = {
  jsonrpc: 'must be "2.0"',
  id: "must be a string or an integer",
  method: "must be a string",
  params: "must be an object",
  "params._meta": "must be an object",
  result: "must be an object",
  error: "must be an object with an integer code and a string message",
};

/**
 * A sentence naming what `issue` found wrong in `input`: `"params.name" must be a string`.
 * `rules` gives the wording for members whose zod message would say less.
 */
function describeIssue(issue: Issue, input: unknown, rules: Record<string, string> = {}): string {
  if (issue.code === "unrecognized_keys" && issue.keys?.length) {
    const where = issue.path.length ? ` in "${issue.path.join(".")}"` : "";
    return `"${issue.keys[0]}" is not a member of a JSON-RPC message${where}`;
  }
  const name = issue.path.join(".");
  const missing = issue.path.length > 0 && valueAt(input, issue.path) === undefined;
  const rule = Object.hasOwn(rules, name) ? rules[name] : undefined;
  if (missing && rule) return `"${name}" is required and ${rule}`;
  const expected = issue.expected === "record" ? "object" : issue.expected;
  const kind = expected && `${/^[aeiou]/.test(expected) ? "an" : "a"} ${expected}`;
  if (missing) return `"${name}" is required${kind ? ` (${kind})` : ""}`;
  if (rule) return `"${name}" ${rule}`;
  if (issue.code === "invalid_type" && kind) return `"${name}" must be ${kind}`;
  if (issue.code === "invalid_value" && issue.values?.length) {
    return `"${name}" must be ${issue.values.map((v) => JSON.stringify(v)).join(" or ")}`;
  }
  if (issue.code === "invalid_union") return `"${name}" has a value of the wrong type`;
  return `"${name}": ${issue.message.replace(/^Invalid input: /, "")}`;
}

/** Why `m` is no JSON-RPC message (request, notification or response), or null when it is one. */
function notAMessage(m: unknown): string | null {
  if (JSONRPCMessageSchema.safeParse(m).success) return null;
  if (typeof m !== "object" || m === null || Array.isArray(m)) {
    return "a JSON-RPC message is an object";
  }
  const schema = "method" in m
    ? ("id" in m ? JSONRPCRequestSchema : JSONRPCNotificationSchema)
    : "error" in m
    ? JSONRPCErrorResponseSchema
    : "result" in m
    ? JSONRPCResultResponseSchema
    : null;
  if (!schema) {
    return 'the message has no "method" (a request or notification) and no "result" or "error" (a response)';
  }
  const issue = schema.safeParse(m).error?.issues[0] as Issue | undefined;
  return issue ? describeIssue(issue, m, ENVELOPE_RULES) : "it is no JSON-RPC message";
}

/** The id of `m` when it is a request (a message with a method and an id). */
function requestId(m: unknown): RequestId | undefined {
  if (typeof m !== "object" || m === null || !("method" in m) || !("id" in m)) return undefined;
  return m.id as RequestId;
}

/**
 * The refusal of a body that cannot run at all (400, `-32600` Invalid Request), or null. A
 * batch must hold 1 to `MAX_BATCH_SIZE` JSON-RPC messages whose requests have ids of their
 * own: a response names only its id, so a client could not tell two answers to one id apart.
 */
export function invalidBody(value: unknown): Response | null {
  const refuse = (why: string) => jsonRpcError(400, INVALID_REQUEST, `Invalid Request: ${why}.`);
  if (!Array.isArray(value)) {
    const why = notAMessage(value);
    return why === null ? null : refuse(why);
  }
  if (value.length === 0) return refuse("the batch is empty");
  if (value.length > MAX_BATCH_SIZE) {
    return refuse(`a batch must not exceed ${MAX_BATCH_SIZE} messages`);
  }
  const seen = new Map<RequestId, number>();
  for (const [i, m] of value.entries()) {
    const why = notAMessage(m);
    if (why !== null) return refuse(`the batch's message at index ${i}: ${why}`);
    if (value.length > 1 && (m as { method?: unknown }).method === "initialize") {
      // MCP 2025-03-26: an initialize request is never part of a batch (alone in one, the
      // SDK's transport takes it as the request it is).
      return refuse(
        `the batch's message at index ${i} is an initialize request, which is sent alone, never with other messages in a batch`,
      );
    }
    const id = requestId(m);
    if (id === undefined) continue;
    const first = seen.get(id);
    if (first !== undefined) {
      return refuse(
        `the batch's requests at index ${first} and ${i} have the same id ${
          JSON.stringify(id)
        }; each request of a batch needs an id of its own`,
      );
    }
    seen.set(id, i);
  }
  return null;
}

/** The schema of each request method this server answers (the SDK's). */
const SERVED_REQUESTS = new Map<string, typeof PingRequestSchema>(
  [PingRequestSchema, InitializeRequestSchema, ListToolsRequestSchema, CallToolRequestSchema]
    .map((s) => [s.shape.method.value, s as typeof PingRequestSchema]),
);

/** A JSON-RPC error answer to request `id`. */
interface ErrorAnswer {
  jsonrpc: "2.0";
  id: RequestId;
  error: { code: number; message: string; data?: unknown };
}

/** The `-32602` answer to request `id`, naming the param (`params.name`) in `data.param`. */
function invalidParams(
  id: RequestId,
  message: string,
  param: string,
  more: Record<string, string> = {},
): ErrorAnswer {
  return {
    jsonrpc: "2.0",
    id,
    error: { code: INVALID_PARAMS, message, data: { param, ...more } },
  };
}

/**
 * The tool of `tools` that `name` differs from only in case or separators (`CREATE_POST`,
 * `createPost`, `create-post` for `create_post`), or null.
 */
function toolMeant(name: string, tools: ReadonlySet<string>): string | null {
  const folded = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, "");
  const key = folded(name);
  if (key === "") return null;
  for (const t of tools) if (folded(t) === key) return t;
  return null;
}

/**
 * The `-32602` answer to request `m`, or null when its params are what its method takes.
 * `tools` names every tool a `tools/call` may name.
 */
function paramsAnswer(m: object, tools: ReadonlySet<string>): ErrorAnswer | null {
  const { id, method } = m as { id: RequestId; method: string };
  const schema = SERVED_REQUESTS.get(method);
  if (!schema) return null; // the SDK answers -32601 Method not found
  const parsed = schema.safeParse(m);
  if (!parsed.success) {
    const issue = parsed.error.issues[0] as Issue;
    return invalidParams(
      id,
      `Invalid params: ${describeIssue(issue, m)}.`,
      issue.path.join(".") || "params",
    );
  }
  const cursor = (m as { params?: { cursor?: unknown } }).params?.cursor;
  if (method === "tools/list" && cursor !== undefined) {
    // tools/list answers every tool in one page and gives no nextCursor: no cursor is one of
    // its own (MCP pagination: an invalid cursor is -32602).
    return invalidParams(
      id,
      'Invalid params: "params.cursor" names no page: tools/list answers every tool on one page and gives no cursor; call it without one.',
      "params.cursor",
    );
  }
  if (method === "tools/call") {
    const name = (m as { params: { name: string } }).params.name;
    if (!tools.has(name)) {
      const meant = toolMeant(name, tools);
      return invalidParams(
        id,
        `Unknown tool ${redactCredentials(JSON.stringify(name))}${
          meant ? ` (did you mean "${meant}"?)` : ""
        }: tools/list names the tools of this server.`,
        "params.name",
        meant ? { did_you_mean: meant } : {},
      );
    }
  }
  return null;
}

/**
 * `m` as the SDK runs it: without `params.task`. The board declares no `tasks` capability,
 * and a receiver without it "MUST process requests of that type normally, ignoring any
 * task-augmentation metadata" (MCP 2025-11-25, Tasks); the SDK would refuse the request.
 */
function withoutTask(m: unknown): unknown {
  const params = (m as { params?: unknown }).params;
  if (typeof params !== "object" || params === null || !("task" in params)) return m;
  const { task: _ignored, ...rest } = params as Record<string, unknown>;
  return { ...(m as object), params: rest };
}

/** A body after `checkParams`: what the transport still runs, and what was answered here. */
interface CheckedBody {
  /** Whether the body is a batch (answered with an array, whatever its length). */
  batch: boolean;
  /** The messages for the transport (one, or a batch), or null when none is left. */
  run: unknown;
  /** The request ids of the body in its order, to put the answers in that order. */
  order: RequestId[];
  /** The answers given here, by request id. */
  answered: Map<RequestId, ErrorAnswer>;
}

/**
 * Checks the params of every request of a body `invalidBody` accepted (one message or a
 * batch): a request whose params its method refuses, or that calls a tool not in `tools`,
 * is answered here and left out of what the transport runs.
 */
export function checkParams(value: unknown, tools: ReadonlySet<string>): CheckedBody {
  const batch = Array.isArray(value);
  const messages: unknown[] = batch ? value : [value];
  const order: RequestId[] = [];
  const answered = new Map<RequestId, ErrorAnswer>();
  const run: unknown[] = [];
  for (const m of messages) {
    const id = requestId(m);
    if (id === undefined) {
      run.push(m);
      continue;
    }
    order.push(id);
    const answer = paramsAnswer(m as object, tools);
    if (answer) answered.set(id, answer);
    else run.push(withoutTask(m));
  }
  return {
    batch,
    run: run.length === 0 ? null : batch ? run : run[0],
    order,
    answered,
  };
}

/**
 * The answer to a checked body: the transport's (`response`, null when nothing ran) with the
 * answers given here put in, in the order of the body. A batch is answered with an array
 * even when it holds one answer (JSON-RPC 2.0); a refusal of the transport stays as it is.
 */
export async function answerWith(
  checked: CheckedBody,
  response: Response | null,
): Promise<Response> {
  if (response && response.status !== 200 && response.status !== 202) return response;
  if (response?.status === 202 && checked.answered.size === 0) return response;
  if (!checked.batch && checked.answered.size === 0) return response!;
  const ran = response?.status === 200 ? await response.json() as unknown : [];
  const byId = new Map<unknown, unknown>();
  for (const a of Array.isArray(ran) ? ran : [ran]) byId.set((a as { id?: unknown }).id, a);
  const answers = checked.order
    .map((id) => checked.answered.get(id) ?? byId.get(id))
    .filter((a) => a !== undefined);
  const headers = new Headers(response?.status === 200 ? response.headers : undefined);
  headers.set("content-type", "application/json");
  headers.delete("content-length");
  return new Response(JSON.stringify(checked.batch ? answers : answers[0]), {
    status: 200,
    headers,
  });
}
