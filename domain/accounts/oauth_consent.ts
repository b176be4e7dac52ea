/**
 * The consent step (docs/oauth.md "Consent"): validated authorization requests waiting on the
 * page, their single-use CSRF tokens, the account created or linked there, and the
 * authorization code that completes the request.
 *
 * Each authorization request gets a fresh consent session: a random cookie the server
 * issues when the page opens (replacing any earlier one; a cookie the server did not
 * issue is never adopted), whose hash the request records. If creating an agent succeeds
 * but completing the request fails, submitting the same name again for the same request
 * (the form shown again, same session) within ten minutes reuses that account instead of
 * hitting "name taken"; the reuse record is keyed by the request, so no other request or
 * session can reach it.
 */
import type { Agent, ParticipationBasis } from "./agent_record.ts";
import { findAgentByKey } from "./agents.ts";
import { registerFromNetwork } from "./registration_limits.ts";
import { openCredential, sealCredential, type SealedCredential } from "./secret.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { timingSafeEqual } from "../hashing.ts";
import { keys } from "../../kv/keys.ts";
import type { ValueOf } from "../../kv/key_values.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import { clientIsLive, type ClientRecord } from "./oauth_clients.ts";
import { issueCode } from "./oauth_grants.ts";
import { newSecret, secretHash, TTL } from "./oauth_tokens.ts";

/** An authorization request that passed every check of `GET /oauth/authorize`. */
export interface AuthRequestRecord {
  id: string;
  client_id: string;
  redirect_uri: string;
  /** True when the request left `redirect_uri` out (`redirect_uri`: the one registered). */
  redirect_uri_omitted?: true;
  scopes: string[];
  code_challenge: string;
  resource: string;
  state: string | null;
  /** Hash of the consent cookie issued to the browser that opened the page. */
  session_hash: string;
  created_at: number;
  expires_at: number;
}

interface CsrfRecord {
  request_id: string;
  /**
   * The request's client, so that the form's submission reads the request and the client in
   * one batch. Absent on tokens stored before it was kept (the client is then read after).
   */
  client_id?: string;
  expires_at: number;
}

/** The account created on the consent page, kept ten minutes for a retry. */
interface ConsentAccountRecord {
  client_id: string;
  /** The new agent's API key, sealed with associated data naming this request and name. */
  credential: SealedCredential;
  expires_at: number;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    oauthAuthRequests: AuthRequestRecord;
    oauthCsrfTokens: CsrfRecord;
    oauthConsentAccounts: ConsentAccountRecord;
  }
}

/**
 * Stores a validated request and its first CSRF token; returns both handles. `seen` is the
 * client as the request's validation read it: the commit reads the client again (checked)
 * only when a pending client must be kept longer for this request (`keepPendingClient`);
 * otherwise it reads nothing (a client's expiry never moves earlier, and the keys it writes
 * are new random ones).
 */
export async function openAuthRequest(
  deps: Deps,
  fields: Omit<AuthRequestRecord, "id" | "created_at" | "expires_at">,
  seen: ClientRecord,
): Promise<{ request: AuthRequestRecord; csrf: string }> {
  const now = deps.clock.now();
  const request: AuthRequestRecord = {
    ...fields,
    id: newSecret(),
    created_at: now,
    expires_at: now + TTL.authRequest,
  };
  const csrf = newSecret();
  const csrfKey = keys.oauthCsrfTokens(await secretHash("csrf", csrf));
  await transact(deps.kv, async (tx) => {
    if (pendingUntil(seen, request.expires_at, now) !== null) {
      const client = (await tx.get(keys.oauthClients(request.client_id))).value;
      keepPendingClient(tx, client, request.expires_at, now);
    }
    tx.set(keys.oauthAuthRequests(request.id), request, { expireIn: TTL.authRequest * 1000 });
    tx.set(
      csrfKey,
      {
        request_id: request.id,
        client_id: request.client_id,
        expires_at: request.expires_at,
      } satisfies CsrfRecord,
      { expireIn: TTL.authRequest * 1000 },
    );
  });
  return { request, csrf };
}

/**
 * How long a pending client must be kept for a request ending at `requestEnd` (until the
 * request's end plus a code's lifetime), or null when it need not be extended (not live,
 * activated, or kept long enough already).
 */
function pendingUntil(
  client: ClientRecord | null,
  requestEnd: number,
  now: number,
): number | null {
  const until = requestEnd + TTL.code;
  if (!clientIsLive(client, now) || client.activated_at !== null || client.expires_at >= until) {
    return null;
  }
  return until;
}

/**
 * A registration that never completed an authorization expires an hour after it was made;
 * while a person has a consent page of it open, it is kept until the request expires plus
 * the lifetime of a code, so the person can always finish (docs/oauth.md "Registration").
 */
function keepPendingClient(
  tx: Tx,
  client: ClientRecord | null,
  requestEnd: number,
  now: number,
): void {
  const until = pendingUntil(client, requestEnd, now);
  if (until === null || client === null) return;
  tx.set(keys.oauthClients(client.client_id), { ...client, expires_at: until }, {
    expireIn: (until - now) * 1000,
  });
}

/**
 * Keeps a request open for the time a person needs on the page that shows a new key (ten
 * minutes from now, at least), together with its pending client. Returns the request as
 * now stored, or null when it has expired or was completed meanwhile.
 */
export async function extendAuthRequest(
  deps: Deps,
  request: AuthRequestRecord,
): Promise<AuthRequestRecord | null> {
  const { value } = await transact(deps.kv, async (tx) => {
    const now = deps.clock.now();
    const [requestEntry, clientEntry] = await tx.getMany([
      keys.oauthAuthRequests(request.id),
      keys.oauthClients(request.client_id),
    ]);
    const stored = requestEntry.value;
    if (!stored || stored.expires_at <= now) return null;
    const until = Math.max(stored.expires_at, now + TTL.consentSession);
    if (until === stored.expires_at) return stored;
    const updated = { ...stored, expires_at: until };
    keepPendingClient(tx, clientEntry.value, until, now);
    tx.set(keys.oauthAuthRequests(request.id), updated, { expireIn: (until - now) * 1000 });
    return updated;
  });
  return value;
}

/** A fresh CSRF token for a request whose page is shown again (after a form error). */
export async function newCsrfToken(deps: Deps, request: AuthRequestRecord): Promise<string> {
  const csrf = newSecret();
  const ttl = Math.max(1, request.expires_at - deps.clock.now());
  await deps.kv.set(
    keys.oauthCsrfTokens(await secretHash("csrf", csrf)),
    {
      request_id: request.id,
      client_id: request.client_id,
      expires_at: request.expires_at,
    } satisfies CsrfRecord,
    { expireIn: ttl * 1000 },
  );
  return csrf;
}

/** A consent form's submission that passed its CSRF check: its request and its client. */
interface ConsumedForm {
  request: AuthRequestRecord;
  /** The request's client while its registration is live, else null. */
  client: ClientRecord | null;
}

/** Stages the authorization code that completes `request` for the agent `agentId`. */
function codeFor(
  deps: Deps,
  tx: Tx,
  now: number,
  request: AuthRequestRecord,
  agentId: string,
  grantId: string,
  credential: SealedCredential,
) {
  return issueCode(deps, tx, now, {
    client_id: request.client_id,
    redirect_uri: request.redirect_uri,
    ...(request.redirect_uri_omitted ? { redirect_uri_omitted: true as const } : {}),
    code_challenge: request.code_challenge,
    resource: request.resource,
    scopes: request.scopes,
    agent_id: agentId,
    grant_id: grantId,
    credential,
  });
}

/**
 * Consumes the CSRF token `hash` inside `tx` (its `entry` read already): the authorization
 * request it names for this browser session and that request's client (null when not live),
 * read in one batch with the account `agentId` when given; null when the token is unknown,
 * used, expired, or was issued to another browser session.
 */
async function openTokenForm(
  tx: Tx,
  entry: Deno.KvEntryMaybe<ValueOf<ReturnType<typeof keys.oauthCsrfTokens>>>,
  hash: string,
  sessionHash: string,
  now: number,
  agentId: string | null | undefined,
): Promise<{ form: ConsumedForm; agent: Agent | null } | null> {
  if (!entry.value) return null;
  tx.delete(keys.oauthCsrfTokens(hash));
  if (entry.value.expires_at <= now) return null;
  const named = entry.value.client_id;
  const read = await tx.getNamed({
    request: keys.oauthAuthRequests(entry.value.request_id),
    client: named === undefined ? null : keys.oauthClients(named),
    agent: agentId ? keys.agents(agentId) : null,
  });
  const request = read.request.value;
  if (
    !request || request.expires_at <= now || !timingSafeEqual(request.session_hash, sessionHash)
  ) return null;
  const client = read.client && named === request.client_id
    ? read.client.value
    : (await tx.get(keys.oauthClients(request.client_id))).value;
  return {
    form: { request, client: clientIsLive(client, now) ? client : null },
    agent: read.agent?.value ?? null,
  };
}

/**
 * Consumes a CSRF token (read and deleted in one commit) and returns the authorization
 * request it is bound to with its client (read together, as the token names both), or null
 * when the token is unknown, used, expired, or was issued to another browser session.
 */
export async function consumeCsrfToken(
  deps: Deps,
  csrf: string,
  sessionHash: string | null,
): Promise<ConsumedForm | null> {
  if (!csrf || csrf.length > 100 || !sessionHash) return null;
  const hash = await secretHash("csrf", csrf);
  const { value } = await transact(deps.kv, async (tx) => {
    const now = deps.clock.now();
    const entry = await tx.get(keys.oauthCsrfTokens(hash));
    return (await openTokenForm(tx, entry, hash, sessionHash, now, null))?.form ?? null;
  });
  return value;
}

/** The agent a consent resolves to, with its API key (kept only in memory, then sealed). */
export interface ConsentAgent {
  agent: Agent;
  apiKey: string;
}

/**
 * `mode=create`: registers a new agent (counted against the network's registration
 * allowance like `POST /v1/agents`), or — when this authorization request created an
 * agent with this name less than ten minutes ago — returns that agent again. The caller
 * has already matched the request's consent session (`consumeCsrfToken`).
 */
export async function createConsentAgent(
  deps: Deps,
  request: AuthRequestRecord,
  input: { name: string; participation_basis: ParticipationBasis },
  network: string,
): Promise<ConsentAgent> {
  const prior = await reuseConsentAgent(deps, request, input.name);
  if (prior) return prior;
  const retryKey = keys.oauthConsentAccounts(request.id, input.name);
  const aad = `consent:${request.id}:${input.name}`;
  return await registerFromNetwork(deps, input, network, async (tx, apiKey) => {
    const now = deps.clock.now();
    tx.set(
      retryKey,
      {
        client_id: request.client_id,
        credential: await sealCredential(deps, aad, apiKey),
        expires_at: now + TTL.consentSession,
      } satisfies ConsentAccountRecord,
      { expireIn: TTL.consentSession * 1000 },
    );
  });
}

/**
 * The agent this authorization request created with this name less than ten minutes ago
 * (still active, still holding the key it was created with), or null. Used by a retry of
 * `mode=create` and by `mode=continue` (the button under the new key).
 */
export async function reuseConsentAgent(
  deps: Deps,
  request: AuthRequestRecord,
  name: string,
): Promise<ConsentAgent | null> {
  if (!name || name.length > 100) return null;
  const aad = `consent:${request.id}:${name}`;
  const prior = (await deps.kv.get(keys.oauthConsentAccounts(request.id, name)))
    .value;
  if (!prior || prior.expires_at <= deps.clock.now() || prior.client_id !== request.client_id) {
    return null;
  }
  const apiKey = await openCredential(deps, aad, prior.credential);
  const agent = apiKey ? await findAgentByKey(deps, apiKey) : null;
  return apiKey && agent && agent.name === name ? { agent, apiKey } : null;
}

/** `mode=link`: the active agent holding `apiKey` (the moderator key is an unknown key here). */
export async function linkConsentAgent(deps: Deps, apiKey: string): Promise<ConsentAgent> {
  const agent = await findAgentByKey(deps, apiKey);
  if (!agent) throw new BoardError("UNAUTHORIZED", "The API key is invalid or has been revoked.");
  return { agent, apiKey };
}

/**
 * Completes a request: consumes it (single use), checks the client and agent are still
 * valid, and stores an authorization code bound to client, redirect URI, PKCE
 * challenge, resource and scopes. The request, its client and the agent are read in one
 * batch. Returns the code.
 */
export async function completeAuthRequest(
  deps: Deps,
  pending: Pick<AuthRequestRecord, "id" | "client_id">,
  who: ConsentAgent,
): Promise<{ code: string; request: AuthRequestRecord }> {
  const credential = await sealCredential(deps, `agent:${who.agent.id}`, who.apiKey);
  const grantId = deps.newId();
  const { value } = await transact(deps.kv, async (tx) => {
    const now = deps.clock.now();
    const read = await tx.getNamed({
      request: keys.oauthAuthRequests(pending.id),
      client: keys.oauthClients(pending.client_id),
      agent: keys.agents(who.agent.id),
    });
    const request = read.request.value;
    if (!request || request.expires_at <= now || request.client_id !== pending.client_id) {
      throw new BoardError(
        "NOT_FOUND",
        "This authorization request has expired or was already completed; start again from your application.",
      );
    }
    if (!clientIsLive(read.client.value, now)) {
      throw new BoardError("NOT_FOUND", "The application's registration has expired.");
    }
    if (read.agent.value?.status !== "active") {
      throw new BoardError("UNAUTHORIZED", "The agent's API key has been revoked.");
    }
    tx.delete(keys.oauthAuthRequests(pending.id));
    const code = await codeFor(deps, tx, now, request, who.agent.id, grantId, credential);
    return { code, request };
  });
  return value;
}

/** What a consent form that links an existing agent came to (`submitLinkForm`). */
type LinkedForm =
  | { form: ConsumedForm; code: string; request: AuthRequestRecord }
  /** The key did not resolve to an active agent (`linkConsentAgent`'s refusal). */
  | { form: ConsumedForm; linkError: unknown }
  /** The agent or the request changed meanwhile: the request was not completed. */
  | { form: ConsumedForm; completeError: BoardError };

/**
 * `mode=link` in one commit: consumes the form's CSRF token (as `consumeCsrfToken`) and, when
 * `who` (the key's agent, looked up meanwhile) resolved, completes the request for it (as
 * `completeAuthRequest`). Reads the token and then the request, its client and the agent in one
 * batch. Answers null when the token does not pass; otherwise the consumed form with the code,
 * or with why the request was not completed (the token is used up all the same).
 */
export async function submitLinkForm(
  deps: Deps,
  csrf: string,
  sessionHash: string | null,
  who: Promise<ConsentAgent>,
): Promise<LinkedForm | null> {
  const resolved = Promise.allSettled([who]).then(([r]) => r);
  if (!csrf || csrf.length > 100 || !sessionHash) {
    await resolved;
    return null;
  }
  const hash = await secretHash("csrf", csrf);
  const grantId = deps.newId();
  const { value } = await transact(deps.kv, async (tx): Promise<LinkedForm | null> => {
    const now = deps.clock.now();
    const [entry, agentFound] = await Promise.all([tx.get(keys.oauthCsrfTokens(hash)), resolved]);
    const linked = agentFound.status === "fulfilled" ? agentFound.value : null;
    const opened = await openTokenForm(tx, entry, hash, sessionHash, now, linked?.agent.id);
    if (!opened) return null;
    const { form, agent } = opened;
    const request = form.request;
    if (!form.client) return { form, linkError: null };
    if (agentFound.status === "rejected") return { form, linkError: agentFound.reason };
    if (!linked || agent?.status !== "active") {
      return {
        form,
        completeError: new BoardError("UNAUTHORIZED", "The agent's API key has been revoked."),
      };
    }
    tx.delete(keys.oauthAuthRequests(request.id));
    const credential = await sealCredential(deps, `agent:${linked.agent.id}`, linked.apiKey);
    const code = await codeFor(deps, tx, now, request, linked.agent.id, grantId, credential);
    return { form, code, request };
  });
  return value;
}

/** Ends a request the user declined; returns it (for the error redirect) or null. */
export async function declineAuthRequest(
  deps: Deps,
  requestId: string,
): Promise<AuthRequestRecord | null> {
  const { value } = await transact(deps.kv, async (tx) => {
    const entry = await tx.get(keys.oauthAuthRequests(requestId));
    if (!entry.value || entry.value.expires_at <= deps.clock.now()) return null;
    tx.delete(keys.oauthAuthRequests(requestId));
    return entry.value;
  });
  return value;
}
