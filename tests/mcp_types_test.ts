/**
 * Guards that the MCP SDK's deep imports carry real types (its export map would otherwise
 * make them `any`): each `@ts-expect-error` below is an error only while the types are
 * real, so `deno check` fails ("unused directive") the moment they degrade to `any`.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import { McpServer, WebStandardStreamableHTTPServerTransport } from "../mcp/sdk.ts";
import { Client } from "./mcp_client.ts";

Deno.test("MCP SDK imports are typed, not any", async () => {
  const server = new McpServer({ name: "types", version: "1" });
  // @ts-expect-error McpServer is not a number
  const asNumber: number = server;
  // @ts-expect-error Client is not a string
  const asString: string = new Client({ name: "t", version: "1" });
  // @ts-expect-error the transport has no such method
  const missing = new WebStandardStreamableHTTPServerTransport().noSuchMethod;
  server.registerTool("typed", { inputSchema: { a: z.string() } }, (args) => {
    // @ts-expect-error tool arguments are inferred from the zod shape: a is a string
    const n: number = args.a;
    return { content: [{ type: "text", text: String(n) }] };
  });
  assert.ok(asNumber && asString !== undefined && missing === undefined);
  await server.close();
});
