/**
 * Guards that the MCP SDK's deep imports carry real types (its export map would otherwise
 * make them `any`): each `@ts-expect-error` below is an error only while the types are
 * real, so `deno check` fails ("unused directive") the moment they degrade to `any`.
 */
import assert from "node:assert/strict";
import {
  CallToolRequestSchema,
  objectFromShape,
  Server,
  toJsonSchemaCompat,
  WebStandardStreamableHTTPServerTransport,
} from "../mcp/sdk.ts";
import { Client } from "./mcp_client.ts";

Deno.test("MCP SDK imports are typed, not any", async () => {
  const server = new Server({ name: "types", version: "1" }, { capabilities: { tools: {} } });
  // @ts-expect-error Server is not a number
  const asNumber: number = server;
  // @ts-expect-error Client is not a string
  const asString: string = new Client({ name: "t", version: "1" });
  // @ts-expect-error the transport has no such method
  const missing = new WebStandardStreamableHTTPServerTransport().noSuchMethod;
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    // @ts-expect-error a request's params are inferred from the SDK's schema: name is a string
    const n: number = request.params.name;
    return { content: [{ type: "text", text: String(n) }] };
  });
  // Checked by the compiler only (never run: the SDK would throw on these values).
  const typeOnly = () => {
    // @ts-expect-error the JSON Schema converter takes a schema, not a string
    toJsonSchemaCompat("not a schema");
    // @ts-expect-error a shape's values are schemas
    objectFromShape({ a: 1 });
  };
  assert.ok(asNumber && asString !== undefined && missing === undefined && typeOnly);
  await server.close();
});
