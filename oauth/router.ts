/**
 * The OAuth authorization server's routes (one file per endpoint), mounted at the
 * service root by `routes/app.ts` outside the `/v1` guards. Middlewares are registered
 * on exact paths only: a blanket `use` here would run for every route of the app.
 */
import { Hono } from "hono";
import type { AppEnv } from "../routes/env.ts";
import { handleAuthorizeGet, handleAuthorizePost } from "./authorize.tsx";
import { CORS_PATHS, mcpClientCors } from "./cors.ts";
import { NO_STORE, oauthEndpoint } from "./http.ts";
import { authorizationServerMetadata, protectedResourceMetadata } from "./metadata.ts";
import { handleRegister } from "./register.ts";
import { handleRevoke } from "./revoke.ts";
import { handleToken } from "./token.ts";
import { OAUTH_PATHS } from "./urls.ts";
import { handleWhoami } from "./whoami.ts";

export const oauthRoutes = new Hono<AppEnv>();

for (const path of CORS_PATHS) oauthRoutes.use(path, mcpClientCors);
oauthRoutes.use(`${OAUTH_PATHS.mcp}/*`, mcpClientCors);

const DISCOVERY_CACHE = { "Cache-Control": "public, max-age=300" };

oauthRoutes.get(
  OAUTH_PATHS.authorizationServerMetadata,
  oauthEndpoint(
    "metadata",
    (c) => c.json(authorizationServerMetadata(c.get("deps").config.baseUrl), 200, DISCOVERY_CACHE),
  ),
);

oauthRoutes.get(
  OAUTH_PATHS.protectedResourceMetadata,
  oauthEndpoint(
    "metadata",
    (c) => c.json(protectedResourceMetadata(c.get("deps").config.baseUrl), 200, DISCOVERY_CACHE),
  ),
);

oauthRoutes.post(OAUTH_PATHS.register, oauthEndpoint("register", handleRegister));
oauthRoutes.get(OAUTH_PATHS.authorize, handleAuthorizeGet);
oauthRoutes.post(OAUTH_PATHS.authorize, handleAuthorizePost);
oauthRoutes.post(OAUTH_PATHS.token, oauthEndpoint("token", handleToken, NO_STORE));
oauthRoutes.post(OAUTH_PATHS.revoke, oauthEndpoint("revoke", handleRevoke));
oauthRoutes.get(OAUTH_PATHS.whoami, oauthEndpoint("whoami", handleWhoami));
