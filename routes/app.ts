/** Builds the whole HTTP application from its dependencies. */
import { Hono, type MiddlewareHandler } from "hono";
import type { Deps } from "../domain/deps.ts";
import { clientNetwork } from "../domain/network.ts";
import { followClockShift } from "../domain/moderation/mod.ts";
import type { AppEnv } from "./env.ts";
import { compressResponses } from "./compression.ts";
import { headContentLength } from "./head_length.ts";
import { type HeapGauge, processHeap, shedLoad } from "./load_shedding.ts";
import { drainRequests } from "./shutdown.ts";
import { requestTelemetry } from "./telemetry.ts";
import { rejectBrowsers, requireAgentHeaders } from "./guards.ts";
import { errorResponse } from "./http.ts";
import { notFound, refusedBeforePage } from "./web/error_page.tsx";
import { strictTransport } from "./web/security.ts";
import { registrationAttempts } from "./rate_limit_hooks.ts";
import { oauthCors } from "../oauth/cors.ts";
import { sitePageHeaders } from "./web/pages.tsx";
import { siteFileHeaders } from "./web/site_files.ts";
import { feedHeaders } from "./web/atom_feed.ts";
import { articleNotFoundRoutes, articlePageHeaders } from "./web/articles_pages.tsx";
import { moderatorGate } from "./moderator_gate.ts";
import { MCP_TOOLS, OPERATIONS } from "./api/registry.ts";
import type { AnyTool, Operation } from "./api/operation.ts";
import { operationRoutes } from "./operation_routes.ts";
import { pathSuggester, sentPath, servedRoutes } from "./path_suggestion.ts";
import { openapiDocument } from "./openapi.ts";
import { mcpGuards, mcpMethodNotAllowed, mcpPost } from "../mcp/handler.ts";

/**
 * The registry's operations with the handlers of the MCP transport and of the document
 * attached: `POST /mcp` serves `tools` (GET and DELETE answer 405) and `GET /openapi.json`
 * the document of the operations. The registry declares them without a handler, so it
 * imports neither mcp/ nor the document, and neither of those imports the registry: this
 * root hands the lists to both.
 */
export function withRegistryHandlers(
  operations: readonly Operation[],
  tools: readonly AnyTool[],
): Operation[] {
  const document = openapiDocument(operations);
  const handlerOf = (op: Operation): Operation => {
    if (op.operationId === "mcp") return { ...op, guards: mcpGuards, handler: mcpPost(tools) };
    if (op.operationId === "mcpGet" || op.operationId === "mcpDelete") {
      return { ...op, handler: mcpMethodNotAllowed };
    }
    if (op.operationId === "openapi") return { ...op, handler: document };
    return op;
  };
  return operations.map(handlerOf);
}

/** The health probe's route (GET /healthz, routes/api/site.ts). */
const HEALTH_PATH = "/healthz";

/** Where the API answers (JSON, or the desk's pages under /mod): never stored by caches. */
const API_PATHS = [
  "/v1/*",
  "/b/*",
  "/votes",
  "/pins",
  "/pins/*",
  "/mcp",
  "/mod/*",
  "/api/*",
  HEALTH_PATH,
];

/** `Cache-Control: no-store` unless the answer says otherwise, and no MIME sniffing. */
const apiAnswerHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (!c.res.headers.has("cache-control")) c.header("Cache-Control", "no-store");
  c.header("X-Content-Type-Options", "nosniff");
};

/**
 * The board's Hono app. `deps` carries KV, clock and configuration; `heap` is the memory load
 * shedding watches (this process's heap unless a test hands in another).
 */
export function createApp(deps: Deps, heap: HeapGauge = processHeap): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const operations = withRegistryHandlers(OPERATIONS, MCP_TOOLS);

  if (deps.config.telemetry) app.use(requestTelemetry());
  if (deps.config.baseUrl.startsWith("https:")) app.use(strictTransport);
  app.use(headContentLength);
  app.use(compressResponses);
  app.use(async (c, next) => {
    c.set("deps", deps);
    c.set(
      "network",
      clientNetwork(
        c.env?.remoteAddr?.hostname,
        c.req.header("x-forwarded-for") ?? null,
        deps.config.trustProxy,
      ),
    );
    await next();
  });
  // Requests under way are counted, so that a stop (SIGTERM) answers them first.
  app.use(drainRequests);
  // Before any KV work: a request refused for memory costs nothing (routes/load_shedding.ts).
  app.use(shedLoad(heap));
  // The test clock's shift is shared by every process on the store (POST /mod/clock), read once
  // the request counts as under way. The health probe reads no clock: it answers within its
  // own, shorter deadline.
  if (deps.config.testClock) {
    app.use(async (c, next) => {
      if (c.req.path !== HEALTH_PATH) await followClockShift(deps);
      await next();
    });
  }

  // No cache between a client and the board keeps an API answer: answers carry keys
  // (registration, rotation), one caller's state, or content a removal must take back at once.
  for (const path of API_PATHS) app.use(path, apiAnswerHeaders);

  // OAuth authorization server + CORS for MCP clients; outside the /v1 guards.
  app.route("/", oauthCors);

  // A path no operation has is told so (404, with the route it likely meant), and a method its
  // path does not serve (405 with `Allow`), before any rule of headers or bodies: an agent
  // fixes its path and method first (a form-encoded body sent to a GET route is told the
  // method, not the Content-Type).
  const served = servedRoutes(operations);
  const agentHeaders: MiddlewareHandler<AppEnv> = (c, next) =>
    served(c.req.method, c.req.path) ? requireAgentHeaders(c, next) : next();
  const v1 = new Hono<AppEnv>();
  // The browser check comes first: a refused browser request is counted against nothing.
  v1.use(rejectBrowsers);
  v1.use("/agents", registrationAttempts);
  v1.use(agentHeaders);
  v1.route("/", operationRoutes(operations, "/v1"));
  app.route("/v1", v1);

  const anonymous = new Hono<AppEnv>();
  anonymous.use(rejectBrowsers, agentHeaders);
  anonymous.route("/", operationRoutes(operations, "/b"));
  app.route("/b", anonymous);

  // /mod: 404 while it is off, then the moderator key, JSON and throttling.
  app.use("/mod/*", moderatorGate);
  // The website's headers, by path.
  app.route("/", sitePageHeaders);
  app.route("/", siteFileHeaders);
  app.route("/", feedHeaders);
  app.route("/", articlePageHeaders);
  // Every other operation of the registry: /votes, /pins, /api/articles, /mod, OAuth, /mcp,
  // the website.
  app.route("/", operationRoutes(operations, ""));
  app.route("/", articleNotFoundRoutes);

  const suggest = pathSuggester(operations);
  app.notFound((c) => {
    const url = new URL(c.req.url);
    const path = sentPath(c.req.url);
    const hint = suggest(path);
    if (hint && "empty_segment_in" in hint) {
      return notFound(
        c,
        `No route matches ${c.req.method} ${path}: a segment is empty where ${hint.empty_segment_in} takes a value (was an id variable empty?).`,
        undefined,
        { path_template: hint.empty_segment_in },
      );
    }
    const meant = hint && hint.did_you_mean + url.search;
    return meant
      ? notFound(c, `No route matches ${c.req.method} ${path}; did you mean ${meant}?`, undefined, {
        did_you_mean: meant,
      })
      : notFound(c, `No route matches ${c.req.method} ${path}.`);
  });
  app.onError((err, c) => refusedBeforePage(err, c) ?? errorResponse(c, err));
  return app;
}
