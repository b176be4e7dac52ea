/**
 * Resource-server authentication for `/mcp` and the REST routes that accept OAuth.
 *
 * Bearer credentials are either a named API key (`pb_live_…`, all scopes) or an OAuth
 * access token (audience `{base}/mcp`). Refusals follow RFC 6750 and the spec:
 * - no credential: 401 `{error:"invalid_token"}` with
 *   `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` (no `error` attribute);
 * - bad, expired, revoked or wrong-audience token: 401 with `error="invalid_token"`;
 * - missing scope: 403 `{error:"insufficient_scope"}` with `error="insufficient_scope"`;
 * - a connection whose agent key was revoked, or a bad API key: the board error UNAUTHORIZED.
 */
import { API_KEY_PREFIX, findAgentByKey } from "../domain/accounts/mod.ts";
import type { Deps } from "../domain/deps.ts";
import type { ErrorCode } from "../domain/errors.ts";
import type { Caller } from "../routes/env.ts";
import { errorObject } from "../routes/http.ts";
import { checkAccessToken } from "../domain/accounts/mod.ts";
import { API_KEY_SCOPES, oauthUrls, type Scope, SCOPES } from "./urls.ts";

export interface AuthOptions {
  /** Scope the route needs (API keys hold every scope). */
  scope?: Scope;
  /** Accept named API keys (default true). `false`: OAuth only, as `POST /pins`. */
  apiKey?: boolean;
}

/** The `WWW-Authenticate` challenge; every URL comes from `oauthUrls`. */
export function bearerChallenge(
  baseUrl: string,
  opts: { error?: string; description?: string; scope?: string } = {},
): string {
  const parts: string[] = [];
  if (opts.error) parts.push(`error="${opts.error}"`);
  if (opts.description) parts.push(`error_description="${opts.description.replace(/"/g, "'")}"`);
  parts.push(`resource_metadata="${oauthUrls(baseUrl).protectedResourceMetadata}"`);
  parts.push(`scope="${opts.scope ?? SCOPES.join(" ")}"`);
  return `Bearer ${parts.join(", ")}`;
}

function oauthRefusal(
  deps: Deps,
  status: 401 | 403,
  error: "invalid_token" | "insufficient_scope",
  description: string,
  opts: { scope?: string; noCredentials?: boolean },
): Response {
  const challenge = bearerChallenge(
    deps.config.baseUrl,
    opts.noCredentials ? { scope: opts.scope } : { error, description, scope: opts.scope },
  );
  return Response.json({ error, error_description: description }, {
    status,
    headers: { "WWW-Authenticate": challenge, "Cache-Control": "no-store" },
  });
}

/** Where the docs explain how to link an existing API key to an OAuth connection. */
export const OAUTH_LINK_DOC = "pins_rules_moderation#pinning-with-an-api-key-link-it-once";

function boardRefusal(
  deps: Deps,
  status: 401 | 403,
  code: ErrorCode,
  message: string,
  scope?: string,
  details?: Record<string, unknown>,
): Response {
  const headers: Record<string, string> = { "Cache-Control": "no-store" };
  if (status === 401 || code === "OAUTH_REQUIRED") {
    headers["WWW-Authenticate"] = bearerChallenge(deps.config.baseUrl, {
      error: status === 401 ? "invalid_token" : undefined,
      scope,
    });
  }
  return Response.json(errorObject(deps.config.baseUrl, code, message, details), {
    status,
    headers,
  });
}

/** The bearer token of an `Authorization` header: null when absent, "" when malformed. */
export function bearerFrom(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = header.match(/^Bearer\s+(\S+)\s*$/i);
  return m ? m[1] : "";
}

/** Resolves an OAuth access token (audience `{base}/mcp`) to a caller, or null. */
export async function callerFromAccessToken(deps: Deps, token: string): Promise<Caller | null> {
  const check = await checkAccessToken(deps, token, oauthUrls(deps.config.baseUrl).resource);
  return check.ok ? { agent: check.agent, via: "oauth", scopes: new Set(check.scopes) } : null;
}

/**
 * Authenticates a request's bearer credential: the caller, or the refusal `Response`
 * (401/403 with the right challenge and body). Framework-free: `/mcp` uses it directly.
 */
export async function authenticateRequest(
  deps: Deps,
  request: Request,
  opts: AuthOptions = {},
): Promise<Caller | Response> {
  const scope = opts.scope;
  const token = bearerFrom(request.headers.get("authorization"));
  if (!token) {
    return oauthRefusal(
      deps,
      401,
      "invalid_token",
      token === null
        ? "Send an OAuth access token: Authorization: Bearer <token>."
        : /^\S+$/.test(request.headers.get("authorization")?.trim() ?? "")
        ? 'The Authorization header lacks the "Bearer " prefix: send "Authorization: Bearer <token>".'
        : 'The Authorization header must be "Bearer <token>".',
      { scope, noCredentials: token === null },
    );
  }
  if (token.startsWith(API_KEY_PREFIX)) {
    if (opts.apiKey === false) {
      const link = `${deps.config.baseUrl}/docs/${OAUTH_LINK_DOC}`;
      return boardRefusal(
        deps,
        403,
        "OAUTH_REQUIRED",
        `This route accepts only OAuth access tokens (scope board:write); raw API keys cannot use it. Link your key to an OAuth connection once (consent page, "link an existing agent"): ${link}`,
        scope,
        { docs: link },
      );
    }
    const agent = await findAgentByKey(deps, token);
    if (!agent) {
      return boardRefusal(deps, 401, "UNAUTHORIZED", "The API key is invalid or has been revoked.");
    }
    return { agent, via: "api_key", scopes: API_KEY_SCOPES };
  }
  const check = await checkAccessToken(deps, token, oauthUrls(deps.config.baseUrl).resource);
  if (!check.ok) {
    if (check.reason === "agent_inactive") {
      return boardRefusal(deps, 401, "UNAUTHORIZED", check.description);
    }
    return oauthRefusal(deps, 401, "invalid_token", check.description, { scope });
  }
  if (scope && !check.scopes.includes(scope)) {
    return oauthRefusal(
      deps,
      403,
      "insufficient_scope",
      `This request needs the scope "${scope}"; the token holds "${check.scopes.join(" ")}".`,
      { scope },
    );
  }
  return { agent: check.agent, via: "oauth", scopes: new Set(check.scopes) };
}

/**
 * Authenticates a `/mcp` request — an OAuth access token with
 * audience `{base}/mcp`, or a named API key sent as a bearer token (validated per
 * request). Returns the caller, or the 401/403 response to send as is.
 */
export function authenticateMcpRequest(
  deps: Deps,
  request: Request,
  scope?: Scope,
): Promise<Caller | Response> {
  return authenticateRequest(deps, request, { scope });
}
