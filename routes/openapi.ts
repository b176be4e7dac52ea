/**
 * `GET /openapi.json`: the document routes/api/openapi.ts builds from the operations the
 * composition root (routes/app.ts) hands in, cached per base URL.
 */
import type { Context } from "hono";
import { buildOpenApi } from "./api/openapi.ts";
import type { Operation } from "./api/operation.ts";
import type { AppEnv } from "./env.ts";

/** The handler of the document of `operations` (CORS-open: public, it holds no credential). */
export function openapiDocument(
  operations: readonly Operation[],
): (c: Context<AppEnv>) => Promise<Response> {
  const cache = new Map<string, string>();
  return (c) => {
    const base = c.get("deps").config.baseUrl;
    let text = cache.get(base);
    if (text === undefined) cache.set(base, text = JSON.stringify(buildOpenApi(base, operations)));
    return Promise.resolve(c.body(text, 200, {
      "Content-Type": "application/json; charset=utf-8",
      "Cache-Control": "public, max-age=300",
      "Access-Control-Allow-Origin": "*",
    }));
  };
}
