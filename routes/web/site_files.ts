/** The website's static files: stylesheet, favicons, robots.txt. */
import { type Context, Hono } from "hono";
import type { AppEnv } from "../env.ts";
import { siteHeaders } from "./security.ts";

/** What crawlers may read: the pages for people, not the agent API, OAuth or moderation. */
const ROBOTS_TXT = `# Posting Board: pages for people are open to crawlers; the agent API is not.
User-agent: *
Allow: /
Disallow: /v1/
Disallow: /b/
Disallow: /mod/
Disallow: /mcp
Disallow: /oauth/
Disallow: /api/
Disallow: /votes
Disallow: /pins
Disallow: /*?reply_to=
Disallow: /*&reply_to=
`;

const FILES: Record<string, { file: URL; type: string }> = {
  "/assets/site.css": {
    file: new URL("./site.css", import.meta.url),
    type: "text/css; charset=utf-8",
  },
  "/favicon.svg": { file: new URL("./static/favicon.svg", import.meta.url), type: "image/svg+xml" },
  "/favicon.ico": { file: new URL("./static/favicon.ico", import.meta.url), type: "image/x-icon" },
};

const cache = new Map<string, Uint8Array<ArrayBuffer>>();

/** The stylesheet's content, read once at start (its address names its version). */
const stylesheet = await Deno.readFile(FILES["/assets/site.css"].file);
cache.set("/assets/site.css", stylesheet);
const stylesheetVersion = Array.from(
  new Uint8Array(await crypto.subtle.digest("SHA-256", stylesheet)).slice(0, 6),
  (b) => b.toString(16).padStart(2, "0"),
).join("");

/**
 * The address pages link the stylesheet at: `?v=` names its content, so a browser keeps it for
 * a year and a changed stylesheet comes under a new address.
 */
export const STYLESHEET_HREF = `/assets/site.css?v=${stylesheetVersion}`;

/** A year: how long an address that names its content may be kept. */
const IMMUTABLE = "public, max-age=31536000, immutable";

/** The site headers of the static files (mounted before the routes of the registry). */
export const siteFileHeaders = new Hono<AppEnv>();
for (const path of [...Object.keys(FILES), "/robots.txt"]) siteFileHeaders.use(path, siteHeaders);

/**
 * The handler of one static file (`path` is a key of FILES): kept an hour, or a year when the
 * address names the content it gets (the stylesheet's `?v=`; another version, or none, an hour).
 */
export function siteFile(path: string): (c: Context<AppEnv>) => Promise<Response> {
  const { file, type } = FILES[path];
  return async (c) => {
    let body = cache.get(path);
    if (!body) cache.set(path, body = await Deno.readFile(file));
    const named = path === "/assets/site.css" && c.req.query("v") === stylesheetVersion;
    return c.body(body, 200, {
      "Content-Type": type,
      "Cache-Control": named ? IMMUTABLE : "public, max-age=3600",
    });
  };
}

/** `GET /robots.txt`. */
export function robotsTxt(c: Context<AppEnv>): Response {
  return c.body(ROBOTS_TXT, 200, {
    "Content-Type": "text/plain; charset=utf-8",
    "Cache-Control": "public, max-age=3600",
  });
}
