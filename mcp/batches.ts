/**
 * The body of `POST /mcp`, read and parsed once (docs/mcp.md "Batches"), and JSON-RPC
 * batches. The body is decoded the way the SDK's transport decodes it (UTF-8, a leading
 * byte-order mark dropped) and parsed here; the parsed value is what the transport runs
 * (`parsedBody`), so what is counted is exactly what runs. Only MCP protocol version
 * 2025-03-26 has batches (added there, removed in 2025-06-18); a batch under any other
 * negotiated version is refused. A batch of n messages counts as n credential calls
 * against the edge limits, so batching cannot multiply a network's allowance.
 */
import { callerOf } from "../routes/authentication.ts";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../routes/env.ts";
import { admitBatchExtras } from "../routes/rate_limit_hooks.ts";
import { BODY_TIME_LIMIT_MS, readBoundedText } from "../routes/body_reader.ts";
import { isJsonContentType, requestBodyTooLargeMessage } from "./sdk.ts";
import { invalidBody, jsonRpcError } from "./messages.ts";
import { repeatedMemberName } from "../routes/json_keys.ts";
import { foreignCharset } from "../routes/http.ts";

/** Protocol versions whose transport allows JSON-RPC batches. */
const BATCH_PROTOCOL_VERSIONS: readonly string[] = ["2025-03-26"];

/** The version the transport assumes without an MCP-Protocol-Version header (the spec's). */
const VERSION_WITHOUT_HEADER = "2025-03-26";

/** The parsed body of each `/mcp` request that passed `mcpBody`. */
const parsedBodies = new WeakMap<Request, { value: unknown }>();

/** The body `mcpBody` parsed for `req`, to hand to the transport as `parsedBody`. */
export function parsedMcpBody(req: Request): unknown {
  const parsed = parsedBodies.get(req);
  if (!parsed) throw new Error("POST /mcp handled without its parsed body");
  return parsed.value;
}

/**
 * The body as the transport would read it (UTF-8 with the byte-order mark dropped, then
 * `JSON.parse`), except that bytes that are not UTF-8 are refused (-32700) as REST refuses
 * them, where the transport would store U+FFFD in their place. A Response is the answer to a
 * body that cannot be taken.
 */
async function readBody(req: Request, limit: number): Promise<{ value: unknown } | Response> {
  const refusal = (res: Response) => new Refusal(res);
  try {
    const text = await readBoundedText(req, limit, {
      tooLarge: () => refusal(jsonRpcError(413, -32000, requestBodyTooLargeMessage(limit))),
      encoded: (coding) =>
        refusal(jsonRpcError(
          415,
          -32000,
          `Unsupported Media Type: the request body is sent with "Content-Encoding: ${coding}"; send it uncompressed.`,
        )),
      incomplete: () =>
        refusal(jsonRpcError(
          400,
          -32700,
          `Parse error: the request body ended before it was complete (or did not all arrive within ${
            BODY_TIME_LIMIT_MS / 1000
          } seconds).`,
        )),
      notUtf8: () =>
        refusal(jsonRpcError(
          400,
          -32700,
          "Parse error: the request body is not valid UTF-8; send the JSON encoded as UTF-8.",
        )),
    });
    const value = JSON.parse(text);
    const repeated = repeatedMemberName(text);
    if (repeated !== null) {
      return jsonRpcError(
        400,
        -32700,
        `Parse error: the body names "${repeated.slice(0, 60)}" twice in one object.`,
      );
    }
    return { value };
  } catch (e) {
    if (e instanceof Refusal) return e.res;
    return jsonRpcError(400, -32700, "Parse error: Invalid JSON");
  }
}

/**
 * The transport's rules on a POST's `Accept` (406) and `Content-Type` (415), in its words and
 * order, or null when the request keeps them. They are checked before the body is read, as
 * the transport checks them: a body whose every request is answered before the transport
 * runs (-32602, mcp/messages.ts) must not skip them.
 */
function mediaRefusal(req: Request): Response | null {
  const accept = req.headers.get("accept");
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) {
    return jsonRpcError(
      406,
      -32000,
      "Not Acceptable: Client must accept both application/json and text/event-stream",
    );
  }
  const type = req.headers.get("content-type");
  if (!isJsonContentType(type)) {
    return jsonRpcError(
      415,
      -32000,
      "Unsupported Media Type: Content-Type must be application/json",
    );
  }
  // The body is read as UTF-8, as REST reads it: another charset would be misread.
  const charset = foreignCharset(type!);
  if (charset !== undefined) {
    return jsonRpcError(
      415,
      -32000,
      `Unsupported Media Type: the body is read as UTF-8, JSON's encoding; "charset=${charset}" names another. Send it in UTF-8.`,
    );
  }
  return null;
}

/** A body the read refused, with the JSON-RPC error that answers it. */
class Refusal extends Error {
  constructor(readonly res: Response) {
    super("refused");
  }
}

/**
 * How many messages the transport will run for a parsed body: 1 for a single message, the
 * length of a batch. A body refused whole (no JSON-RPC message, an empty or too long batch,
 * a batch with a member that is no JSON-RPC message or a repeated request id: 400 with
 * -32600, mcp/messages.ts) is answered here, before it is counted.
 */
function messagesToRun(value: unknown): number | Response {
  return invalidBody(value) ?? (Array.isArray(value) ? value.length : 1);
}

/**
 * Runs while the credential resolves (and charges a batch only once it has): reads and parses the body once (kept for the transport, see
 * `parsedMcpBody`), refuses batches where the negotiated protocol has none (400, JSON-RPC
 * -32600), and charges the messages of a batch beyond the first to the allowance the
 * request's own call was admitted in (all are refused together when they do not all fit).
 * Only a request whose credential resolved gets here, so a token that is no credential is
 * never charged for its batch.
 */
export function mcpBody(maxBodyBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const refused = mediaRefusal(c.req.raw);
    if (refused) return refused;
    const body = await readBody(c.req.raw, maxBodyBytes);
    if (body instanceof Response) return body;
    const n = messagesToRun(body.value);
    if (n instanceof Response) return n;
    if (Array.isArray(body.value)) {
      const version = c.req.header("mcp-protocol-version") ?? VERSION_WITHOUT_HEADER;
      if (!BATCH_PROTOCOL_VERSIONS.includes(version)) {
        return jsonRpcError(
          400,
          -32600,
          `Invalid Request: MCP protocol version ${version} has no JSON-RPC batches; send one message per request.`,
        );
      }
    }
    if (n > 1) {
      await callerOf(c);
      admitBatchExtras(c, n - 1);
    }
    parsedBodies.set(c.req.raw, body);
    await next();
  };
}
