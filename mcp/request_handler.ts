/**
 * Stateless Streamable HTTP: every request gets a fresh McpServer and a fresh transport,
 * so an answer can only ever reach its own client. What is shared is only what
 * never depends on a request: the tool definitions and schemas (mcp/tool_configs.ts). Tool
 * handlers read the caller and network of the request they run for from an
 * AsyncLocalStorage scope entered around that request.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Deps } from "../domain/deps.ts";
import { rulesEditRight } from "../domain/rules/mod.ts";
import type { Caller } from "../routes/env.ts";
import type { ToolContext } from "./kit.ts";
import { WebStandardStreamableHTTPServerTransport } from "./sdk.ts";
import { createMcpServer } from "./server.ts";

interface RequestContext {
  caller: Caller;
  network: string;
}

const current = new AsyncLocalStorage<RequestContext>();

function requestContext(): RequestContext {
  const c = current.getStore();
  if (!c) throw new Error("MCP tool called outside of a request");
  return c;
}

/** A ToolContext whose caller and network are those of the request being served. */
function liveContext(deps: Deps): ToolContext {
  return {
    deps,
    get caller() {
      return requestContext().caller;
    },
    get network() {
      return requestContext().network;
    },
  };
}

const contexts = new WeakMap<Deps, ToolContext>();

function contextOf(deps: Deps): ToolContext {
  let ctx = contexts.get(deps);
  if (!ctx) contexts.set(deps, ctx = liveContext(deps));
  return ctx;
}

/**
 * Answers one MCP HTTP request for `caller`: a fresh server with the tools this caller may
 * see (edit_current_rules only for an eligible caller), connected to a fresh transport.
 * `parsedBody`, when given, is the body already read and parsed (the transport then runs
 * exactly that value and never reads the request's body itself).
 */
export async function handleMcpRequest(
  deps: Deps,
  caller: Caller,
  network: string,
  request: Request,
  transportOptions: ConstructorParameters<typeof WebStandardStreamableHTTPServerTransport>[0],
  parsedBody?: unknown,
): Promise<Response> {
  const offer = (await rulesEditRight(deps, caller.agent)).eligible;
  const server = await createMcpServer(contextOf(deps), offer);
  const transport = new WebStandardStreamableHTTPServerTransport(transportOptions);
  try {
    await server.connect(transport);
    return await current.run(
      { caller, network },
      () => transport.handleRequest(request, { parsedBody }),
    );
  } finally {
    await transport.close();
    await server.close();
  }
}
