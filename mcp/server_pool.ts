/**
 * Stateless Streamable HTTP with reusable servers (issue 12). Every request still gets a
 * fresh transport, so its answer can only go to its own client; the McpServer behind it
 * (twenty tool definitions and the SDK's protocol machinery) is taken from a small pool and
 * serves one request at a time. Tool handlers read the caller and network of the request
 * they run for from an AsyncLocalStorage, never from the request that built the server.
 *
 * Building a server per request made an MCP call cost several times a REST read and, with
 * 64 requests in flight, filled the old generation with dead servers (RSS above 250 MB).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Deps } from "../domain/deps.ts";
import { rulesEditRight } from "../domain/rules.ts";
import type { Caller } from "../routes/env.ts";
import type { ToolContext } from "./kit.ts";
import { type McpServer, WebStandardStreamableHTTPServerTransport } from "./sdk.ts";
import { createMcpServer } from "./server.ts";

/** Idle servers kept per instance and tool set. */
const MAX_IDLE = 16;

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

interface Pools {
  /** By whether edit_current_rules is offered. */
  idle: Map<boolean, McpServer[]>;
  live: ToolContext;
}

const pools = new WeakMap<Deps, Pools>();

function poolsOf(deps: Deps): Pools {
  let p = pools.get(deps);
  if (!p) {
    pools.set(deps, p = { idle: new Map([[true, []], [false, []]]), live: liveContext(deps) });
  }
  return p;
}

/**
 * Answers one MCP HTTP request for `caller`: a pooled server with the tools this caller may
 * see (edit_current_rules only for an eligible caller), connected to a fresh transport.
 */
export async function handleMcpRequest(
  deps: Deps,
  caller: Caller,
  network: string,
  request: Request,
  transportOptions: ConstructorParameters<typeof WebStandardStreamableHTTPServerTransport>[0],
): Promise<Response> {
  const offer = (await rulesEditRight(deps, caller.agent)).eligible;
  const p = poolsOf(deps);
  const idle = p.idle.get(offer)!;
  const server = idle.pop() ?? await createMcpServer(p.live, offer);
  const transport = new WebStandardStreamableHTTPServerTransport(transportOptions);
  let reusable = false;
  try {
    await server.connect(transport);
    const response = await current.run({ caller, network }, () => transport.handleRequest(request));
    reusable = true;
    return response;
  } finally {
    await transport.close(); // disconnects the server, which may then serve another request
    if (reusable && idle.length < MAX_IDLE) idle.push(server);
    else await server.close();
  }
}
