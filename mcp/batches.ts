/**
 * JSON-RPC batches on `/mcp` (docs/mcp.md "Batches"). Only MCP protocol version 2025-03-26
 * has them (added there, removed in 2025-06-18); a batch under any other negotiated
 * version is refused. A batch of n messages counts as n credential calls against the edge
 * limits, so batching cannot multiply a network's allowance.
 */
import type { MiddlewareHandler } from "hono";
import { edgeLimiter } from "../domain/limits/mod.ts";
import type { AppEnv } from "../routes/env.ts";
import { bearerToken } from "../routes/guards.ts";
import { readBoundedBytes } from "../routes/body_reader.ts";

/** A JSON-RPC error answer outside any exchange (`id: null`), with its HTTP status. */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });
}

/** Protocol versions whose transport allows JSON-RPC batches. */
export const BATCH_PROTOCOL_VERSIONS: readonly string[] = ["2025-03-26"];

/** The version the transport assumes without an MCP-Protocol-Version header (the spec's). */
const VERSION_WITHOUT_HEADER = "2025-03-26";

/** How many JSON-RPC messages a body holds when it is a batch (an array), else null. */
async function batchSize(req: Request, limit: number): Promise<number | null> {
  if (!req.body) return null;
  let value: unknown;
  try {
    const bytes = await readBoundedBytes(req, limit, {
      tooLarge: () => new Error("too large"),
      incomplete: () => new Error("incomplete"),
    });
    // Only an array is a batch: a single message is not parsed twice.
    const first = bytes.findIndex((b) => b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d);
    if (bytes[first] !== 0x5b) return null;
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return null; // the transport answers bad bodies itself
  }
  return Array.isArray(value) ? value.length : null;
}

/**
 * Runs before authentication: refuses batches where the negotiated protocol has none
 * (400, JSON-RPC -32600) and charges the messages of a batch beyond the first to the
 * caller's edge limits (authentication counts the first; all are refused together when
 * they do not all fit). Reads a copy of the body; the transport reads the original.
 */
export function mcpBatches(maxBodyBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const n = await batchSize(c.req.raw.clone(), maxBodyBytes);
    if (n === null) return await next();
    const version = c.req.header("mcp-protocol-version") ?? VERSION_WITHOUT_HEADER;
    if (!BATCH_PROTOCOL_VERSIONS.includes(version)) {
      return jsonRpcError(
        400,
        -32600,
        `Invalid Request: MCP protocol version ${version} has no JSON-RPC batches; send one message per request.`,
      );
    }
    const token = bearerToken(c);
    if (n > 1 && token) edgeLimiter(c.get("deps")).admitExtraCalls(c.get("network"), token, n - 1);
    await next();
  };
}
