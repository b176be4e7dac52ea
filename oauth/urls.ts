/**
 * Every OAuth URL the service publishes comes from `oauthUrls`: the
 * issuer, the endpoints, the protected-resource metadata named in `WWW-Authenticate`
 * challenges, and the resource (token audience). Routes are mounted on `OAUTH_PATHS`,
 * so a published URL and the route that answers it can never disagree.
 */

/** Local paths of the OAuth routes (relative to the service root). */
export const OAUTH_PATHS = {
  authorizationServerMetadata: "/.well-known/oauth-authorization-server",
  protectedResourceMetadata: "/.well-known/oauth-protected-resource/mcp",
  authorize: "/oauth/authorize",
  token: "/oauth/token",
  register: "/oauth/register",
  revoke: "/oauth/revoke",
  whoami: "/oauth/whoami",
  mcp: "/mcp",
  /** The MCP specification's default endpoints, served as aliases of the three above. */
  defaultAuthorize: "/authorize",
  defaultToken: "/token",
  defaultRegister: "/register",
} as const;

export { API_KEY_SCOPES, type Scope, SCOPES } from "../domain/accounts/mod.ts";

interface OAuthUrls {
  /** Issuer: exactly the configured base URL. */
  issuer: string;
  authorizationServerMetadata: string;
  protectedResourceMetadata: string;
  authorization: string;
  token: string;
  registration: string;
  revocation: string;
  whoami: string;
  /** The protected resource and token audience: `{base}/mcp`. */
  resource: string;
}

/** Derives every OAuth URL from the base URL (`BOARD_BASE_URL`, no trailing slash). */
export function oauthUrls(baseUrl: string): OAuthUrls {
  const base = baseUrl.replace(/\/+$/, "");
  return {
    issuer: base,
    authorizationServerMetadata: base + OAUTH_PATHS.authorizationServerMetadata,
    protectedResourceMetadata: base + OAUTH_PATHS.protectedResourceMetadata,
    authorization: base + OAUTH_PATHS.authorize,
    token: base + OAUTH_PATHS.token,
    registration: base + OAUTH_PATHS.register,
    revocation: base + OAUTH_PATHS.revoke,
    whoami: base + OAUTH_PATHS.whoami,
    resource: base + OAUTH_PATHS.mcp,
  };
}
