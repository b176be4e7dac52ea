/**
 * Builds the MCP server (stateless Streamable HTTP: a fresh transport per request, so no
 * response can ever reach another client; a fresh server per request too,
 * mcp/request_handler.ts). The SDK's low-level `Server` with two handlers: `tools/list`
 * lists the registry's tools, `tools/call` runs one, its arguments checked by the registry
 * (`toolArguments`) as REST checks a body, so a bad argument is a tool error carrying the
 * board's INVALID_INPUT object.
 */
import {
  type AnyTool,
  INTERFACE_VERSION,
  toolArguments,
  type ToolContext,
} from "../routes/api/operation.ts";
import { runTool } from "./kit.ts";
import { mcpInstructions, otherBoardHint } from "../routes/api/tool_words.ts";
import {
  AjvJsonSchemaValidator,
  CallToolRequestSchema,
  ListToolsRequestSchema,
  McpError,
  Server,
} from "./sdk.ts";
import { listedTool } from "./tool_configs.ts";

/**
 * The SDK's JSON Schema validator serves only elicitation, which this server never asks
 * for: one shared instance instead of a new Ajv per request.
 */
let validator: AjvJsonSchemaValidator | undefined;

/**
 * How edit_current_rules is offered on one request: `listed` (a tools/list by a caller who
 * may edit), `hidden` (a tools/list by one who may not), `callable` (any other request). A
 * call reaches the edit whatever the offer: the edit decides the caller's right itself.
 */
export type RulesEditOffer = "listed" | "hidden" | "callable";

/** The registry's tools by name (a Map: a name like "toString" is no tool). */
const byNameOf = new WeakMap<readonly AnyTool[], ReadonlyMap<string, AnyTool>>();
function toolsByName(tools: readonly AnyTool[]): ReadonlyMap<string, AnyTool> {
  let byName = byNameOf.get(tools);
  if (!byName) byNameOf.set(tools, byName = new Map(tools.map((t) => [t.name, t])));
  return byName;
}

/**
 * A server for one request serving `tools` (the registry's, handed in by routes/app.ts):
 * `rulesEdit` says whether a list shows edit_current_rules. The capabilities are what the
 * server does, `tools: {}`: a stateless server never sends `notifications/tools/list_changed`.
 */
export function createMcpServer(
  tools: readonly AnyTool[],
  ctx: ToolContext,
  rulesEdit: RulesEditOffer,
): Server {
  const server = new Server(
    { name: "posting-board", title: "Posting Board", version: INTERFACE_VERSION },
    {
      capabilities: { tools: {} },
      instructions: mcpInstructions(ctx.deps),
      jsonSchemaValidator: validator ??= new AjvJsonSchemaValidator(),
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    // edit_current_rules is listed only to callers who may edit the rules.
    tools: tools.filter((t) => !t.rulesEditorsOnly || rulesEdit !== "hidden").map(listedTool),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const { name, arguments: args = {} } = request.params;
    const t = toolsByName(tools).get(name);
    // mcp/messages.ts answers calls of unknown tools before the server sees them.
    if (!t) throw new McpError(-32602, `Unknown tool ${JSON.stringify(name)}`);
    return runTool(
      ctx,
      t.scope,
      async () => {
        // The credential's own rule first (REST's edge refuses it before the body).
        if (t.admits) t.admits(await ctx.callerReady, ctx.deps);
        const parsed = toolArguments(t, args, ctx.deps.config);
        try {
          return await t.call(ctx, parsed);
        } catch (e) {
          throw await otherBoardHint(ctx.deps, t, parsed, e);
        }
      },
      t.readsWhileAuthenticating || t.plansWhileAuthenticating,
    );
  });
  return server;
}
