/**
 * `GET /oauth/authorize` (validate the request, render the consent page) and
 * `POST /oauth/authorize` (the consent form: create or link an agent, then redirect
 * with `code`, `state` and `iss`).
 *
 * Request errors are shown on a page and never redirected: those found after the redirect
 * URI was validated offer a link back to the application with `error`, `state` and `iss`.
 * Deny redirects only for an application that has completed an authorization before.
 * Pages are never framed (`X-Frame-Options: DENY`, `frame-ancestors 'none'`) and never
 * CORS-open.
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { BoardError, TxConflictError } from "../domain/errors.ts";
import { registerSchema } from "../routes/schemas.ts";
import type { AppEnv } from "../routes/env.ts";
import { siteCsp } from "../routes/web/security.ts";
import {
  type ErrorReturn,
  errorReturnUrl,
  UNKNOWN_CLIENT_HELP,
  validateAuthorizeQuery,
} from "./authorize_request.ts";
import {
  admitOAuthRequest,
  type AuthRequestRecord,
  type ClientRecord,
  completeAuthRequest,
  type ConsentAgent,
  consentFormToken,
  consumeForm,
  createConsentAgent,
  declineAuthRequest,
  extendAuthRequest,
  linkConsentAgent,
  newSecret,
  OAuthRateLimited,
  openAuthRequest,
  reuseConsentAgent,
  secretHash,
  submitLinkForm,
  TTL,
} from "../domain/accounts/mod.ts";
import { type ConsentField, ConsentPage, ErrorPage, NewKeyPage } from "./consent_page.tsx";
import { readBoundedText } from "./http.ts";
import { oauthUrls } from "./urls.ts";

type Html = ReturnType<typeof ConsentPage>;

/** Sends an HTML page (the site's layout) with the page security headers. */
function page(
  c: Context<AppEnv>,
  status: number,
  html: Html,
  formTargets: string[] = [],
  extra: Record<string, string> = {},
): Promise<Response> {
  return Promise.resolve(c.html(html, status as 200, {
    "Content-Security-Policy": siteCsp(formTargets.length ? formTargets : ["'none'"]),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    // Not no-referrer: under it Chromium posts the form with `Origin: null`. same-origin
    // keeps the page address from every other site and lets the form carry its origin.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
    ...extra,
  }));
}

function errorPage(
  c: Context<AppEnv>,
  status: number,
  title: string,
  message: string,
  extra: Record<string, string> = {},
  back?: ErrorReturn,
): Promise<Response> {
  const link = back
    ? {
      url: errorReturnUrl(back, oauthUrls(c.get("deps").config.baseUrl).issuer),
      shown: redirectTarget(back.redirectUri).shown,
    }
    : undefined;
  return page(c, status, ErrorPage({ title, message, back: link }), [], extra);
}

function cookieName(baseUrl: string): string {
  return baseUrl.startsWith("https:") ? "__Host-board_consent" : "board_consent";
}

function writeSessionCookie(c: Context<AppEnv>, value: string, maxAge: number): void {
  const base = c.get("deps").config.baseUrl;
  setCookie(c, cookieName(base), value, {
    path: "/",
    httpOnly: true,
    secure: base.startsWith("https:"),
    sameSite: "Lax",
    maxAge,
  });
}

/**
 * Issues a fresh consent session for a new authorization request and returns its hash.
 * Any cookie the browser already holds is replaced, never adopted: a value planted by
 * another page (cookies are shared across ports) names no request.
 */
async function issueConsentSession(c: Context<AppEnv>): Promise<string> {
  const value = newSecret();
  writeSessionCookie(c, value, TTL.consentSession);
  return await secretHash("consent", value);
}

/** The hash of the consent session cookie a form post carries, or null. */
async function postedConsentSession(c: Context<AppEnv>): Promise<string | null> {
  const value = getCookie(c, cookieName(c.get("deps").config.baseUrl));
  return value && /^[A-Za-z0-9_-]{43}$/.test(value) ? await secretHash("consent", value) : null;
}

/** Gives the consent session the browser holds a fresh lifetime (while a new key is shown). */
function renewConsentSession(c: Context<AppEnv>): void {
  const value = getCookie(c, cookieName(c.get("deps").config.baseUrl));
  if (value) writeSessionCookie(c, value, TTL.consentSession);
}

/** Ends the consent session once its request is completed or declined. */
function endConsentSession(c: Context<AppEnv>): void {
  writeSessionCookie(c, "", 0);
}

/**
 * Where the consent form's redirect goes: the CSP `form-action` source that lets it reach
 * the client (the origin for http(s), the scheme for a private-use scheme such as
 * `cursor:`), and what the page shows the person (host, or scheme and host).
 */
function redirectTarget(uri: string): { source: string; shown: string } {
  const url = new URL(uri);
  if (url.protocol === "http:" || url.protocol === "https:") {
    return { source: url.origin, shown: url.host };
  }
  return { source: url.protocol, shown: `${url.protocol}${url.host ? `//${url.host}` : ""}` };
}

function rateLimited(c: Context<AppEnv>, operation: string): Promise<Response> | null {
  try {
    admitOAuthRequest(c.get("deps"), operation, c.get("network"));
    return null;
  } catch (e) {
    if (!(e instanceof OAuthRateLimited)) throw e;
    return errorPage(c, 429, "Too many requests", e.message, {
      "Retry-After": String(e.retryAfter),
    });
  }
}

function consentPage(
  c: Context<AppEnv>,
  status: number,
  client: ClientRecord,
  request: AuthRequestRecord,
  csrf: string,
  extra: { error?: string; errorField?: ConsentField; name?: string; basis?: string } = {},
  headers: Record<string, string> = {},
): Promise<Response> {
  const urls = oauthUrls(c.get("deps").config.baseUrl);
  const target = redirectTarget(request.redirect_uri);
  return page(
    c,
    status,
    ConsentPage({
      action: urls.authorization,
      csrf,
      clientName: client.client_name,
      clientId: client.client_id,
      redirectHost: target.shown,
      scopes: request.scopes,
      ...extra,
    }),
    [new URL(urls.authorization).origin, target.source],
    headers,
  );
}

function newKeyPage(
  c: Context<AppEnv>,
  status: number,
  request: AuthRequestRecord,
  csrf: string,
  who: ConsentAgent,
  error?: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  const urls = oauthUrls(c.get("deps").config.baseUrl);
  const target = redirectTarget(request.redirect_uri);
  return page(
    c,
    status,
    NewKeyPage({
      action: urls.authorization,
      csrf,
      name: who.agent.name,
      apiKey: who.apiKey,
      redirectHost: target.shown,
      error,
    }),
    [new URL(urls.authorization).origin, target.source],
    headers,
  );
}

/**
 * The largest consent form accepted: the form carries its request sealed (a `state` of up to
 * 2,048 characters and a redirect URI of up to 2,000, in base64url).
 */
const MAX_CONSENT_FORM_BYTES = 32_768;

const EXPIRED_AFTER_CREATE =
  'The agent was created, but this authorization request has just expired. Copy the key, then connect again from your application and choose "Link an existing agent" with it.';

/** `GET /oauth/authorize`. */
export async function handleAuthorizeGet(c: Context<AppEnv>): Promise<Response> {
  const limited = rateLimited(c, "authorize");
  if (limited) return limited;
  const deps = c.get("deps");
  const v = await validateAuthorizeQuery(deps, new URL(c.req.url).searchParams);
  if (v.kind === "page") return errorPage(c, 400, v.title, v.message, {}, v.back);
  const sessionHash = await issueConsentSession(c);
  const { request, csrf } = await openAuthRequest(deps, {
    client_id: v.client.client_id,
    redirect_uri: v.redirectUri,
    ...(v.redirectUriSent ? {} : { redirect_uri_omitted: true }),
    scopes: v.scopes,
    code_challenge: v.codeChallenge,
    resource: v.resource,
    state: v.state,
    session_hash: sessionHash,
  }, v.client);
  return consentPage(c, 200, v.client, request, csrf);
}

/** `POST /oauth/authorize`: the consent form. */
export async function handleAuthorizePost(c: Context<AppEnv>): Promise<Response> {
  const limited = rateLimited(c, "authorize");
  if (limited) return limited;
  const deps = c.get("deps");
  const urls = oauthUrls(deps.config.baseUrl);
  const origin = c.req.header("origin");
  const site = c.req.header("sec-fetch-site");
  if (
    (origin !== undefined && origin !== new URL(urls.authorization).origin) ||
    (site !== undefined && site !== "same-origin" && site !== "none")
  ) {
    return errorPage(c, 403, "Request refused", "The consent form must be sent from this page.");
  }
  let form: URLSearchParams;
  try {
    if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(c.req.header("content-type") ?? "")) {
      throw new Error("content type");
    }
    form = new URLSearchParams(await readBoundedText(c.req.raw, MAX_CONSENT_FORM_BYTES));
  } catch {
    return errorPage(c, 400, "Invalid form", "The consent form could not be read.");
  }
  const mode = form.get("mode");
  const csrf = form.get("csrf") ?? "";
  const sessionHash = await postedConsentSession(c);
  // Linking an existing agent is one commit: the form is used up and the request completed
  // together, the key looked up while the form is opened (its answer counts only for a form
  // that passes). Every other mode uses up the form first.
  const linked = mode === "link"
    ? await submitLinkForm(
      deps,
      csrf,
      sessionHash,
      linkConsentAgent(deps, form.get("api_key") ?? ""),
      c.get("network"),
    )
    : null;
  const consumed = mode === "link"
    ? linked?.form ?? null
    : await consumeForm(deps, csrf, sessionHash);
  if (!consumed) {
    return errorPage(
      c,
      403,
      "This form has expired",
      "The form was already submitted, has expired, was opened in another browser, or a newer connection page was opened since.",
    );
  }
  const { request, client, form: formNumber } = consumed;
  if (!client) {
    return errorPage(c, 400, "Unknown application", UNKNOWN_CLIENT_HELP);
  }
  const name = form.get("name") ?? "";
  const basis = form.get("participation_basis") ?? "";
  // Shows the form again (the request's next form) with an error at its field; keeps what
  // was typed (never the API key).
  const again = async (
    status: number,
    error: string,
    errorField?: ConsentField,
    retryAfter?: number,
  ) =>
    consentPage(
      c,
      status,
      client,
      request,
      await consentFormToken(deps, request, formNumber + 1),
      { error, errorField, name, basis },
      retryAfter ? { "Retry-After": String(Math.ceil(retryAfter)) } : {},
    );
  // The new agent's key, with a Continue form (the request's next form) that completes the
  // request. The request, its pending client and the consent session are kept ten more
  // minutes, so the person has time to copy the key.
  const keyPage = async (
    who: ConsentAgent,
    status = 200,
    error?: string,
    retryAfter?: number,
  ) => {
    const kept = await extendAuthRequest(deps, request);
    renewConsentSession(c);
    // Even when the request has just expired the key is shown: the agent exists.
    return newKeyPage(
      c,
      status,
      kept ?? request,
      await consentFormToken(deps, kept ?? request, formNumber + 1),
      who,
      kept ? error : EXPIRED_AFTER_CREATE,
      retryAfter ? { "Retry-After": String(Math.ceil(retryAfter)) } : {},
    );
  };
  if (mode === "deny") {
    const declined = await declineAuthRequest(deps, consumed);
    if (!declined) return errorPage(c, 400, "Request expired", "The request has expired.");
    endConsentSession(c);
    const back: ErrorReturn = {
      redirectUri: declined.redirect_uri,
      state: declined.state,
      error: "access_denied",
      description: "The user denied the request.",
    };
    // An application that never completed an authorization may be anyone's redirect
    // address: the person is shown a page and a link instead of being sent there.
    if (client.activated_at === null) {
      return errorPage(
        c,
        200,
        "Connection denied",
        "You denied the request; the application was not connected.",
        {},
        back,
      );
    }
    return c.redirect(errorReturnUrl(back, urls.issuer), 303);
  }
  let who: ConsentAgent;
  try {
    if (mode === "create") {
      const parsed = registerSchema.safeParse({ name, participation_basis: basis });
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        if (issue.path[0] === "participation_basis") {
          // Said to the person at the field (which adds "Choose one below.").
          return await again(400, "No participation basis was chosen.", "participation_basis");
        }
        return await again(400, `Field "name" is invalid: ${issue.message}.`, "name");
      }
      who = await createConsentAgent(deps, request, {
        name: parsed.data.name,
        participation_basis: parsed.data.participation_basis ?? "owner_directed",
      }, c.get("network"));
      // The key is shown once, before the browser returns to the application.
      return await keyPage(who);
    } else if (mode === "continue") {
      const created = await reuseConsentAgent(deps, request, name);
      if (!created) {
        return errorPage(
          c,
          400,
          "The connection could not be completed",
          `The agent "${name}" was created, but more than ten minutes passed before Continue (or its key was revoked since). Start connecting again from your application and choose "Link an existing agent" with the key you copied.`,
        );
      }
      who = created;
    } else if (linked) {
      if ("code" in linked) return redirectWithCode(c, linked.request, linked.code);
      if ("linkError" in linked) throw linked.linkError;
      return await notCompleted(linked.completeError, null);
    } else {
      return await again(400, "Choose whether to create a new agent or link an existing one.");
    }
  } catch (e) {
    if (e instanceof BoardError) {
      const field: ConsentField | undefined = mode === "link"
        ? (e.status === 401 || e.status === 403 ? "api_key" : undefined)
        : (e.code === "NAME_TAKEN" || e.code === "INVALID_INPUT" ? "name" : undefined);
      return await again(e.status, e.message, field, e.retryAfter);
    }
    if (e instanceof TxConflictError) {
      return await again(503, "The board is busy; submit again.", undefined, 1);
    }
    throw e;
  }
  let code: string;
  try {
    ({ code } = await completeAuthRequest(deps, consumed, who, c.get("network")));
  } catch (e) {
    if (!(e instanceof BoardError) && !(e instanceof TxConflictError)) throw e;
    return await notCompleted(e, mode === "continue" ? who : null);
  }
  return redirectWithCode(c, request, code);

  /**
   * The request could not be completed: a page for a request gone, else the form again
   * (after Continue the key page again: the agent exists and is reused).
   */
  async function notCompleted(
    e: BoardError | TxConflictError,
    created: ConsentAgent | null,
  ): Promise<Response> {
    if (e instanceof BoardError && e.code === "NOT_FOUND") {
      return errorPage(c, 400, "The connection could not be completed", e.message);
    }
    const why = e instanceof BoardError ? e.message : "The board is busy.";
    const status = e instanceof BoardError ? e.status : 503;
    const retryAfter = e instanceof BoardError ? e.retryAfter : 1;
    // A daily allowance says itself when to come back; anything else may be retried now.
    const retry = status === 429 ? "" : created ? " Continue again." : " Submit the form again.";
    const message = `The connection could not be completed: ${why}${retry}`;
    if (created) return await keyPage(created, status, message, retryAfter);
    return await again(status, message, undefined, retryAfter);
  }
}

/** Ends the consent session and sends the browser back to the application with its code. */
function redirectWithCode(c: Context<AppEnv>, request: AuthRequestRecord, code: string): Response {
  endConsentSession(c);
  const url = new URL(request.redirect_uri);
  url.searchParams.set("code", code);
  if (request.state !== null) url.searchParams.set("state", request.state);
  url.searchParams.set("iss", oauthUrls(c.get("deps").config.baseUrl).issuer);
  return c.redirect(url.toString(), 303);
}
