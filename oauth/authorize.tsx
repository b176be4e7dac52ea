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
  type ConsentAgent,
  consentFormToken,
  type ConsumedForm,
  consumeForm,
  newSecret,
  OAuthRateLimited,
  openAuthRequest,
  secretHash,
  submitContinueForm,
  submitCreateForm,
  submitDenyForm,
  submitLinkForm,
  TTL,
} from "../domain/accounts/mod.ts";
import { type ConsentField, ConsentPage, ErrorPage, NewKeyPage } from "./consent_page.tsx";
import { readForm } from "./http.ts";
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
  next?: string,
): Promise<Response> {
  const link = back
    ? {
      url: errorReturnUrl(back, oauthUrls(c.get("deps").config.baseUrl).issuer),
      shown: redirectTarget(back.redirectUri).shown,
    }
    : undefined;
  return page(c, status, ErrorPage({ title, message, back: link, next }), [], extra);
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
  }, v.clientEntry);
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
    form = await readForm(c.req.raw, MAX_CONSENT_FORM_BYTES);
  } catch {
    return errorPage(c, 400, "Invalid form", "The consent form could not be read.");
  }
  try {
    return await submitConsentForm(c, form);
  } catch (e) {
    // A commit that kept conflicting changed nothing: the form the page holds still works.
    if (!(e instanceof TxConflictError)) throw e;
    return errorPage(
      c,
      503,
      "The board is busy",
      "Nothing was changed. Go back to the page and submit the form again in a moment.",
      { "Retry-After": "1" },
    );
  }
}

/** A consent form read from its body: what its `mode` asks, and the page or redirect after it. */
async function submitConsentForm(c: Context<AppEnv>, form: URLSearchParams): Promise<Response> {
  const deps = c.get("deps");
  const urls = oauthUrls(deps.config.baseUrl);
  const mode = form.get("mode");
  const csrf = form.get("csrf") ?? "";
  const sessionHash = await postedConsentSession(c);
  const network = c.get("network");
  const name = form.get("name") ?? "";
  const basis = form.get("participation_basis") ?? "";
  const expired = () =>
    errorPage(
      c,
      403,
      "This form has expired",
      "The form was already submitted, has expired, was opened in another browser, or a newer connection page was opened since.",
      {},
      undefined,
      // A form sent again after its connection was made (back, then reload) lands here too.
      "If the application has not connected, return to it and start the connection again.",
    );
  const unknownClient = () => errorPage(c, 400, "Unknown application", UNKNOWN_CLIENT_HELP);
  // Each submission is one read batch and one commit, which uses up the form
  // (domain/accounts/oauth_consent_modes.ts); a page shown after it carries the next form.
  /** The form again (the request's next form) with an error, keeping what was typed (never the key). */
  const again = async (
    used: ConsumedForm,
    status: number,
    error: string,
    errorField?: ConsentField,
    retryAfter?: number,
  ) =>
    consentPage(
      c,
      status,
      used.client!,
      used.request,
      await consentFormToken(deps, used.request, used.form + 1),
      { error, errorField, name, basis },
      retryAfter ? { "Retry-After": String(Math.ceil(retryAfter)) } : {},
    );
  /**
   * The new agent's key, with a Continue form (the request's next form, naming the agent)
   * that completes the request, which was kept ten more minutes with its pending client and
   * the consent session, so the person has time to copy the key.
   */
  const keyPage = async (
    used: ConsumedForm,
    request: AuthRequestRecord,
    who: ConsentAgent,
    failure?: BoardError | TxConflictError,
  ) => {
    renewConsentSession(c);
    const refusal = failure && refused(failure, " Continue again.");
    return newKeyPage(
      c,
      refusal?.status ?? 200,
      request,
      await consentFormToken(deps, request, used.form + 1, who.agent.id),
      who,
      refusal?.message,
      refusal?.retryAfter ? { "Retry-After": String(Math.ceil(refusal.retryAfter)) } : {},
    );
  };
  if (mode === "link") {
    const linked = await submitLinkForm(
      deps,
      csrf,
      sessionHash,
      form.get("api_key") ?? "",
      network,
    );
    if (!linked) return expired();
    if (!linked.form.client) return unknownClient();
    if ("code" in linked) return redirectWithCode(c, linked.request, linked.code);
    if ("linkError" in linked) {
      const e = linked.linkError!;
      return await again(linked.form, e.status, e.message, "api_key", e.retryAfter);
    }
    const refusal = refused(linked.completeError, " Submit the form again.");
    return await again(linked.form, refusal.status, refusal.message, undefined, refusal.retryAfter);
  }
  if (mode === "deny") {
    const denied = await submitDenyForm(deps, csrf, sessionHash);
    if (!denied) return expired();
    if (!denied.client) return unknownClient();
    const back: ErrorReturn = {
      redirectUri: denied.request.redirect_uri,
      state: denied.request.state,
      error: "access_denied",
      description: "The user denied the request.",
    };
    // An application that never completed an authorization may be anyone's redirect
    // address: the person is shown a page and a link instead of being sent there.
    if (denied.client.activated_at === null) {
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
  if (mode === "continue") {
    const continued = await submitContinueForm(deps, csrf, sessionHash, name, network);
    if (!continued) return expired();
    if ("code" in continued) return redirectWithCode(c, continued.request, continued.code);
    if ("who" in continued) {
      return await keyPage(
        continued.form,
        continued.request,
        continued.who,
        continued.completeError,
      );
    }
    if (continued.gone === "client") return unknownClient();
    return errorPage(
      c,
      400,
      "The connection could not be completed",
      `The agent "${name}" was created, but more than ten minutes passed before Continue (or its key was revoked since). Start connecting again from your application and choose "Link an existing agent" with the key you copied.`,
    );
  }
  const parsed = mode === "create"
    ? registerSchema.safeParse({ name, participation_basis: basis })
    : null;
  if (!parsed?.success) {
    // Nothing to create: the form is used up, and shown again with the reason.
    const used = await consumeForm(deps, csrf, sessionHash);
    if (!used) return expired();
    if (!used.client) return unknownClient();
    if (!parsed) {
      return await again(
        used,
        400,
        "Choose whether to create a new agent or link an existing one.",
      );
    }
    const issue = parsed.error.issues[0];
    if (issue.path[0] === "participation_basis") {
      // Said to the person at the field (which adds "Choose one below.").
      return await again(used, 400, "No participation basis was chosen.", "participation_basis");
    }
    return await again(used, 400, `Field "name" is invalid: ${issue.message}.`, "name");
  }
  const created = await submitCreateForm(deps, csrf, sessionHash, {
    name: parsed.data.name,
    participation_basis: parsed.data.participation_basis ?? "owner_directed",
  }, network);
  if (!created) return expired();
  if (!created.form.client) return unknownClient();
  if ("created" in created) return await keyPage(created.form, created.request, created.created);
  const e = created.refusal;
  if (e instanceof TxConflictError) {
    return await again(created.form, 503, "The board is busy; submit again.", undefined, 1);
  }
  if (!(e instanceof BoardError)) throw e;
  const field = e.code === "NAME_TAKEN" || e.code === "INVALID_INPUT" ? "name" : undefined;
  return await again(created.form, e.status, e.message, field, e.retryAfter);
}

/**
 * What a page says when the request could not be completed: the status, the message (with
 * `retry` unless the refusal is a daily allowance, which says itself when to come back) and
 * the seconds of `Retry-After`.
 */
function refused(e: BoardError | TxConflictError, retry: string) {
  const status = e instanceof BoardError ? e.status : 503;
  const why = e instanceof BoardError ? e.message : "The board is busy.";
  return {
    status,
    message: `The connection could not be completed: ${why}${status === 429 ? "" : retry}`,
    retryAfter: e instanceof BoardError ? e.retryAfter : 1,
  };
}

/**
 * Sends the browser back to the application with its code. The consent session is kept (it
 * names only this request, whose forms are used up, and ends with its ten minutes): a second
 * click on the button, sent while the browser was still on its way to the application, cuts
 * that redirect short and must find the same session to be answered with it again.
 */
function redirectWithCode(c: Context<AppEnv>, request: AuthRequestRecord, code: string): Response {
  const url = new URL(request.redirect_uri);
  url.searchParams.set("code", code);
  if (request.state !== null) url.searchParams.set("state", request.state);
  url.searchParams.set("iss", oauthUrls(c.get("deps").config.baseUrl).issuer);
  return c.redirect(url.toString(), 303);
}
