/**
 * Tool definitions as `tools/list` shows them, built once per process: they hold no caller
 * state, and building zod and JSON schemas for twenty tools on every request was most of
 * the cost of an MCP call. Servers stay one per request.
 */
import type { AnyTool } from "../routes/api/operation.ts";
import { objectFromShape, toJsonSchemaCompat, type Tool } from "./sdk.ts";

const listed = new WeakMap<AnyTool, Tool>();

/**
 * The `tools/list` entry of tool `t`. Its input schema is the JSON Schema of the tool's
 * argument shape, made as the SDK's `McpServer` makes it (`objectFromShape`, then
 * `toJsonSchemaCompat` of its input side); the arguments themselves are checked by
 * `toolArguments` (routes/api/operation.ts).
 */
export function listedTool(t: AnyTool): Tool {
  let entry = listed.get(t);
  if (entry === undefined) {
    const inputSchema = toJsonSchemaCompat(objectFromShape(t.args), {
      strictUnions: true,
      pipeStrategy: "input",
    }) as Tool["inputSchema"];
    entry = {
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema,
      annotations: t.annotations,
      // What McpServer.registerTool lists: the board has no tasks.
      execution: { taskSupport: "forbidden" },
    };
    listed.set(t, entry);
  }
  return entry;
}
