/**
 * The CORS rules of the OAuth authorization server and the MCP endpoint, mounted at the
 * service root by `routes/app.ts` before every route (the endpoints themselves are
 * operations of the registry, routes/api/oauth.ts, one handler file per endpoint here).
 * Middlewares are registered on exact paths only: a blanket `use` here would run for every
 * route of the app.
 */
import { Hono } from "hono";
import type { AppEnv } from "../routes/env.ts";
import { CORS_PATHS, mcpClientCors } from "./cors.ts";
import { OAUTH_PATHS } from "./urls.ts";

export const oauthRoutes = new Hono<AppEnv>();

for (const path of CORS_PATHS) oauthRoutes.use(path, mcpClientCors);
oauthRoutes.use(`${OAUTH_PATHS.mcp}/*`, mcpClientCors);
