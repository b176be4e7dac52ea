/**
 * Stateless Streamable HTTP: every request gets a fresh server (the SDK's `Server`) and a
 * fresh transport, so an answer can only ever reach its own client. What is shared is only
 * what never depends on a request: the tool definitions and schemas (mcp/tool_configs.ts).
 * The tools' context (deps, caller, network) is that of the one request the server is built
 * for.
 */
import type { Deps } from "../domain/deps.ts";
import { rulesEditRight } from "../domain/rules/mod.ts";
import type { AnyTool, ToolContext } from "../routes/api/operation.ts";
import { claimedAgentId } from "../routes/claimed_caller.ts";
import type { Caller } from "../routes/env.ts";
import { WebStandardStreamableHTTPServerTransport } from "./sdk.ts";
import { createMcpServer, type RulesEditOffer } from "./server.ts";
import { answerWith, checkParams } from "./messages.ts";

/** The names of the registry's tools (a `tools/call` of any other name is refused). */
const namesOf = new WeakMap<readonly AnyTool[], ReadonlySet<string>>();
function toolNames(tools: readonly AnyTool[]): ReadonlySet<string> {
  let names = namesOf.get(tools);
  if (!names) namesOf.set(tools, names = new Set(tools.map((t) => t.name)));
  return names;
}

/**
 * Whether answering `body` (one JSON-RPC message or a batch) shows the caller's tool list:
 * only `tools/list` does. Every other message (initialize, ping, a tool call) runs the same
 * whatever the caller's standing, so the rules-edit right is read only for a list.
 */
function listsTools(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) =>
    typeof m === "object" && m !== null && (m as { method?: unknown }).method === "tools/list"
  );
}

/**
 * True when `body` is one call of a tool that reads while the credential resolves: the
 * only request the server starts on before the credential has resolved.
 */
function readsWhileAuthenticating(tools: readonly AnyTool[], body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  const { method, params } = body as { method?: unknown; params?: { name?: unknown } };
  if (method !== "tools/call") return false;
  return tools.some((t) =>
    t.name === params?.name && (t.readsWhileAuthenticating || t.plansWhileAuthenticating)
  );
}

/** A tool context whose `caller` is there once `callerReady` resolved. */
function contextWhileAuthenticating(
  deps: Deps,
  network: string,
  callerReady: Promise<Caller>,
  claimedId: string | null,
): ToolContext {
  let known: Caller | undefined;
  const ready = callerReady.then((caller) => known = caller);
  ready.catch(() => {}); // a refused credential is answered by the route
  return {
    deps,
    network,
    callerReady: ready,
    claimedId,
    get caller(): Caller {
      if (!known) throw new Error("a tool used its caller before the credential resolved");
      return known;
    },
  };
}

/**
 * Answers one MCP HTTP request for the caller of `callerReady`: a fresh server with the tools of `tools` this
 * caller may see, connected to a fresh transport that runs `parsedBody`, the body already
 * read and parsed (the transport never reads the request's body itself), less the requests
 * answered before it (params their method refuses, unknown tools: mcp/messages.ts). Only a
 * `tools/list` reads the caller's rules-edit right (edit_current_rules is listed for an
 * eligible caller only); a call of edit_current_rules is decided by the edit itself, which
 * refuses an ineligible caller (FORBIDDEN) in its own read batch.
 */
export async function handleMcpRequest(
  tools: readonly AnyTool[],
  deps: Deps,
  callerReady: Promise<Caller>,
  network: string,
  request: Request,
  transportOptions: ConstructorParameters<typeof WebStandardStreamableHTTPServerTransport>[0],
  parsedBody: unknown,
): Promise<Response> {
  // A refused credential is answered by the route, whatever this answers; an answer made
  // without the caller (below) never waits for it, and its refusal must not go unhandled.
  callerReady.catch(() => {});
  // Requests with params their method refuses, or calls of unknown tools, are answered here.
  const checked = checkParams(parsedBody, toolNames(tools));
  if (checked.run === null) return await answerWith(checked, null);
  const body = checked.run;
  const early = readsWhileAuthenticating(tools, body);
  const claimedId = claimedAgentId(request.headers.get("authorization"));
  const ctx = early
    ? contextWhileAuthenticating(deps, network, callerReady, claimedId)
    : { deps, network, caller: await callerReady, callerReady, claimedId };
  // Only a list shows the rules edit by the caller's right (a list is never started early).
  const offer: RulesEditOffer = listsTools(body)
    ? ((await rulesEditRight(deps, ctx.caller.agent)).eligible ? "listed" : "hidden")
    : "callable";
  const server = createMcpServer(tools, ctx, offer);
  const transport = new WebStandardStreamableHTTPServerTransport(transportOptions);
  try {
    await server.connect(transport);
    return await answerWith(checked, await transport.handleRequest(request, { parsedBody: body }));
  } finally {
    await transport.close();
    await server.close();
  }
}
