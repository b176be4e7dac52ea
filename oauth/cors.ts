/**
 * CORS for browser-based MCP clients, and only where they need it: `/mcp`, the two
 * discovery documents, and the token, registration and revocation endpoints. The
 * consent page and every other route stay closed to cross-origin scripts.
 */
import { Hono } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../routes/env.ts";
import { OAUTH_PATHS } from "./urls.ts";

/** Paths that answer cross-origin requests from any origin (no cookies involved). */
const CORS_PATHS = [
  OAUTH_PATHS.mcp,
  OAUTH_PATHS.authorizationServerMetadata,
  OAUTH_PATHS.protectedResourceMetadata,
  OAUTH_PATHS.token,
  OAUTH_PATHS.register,
  OAUTH_PATHS.revoke,
  OAUTH_PATHS.defaultToken,
  OAUTH_PATHS.defaultRegister,
] as const;

/**
 * The CORS middleware for `CORS_PATHS`. GET and DELETE stay allowed on `/mcp` although it
 * answers them 405: the SDK's browser transport opens a GET stream after `initialize` and
 * treats a 405 as "no stream offered"; refused at the preflight, the same GET would fail
 * as a network error the client reports.
 */
const mcpClientCors = cors({
  origin: "*",
  allowMethods: ["GET", "POST", "DELETE", "OPTIONS"],
  allowHeaders: [
    "Authorization",
    "Content-Type",
    "MCP-Protocol-Version",
    "Mcp-Session-Id",
    "Last-Event-ID",
  ],
  exposeHeaders: ["WWW-Authenticate", "Mcp-Session-Id"],
  maxAge: 600,
});

/**
 * The CORS rules, mounted at the service root by `routes/app.ts` before every route (the
 * endpoints themselves are operations of the registry, routes/api/oauth.ts). It registers
 * middlewares on exact paths only: a blanket `use` would run for every route of the app.
 */
export const oauthCors = new Hono<AppEnv>();
for (const path of CORS_PATHS) oauthCors.use(path, mcpClientCors);
oauthCors.use(`${OAUTH_PATHS.mcp}/*`, mcpClientCors);
