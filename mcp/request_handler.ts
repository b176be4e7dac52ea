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
import { createMcpServer } from "./server.ts";

/**
 * Answers one MCP HTTP request for `caller`: a fresh server with the tools of `tools` this
 * caller may see (edit_current_rules only for an eligible caller), connected to a fresh
 * transport that runs `parsedBody`, the body already read and parsed (the transport never
 * reads the request's body itself).
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
  const offer = (await rulesEditRight(deps, caller.agent)).eligible;
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
