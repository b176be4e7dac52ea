/** OAuth test helpers: PKCE, client registration, the consent form, token requests. */
import assert from "node:assert/strict";
import { base64url } from "../domain/accounts/mod.ts";
import type { TestBoard } from "./helpers.ts";

/** What the helpers send requests through: a test board, or an instance of a process cluster. */
export type Requester = Pick<TestBoard, "request">;

export const BASE = "http://board.test";
export const RESOURCE = `${BASE}/mcp`;
export const REDIRECT = "http://127.0.0.1:7777/callback";

/** A fresh PKCE pair (S256). */
export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return { verifier, challenge: base64url(new Uint8Array(digest)) };
}

/** POSTs JSON client metadata to the registration endpoint (or the MCP default `path`). */
export function registerRequest(
  board: Requester,
  metadata: Record<string, unknown>,
  network?: string,
  path = "/oauth/register",
): Promise<Response> {
  return board.request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(metadata),
  }, network);
}

/** Registers a client and returns its registration response. */
export async function registerClient(
  board: Requester,
  metadata: Record<string, unknown> = {},
): Promise<
  { client_id: string; scope: string; redirect_uris: string[] } & Record<string, unknown>
> {
  const res = await registerRequest(board, {
    client_name: "Test client",
    redirect_uris: [REDIRECT],
    ...metadata,
  });
  const body = await res.json();
  assert.equal(res.status, 201, JSON.stringify(body));
  return body;
}

/** The authorization URL path for a client (overrides replace or, with null, drop parameters). */
export function authorizePath(
  clientId: string,
  challenge: string,
  overrides: Record<string, string | null> = {},
): string {
  const params: Record<string, string | null> = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: RESOURCE,
    scope: "board:read board:write",
    state: "state-123",
    ...overrides,
  };
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null) q.set(k, v);
  return `/oauth/authorize?${q}`;
}

/** A consent page as a browser sees it: status, html, csrf and the consent cookie. */
export interface ConsentPage {
  res: Response;
  html: string;
  csrf: string | null;
  cookie: string | null;
}

/** Opens the consent page; `cookie` continues an existing browser session. */
export async function openConsent(
  board: Requester,
  path: string,
  cookie?: string | null,
): Promise<ConsentPage> {
  const res = await board.request(path, {
    headers: { accept: "text/html", ...(cookie ? { cookie } : {}) },
  });
  const html = await res.text();
  const setCookie = res.headers.get("set-cookie");
  const fresh = setCookie ? setCookie.split(";")[0] : null;
  return {
    res,
    html,
    csrf: html.match(/name="csrf" value="([^"]+)"/)?.[1] ?? null,
    cookie: fresh ?? cookie ?? null,
  };
}

/**
 * Submits the consent form as a browser would, and for `mode=create` also presses Continue on
 * the page that shows the new key (as a person does once the key is copied): the answer is
 * the one to the Continue form, or the create form's own answer when it showed no key page.
 */
export async function submitConsent(
  board: Requester,
  fields: Record<string, string>,
  cookie: string | null,
  headers: Record<string, string> = {},
): Promise<Response> {
  const res = await submitConsentForm(board, fields, cookie, headers);
  if (fields.mode !== "create" || res.status !== 200) return res;
  const html = await res.clone().text();
  const key = newKeyFromPage(html);
  if (!key) return res;
  await res.body?.cancel();
  return await submitConsentForm(
    board,
    {
      mode: "continue",
      name: html.match(/name="name" value="([^"]+)"/)![1],
      csrf: html.match(/name="csrf" value="([^"]+)"/)![1],
    },
    cookie,
    headers,
  );
}

/** The API key a "copy your new agent's API key" page shows, or null. */
export function newKeyFromPage(html: string): string | null {
  return html.match(/id="new-api-key" type="text" readonly value="([^"]+)"/)?.[1] ?? null;
}

/** Submits one consent form as a browser would (form body, session cookie, same origin). */
export function submitConsentForm(
  board: Requester,
  fields: Record<string, string>,
  cookie: string | null,
  headers: Record<string, string> = {},
): Promise<Response> {
  return board.request("/oauth/authorize", {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: BASE,
      ...(cookie ? { cookie } : {}),
      ...headers,
    },
    body: new URLSearchParams(fields).toString(),
  });
}

let names = 0;
/** A fresh valid agent name. */
export function agentName(): string {
  return `oauth-agent-${(names++).toString(36)}-${crypto.randomUUID().slice(0, 6)}`;
}

/** Runs GET authorize + consent (create mode by default) and returns the code from the redirect. */
export async function authorizeCode(
  board: Requester,
  clientId: string,
  challenge: string,
  fields: Record<string, string> = { mode: "create", name: agentName() },
  overrides: Record<string, string | null> = {},
): Promise<{ code: string; location: URL }> {
  const page = await openConsent(board, authorizePath(clientId, challenge, overrides));
  assert.equal(page.res.status, 200, page.html);
  const res = await submitConsent(board, {
    participation_basis: "owner_directed",
    ...fields,
    csrf: page.csrf!,
  }, page.cookie);
  assert.equal(res.status, 303, await res.clone().text());
  const location = new URL(res.headers.get("location")!);
  const code = location.searchParams.get("code");
  assert.ok(code, location.toString());
  return { code, location };
}

/** POSTs a form to the token endpoint (or the MCP default `/token` given as `path`). */
export function tokenRequest(
  board: Requester,
  fields: Record<string, string>,
  network?: string,
  path = "/oauth/token",
): Promise<Response> {
  return board.request(path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  }, network);
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
  token_type: string;
}

/** The token request fields exchanging `code` (for REDIRECT and RESOURCE), with `extra`. */
export function codeGrant(
  clientId: string,
  code: string,
  verifier: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    grant_type: "authorization_code",
    client_id: clientId,
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    resource: RESOURCE,
    ...extra,
  };
}

/** The token request fields refreshing `refreshToken` for `clientId`, with `extra`. */
export function refreshGrant(
  clientId: string,
  refreshToken: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    grant_type: "refresh_token",
    client_id: clientId,
    refresh_token: refreshToken,
    ...extra,
  };
}

/** POSTs a refresh of `refreshToken` for `clientId` to the token endpoint. */
export function refresh(
  board: Requester,
  clientId: string,
  refreshToken: string,
): Promise<Response> {
  return tokenRequest(board, refreshGrant(clientId, refreshToken));
}

/** Exchanges a code (asserting success); `extra` replaces or adds token request fields. */
export async function exchange(
  board: Requester,
  clientId: string,
  code: string,
  verifier: string,
  extra: Record<string, string> = {},
): Promise<Tokens> {
  const res = await tokenRequest(board, codeGrant(clientId, code, verifier, extra));
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

/** Registration → consent → tokens for a new agent; returns everything a test needs. */
export async function connect(
  board: Requester,
  fields?: Record<string, string>,
): Promise<{ clientId: string; tokens: Tokens }> {
  const client = await registerClient(board);
  const { verifier, challenge } = await pkce();
  const { code } = await authorizeCode(board, client.client_id, challenge, fields);
  return {
    clientId: client.client_id,
    tokens: await exchange(board, client.client_id, code, verifier),
  };
}

/** Tokens of a client registered for `scope` only, for a new agent or `fields` (link mode). */
export async function scopedTokens(
  board: Requester,
  scope: string,
  fields?: Record<string, string>,
): Promise<Tokens> {
  const client = await registerClient(board, { scope });
  const { verifier, challenge } = await pkce();
  const { code } = await authorizeCode(board, client.client_id, challenge, fields, { scope });
  return await exchange(board, client.client_id, code, verifier);
}

/** GET /oauth/whoami with a bearer token. */
export function whoami(board: Requester, token?: string): Promise<Response> {
  return board.request("/oauth/whoami", {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
}

/** A registered client that has completed one authorization (its errors are redirected). */
export async function activatedClient(
  board: Requester,
  meta: Record<string, unknown> = {},
): Promise<{ client_id: string }> {
  const client = await registerClient(board, meta);
  const { verifier, challenge } = await pkce();
  const scope: Record<string, string> = typeof meta.scope === "string" ? { scope: meta.scope } : {};
  const { code } = await authorizeCode(board, client.client_id, challenge, undefined, scope);
  await exchange(board, client.client_id, code, verifier);
  return client;
}
