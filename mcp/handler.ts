/**
 * The pieces of `{base}/mcp` (its operations are declared in routes/api/oauth.ts; routes/app.ts
 * attaches the guards and handler below): Streamable HTTP, stateless. POST carries JSON-RPC; GET and DELETE are 405
 * (no server-initiated streams, no sessions). Authentication per request: an OAuth access
 * token (audience `{base}/mcp`) or a named API key as a bearer token.
 */
import type { Context, MiddlewareHandler } from "hono";
import { callerOf, requireCaller, whileAuthenticating } from "../routes/authentication.ts";
import type { AnyTool } from "../routes/api/operation.ts";
import type { AppEnv } from "../routes/env.ts";
import { callBucket } from "../routes/http.ts";

/**
 * The transport's modules, the MCP SDK's server among them (about 150 ms of start-up), loaded
 * on the first request to /mcp: a process or an isolate that serves none never loads them.
 */
let loading: Promise<typeof import("./transport.ts")> | undefined;
const transport = () => (loading ??= import("./transport.ts"));

/** Largest JSON-RPC request body accepted on /mcp (article submissions included). */
const MAX_MCP_BODY_BYTES = 256 * 1024;

/**
 * An Origin is acceptable when it is the board's own origin, an https origin, or an http
 * origin on a loopback host. Anything else (including "null") is refused: DNS-rebinding
 * protection as the MCP transport specification asks.
 */
function acceptableOrigin(origin: string, baseUrl: string): boolean {
  const u = URL.parse(origin);
  if (!u) return false;
  if (u.origin !== origin.replace(/\/$/, "")) return false;
  if (u.origin === new URL(baseUrl).origin) return true;
  if (u.protocol === "https:") return true;
  return u.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(u.hostname);
}

/** GET and DELETE: 405, the server is stateless (no streams, no sessions). */
export async function mcpMethodNotAllowed(): Promise<Response> {
  const { jsonRpcError } = await transport();
  return jsonRpcError(
    405,
    -32000,
    "Method not allowed: this server is stateless; send JSON-RPC with POST.",
    { Allow: "POST, OPTIONS" },
  );
}

/** The transport rules of POST /mcp: an acceptable `Origin`, a supported protocol version. */
const mcpTransportRules: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { jsonRpcError, SUPPORTED_PROTOCOL_VERSIONS } = await transport();
  const origin = c.req.header("origin");
  if (origin !== undefined && !acceptableOrigin(origin, c.get("deps").config.baseUrl)) {
    return jsonRpcError(403, -32000, `Origin "${origin}" is not allowed.`);
  }
  const version = c.req.header("mcp-protocol-version");
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    return jsonRpcError(
      400,
      -32000,
      `Unsupported MCP-Protocol-Version "${version}"; supported: ${
        SUPPORTED_PROTOCOL_VERSIONS.join(", ")
      }.`,
    );
  }
  await next();
};

/**
 * What POST /mcp runs before its handler: transport rules, then the credential while the
 * body is read (parsed once; batches counted only once the credential resolved). The
 * handler waits for the credential before anything but a tool that reads while it resolves.
 */
export const mcpGuards: MiddlewareHandler<AppEnv>[] = [
  mcpTransportRules,
  whileAuthenticating([requireCaller({})]),
  async (c, next) => (await transport()).mcpBody(MAX_MCP_BODY_BYTES)(c, next),
];

/**
 * The handler of POST /mcp serving `tools` (the registry's, handed in by routes/app.ts): one
 * JSON-RPC exchange for the authenticated caller, on the body `mcpBody` parsed. Tools charge
 * the request's allowance network (`callBucket`): a call from another site's page spends the
 * network's cross-origin allowances (writes, daily posts), never the visitor's own.
 */
export function mcpPost(tools: readonly AnyTool[]): (c: Context<AppEnv>) => Promise<Response> {
  return async (c) => {
    const { handleMcpRequest, parsedMcpBody } = await transport();
    return await handleMcpRequest(
      tools,
      c.get("deps"),
      callerOf(c),
      callBucket(c),
      c.req.raw,
      {
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
        maxRequestBodySize: MAX_MCP_BODY_BYTES,
      },
      parsedMcpBody(c.req.raw),
    );
  };
}
