/**
 * Shared pieces of the reliability suite: the stress switch, the app's routes enumerated
 * from Hono (so routes added later are covered without editing the suite), route
 * families and their error objects, and a fingerprint of the KV store for "data
 * unchanged" checks.
 */
import assert from "node:assert/strict";
import { ERROR_STATUS } from "../../domain/errors.ts";
import type { createApp } from "../../routes/app.ts";

/** `BOARD_STRESS=1` turns on the long part (`deno task test:stress`). */
export const STRESS = Deno.env.get("BOARD_STRESS") === "1";

/** A route the app serves: method and Hono path pattern (`/v1/posts/:id`). */
export interface Route {
  method: string;
  path: string;
}

const EXPAND_ALL = ["GET", "POST"];

/**
 * Every route of the app, from `app.routes`. Entries registered with `use` show up as
 * method `ALL`; those with a wildcard, or on a path that also has explicit methods, are
 * middleware and skipped; other exact ones (`app.all`) are tried with GET and POST.
 */
export function listRoutes(app: ReturnType<typeof createApp>): Route[] {
  const seen = new Map<string, Route>();
  const explicit = new Set(app.routes.filter((r) => r.method !== "ALL").map((r) => r.path));
  for (const r of app.routes) {
    if (r.path.includes("*")) continue;
    // An ALL entry beside explicit methods on the same path is a middleware, not a route.
    if (r.method === "ALL" && explicit.has(r.path)) continue;
    const methods = r.method === "ALL" ? EXPAND_ALL : [r.method.toUpperCase()];
    for (const method of methods) {
      if (method === "OPTIONS" || method === "HEAD") continue;
      seen.set(`${method} ${r.path}`, { method, path: r.path });
    }
  }
  return [...seen.values()].sort((a, b) =>
    a.path === b.path ? a.method.localeCompare(b.method) : a.path.localeCompare(b.path)
  );
}

/** Which error object a route answers with. */
export type Family = "board" | "oauth" | "mcp" | "web";

/** The family of a path: OAuth endpoints, the MCP endpoint, human pages, or board routes. */
export function familyOf(path: string): Family {
  if (
    path.startsWith("/oauth") || path.startsWith("/.well-known") ||
    // The MCP default endpoints, aliases of /oauth/authorize, /oauth/token, /oauth/register.
    path === "/authorize" || path === "/token" || path === "/register"
  ) return "oauth";
  if (path === "/mcp" || path.startsWith("/mcp/")) return "mcp";
  if (
    path === "/" || path.startsWith("/docs") || path.startsWith("/assets") ||
    path === "/skill.md" || path === "/openapi.json" || path.startsWith("/articles") ||
    isDeskPath(path)
  ) return "web";
  return "board";
}

/** The moderator desk: human pages under /mod (a session cookie, not the moderator key). */
export function isDeskPath(path: string): boolean {
  return path === "/mod/desk" || path.startsWith("/mod/desk/");
}

/** Message routes and other routes where the spec refuses browsers (spec "What the service does" 4). */
export function refusesBrowsers(r: Route): boolean {
  if (isDeskPath(r.path)) return false;
  return r.path.startsWith("/v1/") || r.path.startsWith("/b/") || r.path.startsWith("/mod") ||
    (r.method !== "GET" && (r.path === "/votes" || r.path === "/pins"));
}

/** Routes that need `Accept: application/json` and `X-Agent-Protocol: board/1`. */
export function needsProtocol(r: Route): boolean {
  return r.path.startsWith("/v1/") || r.path.startsWith("/b/");
}

/** Routes that need an agent API key (every /v1 route but registration). */
export function needsAgentKey(r: Route): boolean {
  return r.path.startsWith("/v1/") && !(r.method === "POST" && r.path === "/v1/agents");
}

/** Replaces every `:param` of a route pattern with `value`. */
export function fillPath(path: string, value: string): string {
  return path.replace(/:[A-Za-z_]+(\{[^}]*\})?/g, value);
}

/** True when the pattern has path parameters. */
export function hasParams(path: string): boolean {
  return /:[A-Za-z_]/.test(path);
}

/** A parsed response: status, content type, headers, and the body (JSON when it is JSON). */
export interface Answer {
  status: number;
  type: string;
  headers: Headers;
  text: string;
  json: unknown;
}

/** Reads a response completely. */
export async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  const type = res.headers.get("content-type") ?? "";
  let json: unknown = undefined;
  if (/json/i.test(type)) {
    try {
      json = JSON.parse(text);
    } catch { /* stays undefined: asserted by the caller */ }
  }
  return { status: res.status, type, headers: res.headers, text, json };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Asserts an error answer has the documented shape of its family: the board object
 * `{error:{code,message},docs}` whose status is the code's status (or, on routes that also
 * take OAuth tokens, a 401 `invalid_token` / 403 `insufficient_scope` with a Bearer
 * challenge, reported as UNAUTHORIZED / INSUFFICIENT_SCOPE); the OAuth object
 * `{error, error_description}`; on /mcp either the OAuth object (401/403) or a JSON-RPC
 * error; human pages (and `htmlOk` browser routes such as the consent page) answer the
 * board object or an HTML page. Returns the code.
 */
export function assertErrorShape(
  a: Answer,
  family: Family,
  label: string,
  htmlOk = family === "web",
): string {
  const where = `${label}: ${a.status} ${a.text.slice(0, 300)}`;
  assert.ok(a.status >= 400 && a.status < 500, `expected a 4xx: ${where}`);
  if (htmlOk && /text\/html/.test(a.type)) return "HTML";
  assert.match(a.type, /application\/json/, `JSON error expected: ${where}`);
  const body = a.json;
  assert.ok(isObj(body), `error body is an object: ${where}`);
  if (family === "board" && typeof body.error === "string") {
    // Routes that also take OAuth tokens refuse credentials the OAuth way (spec Authentication 8).
    const oauth: Record<string, [number, string]> = {
      invalid_token: [401, "UNAUTHORIZED"],
      insufficient_scope: [403, "INSUFFICIENT_SCOPE"],
    };
    const known = oauth[body.error];
    assert.ok(known, `OAuth error on a board route: ${where}`);
    assert.equal(a.status, known[0], where);
    assert.equal(typeof body.error_description, "string", where);
    assert.match(a.headers.get("www-authenticate") ?? "", /^Bearer/i, where);
    return known[1];
  }
  if (family === "board" || family === "web") return boardCode(body, a.status, where);
  if (family === "oauth") {
    if (isObj(body.error)) return boardCode(body, a.status, where);
    assert.equal(typeof body.error, "string", where);
    assert.equal(typeof body.error_description, "string", where);
    return body.error as string;
  }
  // mcp
  if (typeof body.error === "string") {
    assert.equal(typeof body.error_description, "string", where);
    return body.error;
  }
  if (body.jsonrpc === "2.0") {
    assert.ok(isObj(body.error), where);
    assert.equal(typeof body.error.code, "number", where);
    assert.equal(typeof body.error.message, "string", where);
    return `jsonrpc:${body.error.code}`;
  }
  return boardCode(body, a.status, where);
}

function boardCode(body: Obj, status: number, where: string): string {
  assert.ok(isObj(body.error), `board error object: ${where}`);
  const { code, message } = body.error as Obj;
  assert.equal(typeof code, "string", where);
  assert.equal(typeof message, "string", where);
  assert.equal(typeof body.docs, "string", where);
  assert.match(body.docs as string, /#error-[a-z0-9-]+$/, where);
  const mapped = (ERROR_STATUS as Record<string, number>)[code as string];
  assert.ok(mapped !== undefined, `unknown error code ${code}: ${where}`);
  assert.equal(status, mapped, `status matches the code: ${where}`);
  return code as string;
}

/** KV prefixes that malformed requests may legitimately touch: limiter windows and buckets. */
export const LIMITER_PREFIXES = new Set(["rate_windows", "rate_buckets"]);

/** A snapshot of every KV entry except limiter counters: key -> serialized value and version. */
export async function kvSnapshot(kv: Deno.Kv): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const ser = (v: unknown) =>
    JSON.stringify(v, (_k, x) => {
      if (typeof x === "bigint") return `${x}n`;
      if (x instanceof Deno.KvU64) return `${x.value}u64`;
      if (x instanceof Uint8Array) return `bytes:${[...x].join(",")}`;
      return x;
    });
  for await (const e of kv.list({ prefix: [] })) {
    if (LIMITER_PREFIXES.has(String(e.key[0]))) continue;
    out.set(ser(e.key), `${ser(e.value)} @${e.versionstamp}`);
  }
  return out;
}

/** The keys added, removed or changed between two snapshots (for failure messages). */
export function kvChanges(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of after) {
    if (!before.has(k)) out.push(`added ${k}: ${v.slice(0, 200)}`);
    else if (before.get(k) !== v) out.push(`changed ${k}: ${v.slice(0, 200)}`);
  }
  for (const k of before.keys()) if (!after.has(k)) out.push(`removed ${k}`);
  return out;
}

/** SHA-256 over every KV entry (key, value, versionstamp) except limiter counters. */
export async function kvFingerprint(kv: Deno.Kv): Promise<{ hash: string; entries: number }> {
  const snap = await kvSnapshot(kv);
  const text = [...snap].map(([k, v]) => `${k}=${v}`).join("\n");
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  const hash = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return { hash, entries: snap.size };
}

/** Every KV entry as `[key, value]` (for scans). */
export async function kvEntries(kv: Deno.Kv): Promise<[Deno.KvKey, unknown][]> {
  const out: [Deno.KvKey, unknown][] = [];
  for await (const e of kv.list({ prefix: [] })) out.push([e.key, e.value]);
  return out;
}

/** Every string anywhere inside a KV key or value (deep, including Uint8Array decoded). */
export function stringsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (value instanceof Uint8Array) out.push(new TextDecoder().decode(value));
  else if (Array.isArray(value)) { for (const v of value) stringsIn(v, out); }
  else if (value instanceof Map) { for (const [k, v] of value) stringsIn([k, v], out); }
  else if (isObj(value)) { for (const [k, v] of Object.entries(value)) stringsIn([k, v], out); }
  return out;
}
