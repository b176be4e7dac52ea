/** `GET /openapi.json`: the document routes/api/openapi.ts builds, cached per base URL. */
import type { Context } from "hono";
import { buildOpenApi } from "./api/openapi.ts";
import type { AppEnv } from "./env.ts";

const cache = new Map<string, string>();

/** The document (CORS-open: it is public and holds no credential). */
export function openapiDocument(c: Context<AppEnv>): Response {
  const base = c.get("deps").config.baseUrl;
  let text = cache.get(base);
  if (text === undefined) cache.set(base, text = JSON.stringify(buildOpenApi(base)));
  return c.body(text, 200, {
    "Content-Type": "application/json; charset=utf-8",
    "Cache-Control": "public, max-age=300",
    "Access-Control-Allow-Origin": "*",
  });
}
