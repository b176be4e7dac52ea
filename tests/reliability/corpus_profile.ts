/**
 * Route profiles for the bad-input corpus: each route of the app is probed with harmless
 * requests (does it read a JSON body and up to what size, does it take an Idempotency-Key,
 * is it a paged list and up to what `limit`, what does a plain GET answer) so the corpus's
 * expectations follow what the route is, not a hand-written list.
 */
import { REQUEST_LIMIT } from "./corpus_bodies.ts";
import { answer, type Family, familyOf, type Route } from "./harness.ts";

/** Credentials and ids the corpus uses. */
export interface CorpusContext {
  key: string;
  revokedKey: string;
  modKey: string;
  accessToken: string;
  rootId: string;
  bRootId: string;
  send(path: string, init: RequestInit): Promise<Response>;
}

/** What the probes found out about a route. */
export interface RouteProfile {
  route: Route;
  family: Family;
  bearer: string | null;
  /** The route's own path with parameters filled (real ids). */
  path: string;
  /** A query that makes a GET meaningful (e.g. `q=` for search). */
  query: string;
  valid: Record<string, unknown> | null;
  readsBody: boolean;
  usesIdem: boolean;
  refusesIdem: boolean;
  paged: boolean;
  /** Whether the route takes `before` (a malformed one is refused). */
  cursors: boolean;
  /** The route's whole-body limit (from its 413 details; the board's 16384 by default). */
  bodyLimit: number;
  /** The largest `limit` a paged route takes (from its INVALID_LIMIT details). */
  maxLimit: number;
  /** A GET's answer with no defect: status and text (a parameter it ignores must not change it). */
  baseline: { status: number; text: string } | null;
}

/** One malformed request. */
export interface Case {
  category: string;
  label: string;
  path: string;
  init: RequestInit;
  /** Board error codes that are right here (undefined: any documented error). */
  codes?: string[];
  /** A 2xx identical to the baseline is fine (a parameter the route does not take). */
  ignoredOk?: boolean;
  /** A 2xx is fine: a read of a well-formed id that names nothing (an empty list). */
  readOk?: boolean;
}

/** Routes that act on a bare POST: never sent with a live credential by the body corpus. */
export const ACTS_WITHOUT_BODY = new Set(["POST /v1/me/revoke", "POST /v1/me/rotate-key"]);

/** Known valid bodies (schema-level defects are derived from them). */
function validBody(r: Route, ctx: CorpusContext): Record<string, unknown> | null {
  const k = `${r.method} ${r.path}`;
  const table: Record<string, Record<string, unknown>> = {
    "POST /v1/agents": {
      name: "corpus-valid-name",
      participation_basis: "owner_directed",
      description: "An agent",
      discovered_via: "a friend",
    },
    "POST /v1/posts": { title: "A title", body: "A body", topic: "general" },
    "POST /b/posts": { title: "A title", body: "A body" },
    "POST /v1/posts/:id/replies": { body: "A reply", reply_to_id: ctx.rootId },
    "POST /b/posts/:id/replies": { body: "A reply" },
    "POST /votes": { board: "named", post_id: ctx.rootId, value: 1 },
    "POST /pins": { board: "named", thread_id: ctx.rootId, pinned: true },
    "POST /mod/pins": { board: "named", thread_id: ctx.rootId, pinned: true },
    "PUT /v1/rules": { text: "New rules", base_revision: 1 },
    "PUT /mod/rules": { text: "New rules" },
    "POST /oauth/register": { client_name: "c", redirect_uris: ["http://127.0.0.1:9/cb"] },
  };
  return table[k] ?? null;
}

const BASE_QUERY: Record<string, (ctx: CorpusContext) => string> = {
  "/v1/search": () => "q=hello",
  "/votes": (ctx) => `board=named&post_id=${ctx.rootId}`,
  "/v1/voting": (ctx) => `board=named&post_ids=${ctx.rootId}`,
};

function paramValue(name: string, ctx: CorpusContext, path: string): string {
  if (name === "revision") return "1";
  if (name === "name") return "api";
  return path.startsWith("/b/") ? ctx.bRootId : ctx.rootId;
}

function filled(path: string, ctx: CorpusContext): string {
  return path.replace(/:([A-Za-z_]+)(\{[^}]*\})?/g, (_m, n) => paramValue(n, ctx, path));
}

/** The valid headers of a route (with `bearer` and an Idempotency-Key when it takes one). */
export function baseHeaders(p: RouteProfile, withBody: boolean): Record<string, string> {
  const h: Record<string, string> = {};
  if (p.family === "board") {
    h.accept = "application/json";
    h["x-agent-protocol"] = "board/1";
  } else if (p.family === "mcp") h.accept = "application/json, text/event-stream";
  else if (p.family === "oauth") h.accept = "application/json";
  else h.accept = "text/html";
  if (p.bearer) h.authorization = `Bearer ${p.bearer}`;
  if (withBody) {
    const form = p.family === "oauth" && p.route.path !== "/oauth/register";
    h["content-type"] = form ? "application/x-www-form-urlencoded" : "application/json";
  }
  if (!p.refusesIdem && p.route.method !== "GET") h["idempotency-key"] = idem();
  return h;
}

let n = 0;
/** A fresh valid Idempotency-Key. */
export function idem(): string {
  return `corpus-${Date.now().toString(36)}-${(n++).toString(36)}-${
    crypto.randomUUID().slice(0, 8)
  }`;
}

/** True for methods whose requests carry a body. */
export const hasBodyMethod = (r: Route) => !["GET", "DELETE"].includes(r.method);

/** Probes a route (no probe can write: each carries a defect that stops it). */
export async function profile(route: Route, ctx: CorpusContext): Promise<RouteProfile> {
  const family = familyOf(route.path);
  const bearer = route.path.startsWith("/mod")
    ? ctx.modKey
    : route.path === "/pins" && route.method === "POST"
    ? ctx.accessToken
    : family === "web" || route.path.startsWith("/.well-known") ||
        route.path === "/oauth/authorize" || route.path === "/oauth/register" ||
        route.path === "/oauth/token" || route.path === "/oauth/revoke" ||
        (route.path === "/v1/agents" && route.method === "POST")
    ? null
    : ctx.key;
  const p: RouteProfile = {
    route,
    family,
    bearer,
    path: filled(route.path, ctx),
    // The base queries are those of the GET routes (`POST /votes` takes none: 400 otherwise).
    query: route.method === "GET" ? BASE_QUERY[route.path]?.(ctx) ?? "" : "",
    valid: validBody(route, ctx),
    readsBody: false,
    usesIdem: false,
    refusesIdem: false,
    paged: false,
    cursors: false,
    maxLimit: 30,
    bodyLimit: REQUEST_LIMIT,
    baseline: null,
  };
  const code = async (path: string, init: RequestInit) => {
    const a = await answer(await ctx.send(path, init));
    const err = (a.json as {
      error?: {
        code?: string;
        details?: { header?: string; max?: number; limit_bytes?: number };
      };
    })?.error;
    return {
      a,
      code: err?.code,
      header: err?.details?.header,
      max: err?.details?.max,
      limitBytes: err?.details?.limit_bytes,
    };
  };
  if (hasBodyMethod(route) && !ACTS_WITHOUT_BODY.has(`${route.method} ${route.path}`)) {
    const first = await code(p.path, {
      method: route.method,
      headers: baseHeaders(p, true),
      body: "{",
    });
    if (first.header?.toLowerCase() === "idempotency-key" && first.code === "INVALID_INPUT") {
      p.refusesIdem = true;
    }
    const again = await code(p.path, {
      method: route.method,
      headers: baseHeaders(p, true),
      body: "{",
    });
    p.readsBody = again.code === "INVALID_JSON";
    if (p.readsBody) {
      const h = { ...baseHeaders(p, true), "content-length": "999999999" };
      const big = await code(p.path, { method: route.method, headers: h, body: "{" });
      if (typeof big.limitBytes === "number") p.bodyLimit = big.limitBytes;
    }
    if (!p.refusesIdem) {
      const h = baseHeaders(p, true);
      delete h["idempotency-key"];
      p.usesIdem = (await code(p.path, { method: route.method, headers: h, body: "{" })).code ===
        "IDEMPOTENCY_KEY_REQUIRED";
    }
  }
  if (route.method === "GET") {
    const q = (extra: string) => `${p.path}?${[p.query, extra].filter(Boolean).join("&")}`;
    const probe = await code(q("limit=0"), { headers: baseHeaders(p, false) });
    p.paged = probe.code === "INVALID_LIMIT";
    const cursor = await code(q("before=0"), { headers: baseHeaders(p, false) });
    p.cursors = cursor.code === "INVALID_CURSOR" || cursor.code === "INVALID_INPUT";
    if (typeof probe.max === "number") p.maxLimit = probe.max;
    const base = await answer(await ctx.send(q(""), { headers: baseHeaders(p, false) }));
    p.baseline = { status: base.status, text: base.text };
  }
  return p;
}
