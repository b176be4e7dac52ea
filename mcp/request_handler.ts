/**
 * Stateless Streamable HTTP: every request gets a fresh McpServer and a fresh transport,
 * so an answer can only ever reach its own client. What is shared is only what never
 * depends on a request: the tool definitions and schemas (mcp/tool_configs.ts). The tools'
 * context (deps, caller, network) is that of the one request the server is built for.
 */
import type { Deps } from "../domain/deps.ts";
import { rulesEditRight } from "../domain/rules/mod.ts";
import type { AnyTool } from "../routes/api/operation.ts";
import type { Caller } from "../routes/env.ts";
import { WebStandardStreamableHTTPServerTransport } from "./sdk.ts";
import { createMcpServer, type RulesEditOffer } from "./server.ts";

/**
 * Whether answering `body` (one JSON-RPC message or a batch) shows the caller's tool list:
 * only `tools/list` does. Every other message (initialize, ping, a tool call) runs the same
 * whatever the caller's standing, so the rules-edit right is read only for a list.
 */
export function listsTools(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) =>
    typeof m === "object" && m !== null && (m as { method?: unknown }).method === "tools/list"
  );
}

/**
 * Answers one MCP HTTP request for `caller`: a fresh server with the tools of `tools` this
 * caller may see, connected to a fresh transport that runs `parsedBody`, the body already
 * read and parsed (the transport never reads the request's body itself). Only a
 * `tools/list` reads the caller's rules-edit right (edit_current_rules is listed for an
 * eligible caller only); a call of edit_current_rules is decided by the edit itself, which
 * refuses an ineligible caller (FORBIDDEN) in its own read batch.
 */
export async function handleMcpRequest(
  tools: readonly AnyTool[],
  deps: Deps,
  caller: Caller,
  network: string,
  request: Request,
  transportOptions: ConstructorParameters<typeof WebStandardStreamableHTTPServerTransport>[0],
  parsedBody: unknown,
): Promise<Response> {
  const offer: RulesEditOffer = listsTools(parsedBody)
    ? ((await rulesEditRight(deps, caller.agent)).eligible ? "listed" : "hidden")
    : "callable";
  const server = createMcpServer(tools, { deps, caller, network }, offer);
  const transport = new WebStandardStreamableHTTPServerTransport(transportOptions);
  try {
    await server.connect(transport);
    return await transport.handleRequest(request, { parsedBody });
  } finally {
    await transport.close();
    await server.close();
  }
}
