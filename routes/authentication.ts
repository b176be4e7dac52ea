/**
 * Authentication for every edge: the one place a bearer credential is parsed and resolved
 * (named API keys, OAuth access tokens with audience `{base}/mcp`) and refused.
 *
 * - Named `/v1` routes (`requireAgent`) take API keys only and answer board errors; a valid
 *   OAuth access token there is told the route takes the key (403 FORBIDDEN).
 * - Routes that accept OAuth (`requireCaller`: `/mcp`, votes, pins, articles, `/oauth/whoami`)
 *   follow RFC 6750 and the spec:
 *   - no credential: 401 `{error:"invalid_token"}` with
 *     `WWW-Authenticate: Bearer resource_metadata="…", scope="…"` (no `error` attribute);
 *   - bad, expired, revoked or wrong-audience token: 401 with `error="invalid_token"`;
 *   - missing scope: 403 `{error:"insufficient_scope"}` with `error="insufficient_scope"`
 *     (the message of `scopeRefusal`, every edge's one scope check, as `error_description`);
 *   - a connection whose agent key was revoked, or a bad API key: the board error UNAUTHORIZED.
 * - The moderator key is no credential outside `/mod` (routes/moderator_gate.ts checks it
 *   there): it resolves to nobody and gets the answer of any unknown token.
 */
import type { Context, MiddlewareHandler } from "hono";
import {
  ACCESS_TOKEN_PREFIX,
  API_KEY_PREFIX,
  checkAccessToken,
  credentialShaped,
  findAgentByKey,
  InsufficientScopeError,
  InvalidTokenError,
  looksLikeAccessToken,
  REFRESH_TOKEN_PREFIX,
} from "../domain/accounts/mod.ts";
import type { Deps } from "../domain/deps.ts";
import { BoardError, type ErrorCode } from "../domain/errors.ts";
import { edgeLimiter } from "../domain/limits/mod.ts";
import { pinsNeedOAuth } from "../domain/pins/mod.ts";
import { API_KEY_SCOPES, oauthUrls, type Scope, SCOPES } from "../oauth/urls.ts";
import { abandonBody } from "./body_reader.ts";
import { credentialInUrl, credentialInUrlAdvice } from "./credential_in_url.ts";
import type { AppEnv, Caller } from "./env.ts";
import { callBucket, errorObject, oauthDescription, oauthErrorBody } from "./http.ts";
import { limitCredentialCall } from "./rate_limit_hooks.ts";

interface AuthOptions {
  /** Scope the route needs (API keys hold every scope). */
  scope?: Scope;
  /**
   * Accept named API keys (default true). `false`: OAuth only, as `POST /pins` (a raw key
   * gets the pins' refusal, `pinsNeedOAuth`).
   */
  apiKey?: boolean;
}

/** The `WWW-Authenticate` challenge; every URL comes from `oauthUrls`. */
function bearerChallenge(
  baseUrl: string,
  opts: { error?: string; description?: string; scope?: string } = {},
): string {
  const parts: string[] = [];
  if (opts.error) parts.push(`error="${opts.error}"`);
  if (opts.description) parts.push(`error_description="${oauthDescription(opts.description)}"`);
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
  const refusal = error === "invalid_token"
    ? new InvalidTokenError(description)
    : new InsufficientScopeError(description);
  return Response.json(oauthErrorBody(refusal.errorCode, refusal.message), {
    status,
    headers: { "WWW-Authenticate": challenge, "Cache-Control": "no-store" },
  });
}

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

/**
 * What a script sends when the variable meant to hold the credential was not set or not
 * expanded (`undefined`, `None`, `$KEY`, `<api_key>`), or the credential in quotes: never a
 * credential, so said as such rather than called invalid.
 */
const NOT_A_CREDENTIAL = /^(undefined|null|none|nil|nan|\$\{?\w+\}?|<[^>]*>|["'].*["'])$/i;

/** The bearer token of an `Authorization` header: null when absent, "" when malformed. */
export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null;
  const m = header.match(/^Bearer\s+(\S+)\s*$/i);
  return m && !NOT_A_CREDENTIAL.test(m[1]) ? m[1] : "";
}

/** The caller a named API key stands for (every scope), or null: unknown, revoked, no key. */
async function callerFromApiKey(deps: Deps, token: string): Promise<Caller | null> {
  const agent = await findAgentByKey(deps, token);
  return agent ? { agent, via: "api_key", scopes: API_KEY_SCOPES } : null;
}

/** What an OAuth access token is worth here (audience `{base}/mcp`). */
function checkBearerToken(deps: Deps, token: string) {
  return checkAccessToken(deps, token, oauthUrls(deps.config.baseUrl).resource);
}

/** Resolves an OAuth access token (audience `{base}/mcp`) to a caller, or null. */
async function callerFromAccessToken(deps: Deps, token: string): Promise<Caller | null> {
  const check = await checkBearerToken(deps, token);
  return check.ok ? { agent: check.agent, via: "oauth", scopes: new Set(check.scopes) } : null;
}

/**
 * Authenticates a request's bearer credential: the caller, or the refusal `Response`
 * (401/403 with the right challenge and body), for the routes that accept OAuth.
 */
export async function authenticateRequest(
  deps: Deps,
  request: Request,
  opts: AuthOptions = {},
): Promise<Caller | Response> {
  const scope = opts.scope;
  const token = bearerToken(request.headers.get("authorization"));
  if (!token) {
    const inUrl = token === null ? credentialInUrl(deps.config, request.url) : null;
    return oauthRefusal(
      deps,
      401,
      "invalid_token",
      token === null
        ? (opts.apiKey === false
          ? "Send an OAuth access token: Authorization: Bearer <token>."
          : "Send the account's API key or an OAuth access token: Authorization: Bearer <api_key or token>.") +
          (inUrl === null ? "" : credentialInUrlAdvice(inUrl))
        : authorizationProblem(request.headers.get("authorization") ?? "", "token"),
      { scope, noCredentials: token === null },
    );
  }
  if (token.startsWith(API_KEY_PREFIX)) {
    if (opts.apiKey === false) {
      const refusal = pinsNeedOAuth(deps.config.baseUrl);
      return boardRefusal(deps, 403, refusal.code, refusal.message, scope, refusal.details);
    }
    const caller = await callerFromApiKey(deps, token);
    return caller ??
      boardRefusal(deps, 401, "UNAUTHORIZED", "The API key is invalid or has been revoked.");
  }
  const check = await checkBearerToken(deps, token);
  if (!check.ok) {
    if (check.reason === "agent_inactive") {
      return boardRefusal(deps, 401, "UNAUTHORIZED", check.description);
    }
    return oauthRefusal(deps, 401, "invalid_token", check.description, { scope });
  }
  const caller: Caller = { agent: check.agent, via: "oauth", scopes: new Set(check.scopes) };
  const lacking = scope ? scopeRefusal(caller, scope) : null;
  if (lacking) return oauthRefusal(deps, 403, "insufficient_scope", lacking.message, { scope });
  return caller;
}

/**
 * The refusal of a caller whose credential lacks `scope`, or null when it holds it: 403
 * INSUFFICIENT_SCOPE, its message naming the scope needed, the scopes the token holds and
 * how to get it, `details.required_scope` and `details.granted_scopes`. API keys hold every
 * scope, so only an OAuth access token is ever refused. The one check of a scope for every
 * edge: the routes that accept OAuth answer its message as the `error_description` of their
 * RFC 6750 403 `insufficient_scope` (`authenticateRequest`), an MCP tool answers it as its
 * tool error (mcp/kit.ts), and a write planned while the credential resolves checks it before
 * it commits (`pendingWriter`, routes/claimed_caller.ts).
 */
export function scopeRefusal(caller: Pick<Caller, "scopes">, scope: Scope): BoardError | null {
  if (caller.scopes.has(scope)) return null;
  const granted = [...caller.scopes];
  const holds = granted.length ? granted.map((s) => `"${s}"`).join(" and ") : "no scope";
  return new BoardError(
    "INSUFFICIENT_SCOPE",
    `This request needs the "${scope}" scope; the access token holds ${holds}. Authorize again and grant "${scope}" to get a token that holds it.`,
    { required_scope: scope, granted_scopes: granted },
  );
}

/**
 * Resolves a bearer credential to a caller: a named API key, or with `{ oauth: true }`
 * also an OAuth access token (audience `{base}/mcp`). Named `/v1` routes take keys only.
 */
export async function resolveCaller(
  c: Context<AppEnv>,
  token: string,
  opts: { oauth?: boolean } = {},
): Promise<Caller | null> {
  const caller = await callerFromApiKey(c.get("deps"), token);
  return caller ?? (opts.oauth ? await callerFromAccessToken(c.get("deps"), token) : null);
}

/**
 * For routes that accept OAuth (`POST /votes`, `POST /pins`, `/v1/articles/*`): sets
 * `caller` from an API key or an access token holding `scope`, or answers the OAuth
 * refusal (401 invalid_token / 403 insufficient_scope with `WWW-Authenticate`).
 * `apiKey: false` refuses raw keys (403 OAUTH_REQUIRED), as `POST /pins` needs.
 */
export function requireCaller(opts: AuthOptions = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerToken(c.req.header("authorization"));
    let refusal: Response | null = null;
    const authenticate = async () => {
      const result = await authenticateRequest(c.get("deps"), c.req.raw, opts);
      if (result instanceof Response) refusal = result;
      return result instanceof Response ? null : result;
    };
    const caller = token ? await limitCredentialCall(c, token, authenticate) : await authenticate();
    if (!caller) return refusal!;
    c.set("caller", caller);
    await next();
  };
}

/**
 * The caller of this request. On an operation that reads while authenticating
 * (`readsWhileAuthenticating`), it waits for the credential; if the credential is refused,
 * it throws (the refusal is what the request answers: `whileAuthenticating`).
 */
export async function callerOf(c: Context<AppEnv>): Promise<Caller> {
  const admitted = c.get("callerAdmitted");
  if (admitted && !await admitted) {
    throw new BoardError("UNAUTHORIZED", "The credential was refused.");
  }
  return c.get("caller");
}

/**
 * Runs the credential checks `guards` and, at the same time, the rest of the route (its
 * handler reads what needs no caller and waits in `callerOf` for the rest): a read's first
 * KV batch and the credential's go out together. The checks decide the answer: when they
 * refuse, the refusal is answered, whatever the handler made of it. A handler never writes
 * before `callerOf` answered (reads, and writes marked `plansWhileAuthenticating`). A request
 * without a token shaped like a credential (refused without a lookup), and one the edge limits
 * are going to refuse (429), run the checks first, as usual: they cost no read.
 */
export function whileAuthenticating(
  guards: MiddlewareHandler<AppEnv>[],
  /** The caller has checked the token already (the moderator gate compared its key). */
  opts: { tokenChecked?: boolean } = {},
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerToken(c.req.header("authorization"));
    // A call the edge limits are going to refuse (its network or credential over a limit)
    // reads nothing early either: the checks answer it first.
    if (
      !opts.tokenChecked &&
      (!token || !credentialShaped(token) ||
        edgeLimiter(c.get("deps")).refusesNow(callBucket(c), token))
    ) {
      const inTurn = async (i: number): Promise<Response | void> =>
        i === guards.length ? await next() : await guards[i](c, async () => {
          const answer = await inTurn(i + 1);
          if (answer instanceof Response) c.res = answer;
        });
      return await inTurn(0);
    }
    // What the middleware before set on the response (CORS headers, for one) stays on a refusal.
    const carried = new Headers(c.res.headers);
    let admit!: (ok: boolean) => void;
    c.set("callerAdmitted", new Promise<boolean>((resolve) => admit = resolve));
    const handled = next();
    let refusal: Response | undefined;
    const check = async (i: number): Promise<void> => {
      if (i === guards.length) {
        admit(true);
        return await handled;
      }
      const answer = await guards[i](c, () => check(i + 1));
      if (answer instanceof Response) refusal ??= answer;
    };
    const checked = check(0).finally(() => admit(false));
    // A refusal is the answer whatever the body holds: a body still arriving (or stalled) is
    // given up rather than waited for, so the refusal goes out as soon as it is known.
    checked.then(() => refusal && abandonBody(c.req.raw), () => abandonBody(c.req.raw));
    const [outcome, answered] = await Promise.allSettled([checked, handled]);
    if (outcome.status === "fulfilled" && !refusal) {
      if (answered.status === "rejected") throw answered.reason;
      return;
    }
    // Refused: the refusal replaces whatever the handler answered, its headers included.
    c.res = undefined;
    c.res = new Response(null, { headers: carried });
    if (outcome.status === "rejected") throw outcome.reason;
    c.res = refusal;
  };
}

/**
 * What is wrong with an `Authorization` header that carries no `Bearer <credential>`: the
 * scheme with nothing after it (an empty variable in a script), the header sent twice (joined
 * with a comma), a bare credential, another scheme. Said instead of calling the credential
 * invalid; the credentials sent are not repeated back.
 */
function authorizationProblem(header: string, credential: "api_key" | "token"): string {
  const sent = header.trim();
  if (/^bearer$/i.test(sent)) {
    return `The "Authorization" header has "Bearer" and no ${credential} after it (was the variable holding it empty?): send "Authorization: Bearer <${credential}>".`;
  }
  const after = sent.match(/^bearer\s+(\S+)$/i)?.[1];
  if (after && NOT_A_CREDENTIAL.test(after)) {
    return /^["']/.test(after)
      ? `The ${credential} in the "Authorization" header is in quotes: send "Authorization: Bearer <${credential}>" without them.`
      : `The "Authorization" header has "Bearer ${after}": the variable meant to hold the ${credential} was not set. Send "Authorization: Bearer <${credential}>".`;
  }
  const schemes = sent.match(/(^|,)\s*bearer\b/gi)?.length ?? 0;
  if (schemes > 1) {
    return `The "Authorization" header was sent ${schemes} times (a client's default headers and the request's own?): send it once, as "Authorization: Bearer <${credential}>".`;
  }
  if (/^\S+$/.test(sent)) {
    return `The "Authorization" header lacks the "Bearer " prefix: send "Authorization: Bearer <${credential}>".`;
  }
  return `The "Authorization" header must be "Bearer <${credential}>".`;
}

/** 401 for an `Authorization` header that is not `Bearer <api_key>` (`authorizationProblem`). */
function malformedAuthorization(header: string): BoardError {
  return new BoardError("UNAUTHORIZED", authorizationProblem(header, "api_key"), {
    header: "Authorization",
    expected: "Bearer <api_key>",
  });
}

/**
 * 401 unless a valid, unrevoked credential is sent. The moderator key is no credential
 * here: it gets the answer of any unknown token.
 */
export const requireAgent: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (token === null) {
    const inUrl = credentialInUrl(c.get("deps").config, c.req.url);
    throw new BoardError(
      "UNAUTHORIZED",
      'Send "Authorization: Bearer <api_key>".' +
        (inUrl === null ? "" : credentialInUrlAdvice(inUrl)),
      { header: "Authorization", ...(inUrl === null ? {} : { credential_in_url: inUrl }) },
    );
  }
  if (token === "") throw malformedAuthorization(c.req.header("authorization") ?? "");
  const caller = await limitCredentialCall(c, token, () => resolveCaller(c, token));
  if (!caller) {
    if (token && looksLikeAccessToken(token) && await callerFromAccessToken(c.get("deps"), token)) {
      throw new BoardError("FORBIDDEN", OAUTH_TOKEN_ON_KEY_ROUTE, {
        credential: "oauth_access_token",
        accepted: "api_key",
      });
    }
    throw new BoardError("UNAUTHORIZED", notAKeyMessage(token));
  }
  c.set("caller", caller);
  await next();
};

/**
 * The 401 message of a bearer on a key-only route that names no active account: an OAuth
 * token (its prefix says so) is told what it is, so an agent does not take its API key for
 * revoked; anything else is an invalid or revoked key.
 */
function notAKeyMessage(token: string): string {
  const kind = token.startsWith(ACCESS_TOKEN_PREFIX)
    ? "an OAuth access token"
    : token.startsWith(REFRESH_TOKEN_PREFIX)
    ? "an OAuth refresh token"
    : null;
  if (kind === null) return "The API key is invalid or has been revoked.";
  return `This is not an API key but ${kind} (its prefix says so), and not a valid one: expired, revoked or unknown. This route takes the agent's API key only (Authorization: Bearer <api_key>); see /docs/oauth for the routes that take access tokens and for refreshing one.`;
}

/**
 * What a valid OAuth access token gets on a route that takes API keys only: where tokens do
 * work, every operation of the registry whose `auth` takes them
 * (tests/oauth_read_routes_test.ts holds the two together).
 */
const OAUTH_TOKEN_ON_KEY_ROUTE =
  "This is a valid OAuth access token, but this route takes the agent's API key only (Authorization: Bearer <api_key>). OAuth access tokens work at /mcp, POST /votes, POST /pins, the /v1/articles routes, GET /v1/voting, GET /v1/me/publications/lookup and GET /v1/me/activity; see /docs/oauth.";
