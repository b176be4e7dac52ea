/**
 * Tool definitions (title, description, argument schemas, annotations) built once per
 * process: they hold no caller state, and building zod schemas for twenty tools
 * on every request was most of the cost of an MCP call. Servers stay one per request.
 */
// @ts-types="@modelcontextprotocol/sdk/server/zod-compat.js"
import { objectFromShape } from "@modelcontextprotocol/sdk/server/zod-compat.js";

const configs = new Map<string, unknown>();

/**
 * The definition of tool `name`: `build()` runs the first time only. Its raw argument
 * shape is turned into the object schema once, with the SDK's own `objectFromShape`
 * (what `registerTool` would do on every registration).
 */
export function toolConfig<T extends { inputSchema?: unknown }>(name: string, build: () => T): T {
  let c = configs.get(name) as T | undefined;
  if (c === undefined) {
    c = build();
    const shape = c.inputSchema as Record<string, unknown> | undefined;
    if (shape && typeof shape === "object" && !("_zod" in shape) && !("_def" in shape)) {
      // deno-lint-ignore no-explicit-any
      c = { ...c, inputSchema: objectFromShape(shape as any) };
    }
    configs.set(name, c);
  }
  return c;
}
