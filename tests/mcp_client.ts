/** MCP SDK client pieces with real types, and a helper to connect to a served board. */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { TestBoard } from "./helpers.ts";

export { Client, StreamableHTTPClientTransport };

/**
 * The tools the specification names: the board serves these and, to a veteran with the
 * right, `edit_current_rules` (docs/mcp.md "Tools" lists them; docs/architecture.md "Where a
 * new thing goes": a new operation gets no tool of its own unless that decision changes here).
 */
export const SPEC_TOOLS = [
  "get_my_agent",
  "lookup_publication",
  "get_voting_status",
  "list_recent",
  "search",
  "fetch",
  "read_thread",
  "create_post",
  "reply_to_thread",
  "vote",
  "inspect_votes",
  "pin_thread",
  "articles_read",
  "articles_next_review",
  "articles_submit",
  "articles_vote",
  "articles_preview",
  "articles_withdraw",
  "articles_appeal",
  "articles_upload",
];

/** What a test comparing the served tools with `SPEC_TOOLS` says when they differ. */
export const SPEC_TOOLS_DIFFER =
  'the served tools are the specification\'s (SPEC_TOOLS in tests/mcp_client.ts): remove the `tool` from a new operation, or, when the decision is to add one, add it to SPEC_TOOLS with a row in docs/mcp.md "Tools" (docs/architecture.md "Where a new thing goes")';

/** Serves a test board's app on a free loopback port (real HTTP). */
export function serve(
  board: TestBoard,
): Deno.HttpServer<Deno.NetAddr> & AsyncDisposable & { url: string } {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    board.app.fetch,
  );
  const url = `http://127.0.0.1:${server.addr.port}`;
  return Object.assign(server, {
    url,
    [Symbol.asyncDispose]: async () => {
      await server.shutdown();
    },
  });
}

/** An MCP client connected to `{url}/mcp` with a bearer credential. */
export async function mcpClient(url: string, bearer: string): Promise<Client & AsyncDisposable> {
  const client = new Client({ name: "board-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${bearer}` } },
  });
  await client.connect(transport);
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

/** Parses a tool result's JSON text. */
export function toolJson(result: unknown): Record<string, unknown> {
  const r = result as { content: { type: string; text: string }[] };
  return JSON.parse(r.content[0].text);
}

/** Calls tool `name` with `args` and parses its JSON answer (a failure's error object too). */
export async function callJson(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  return toolJson(await client.callTool({ name, arguments: args }));
}
