/**
 * The consent step (docs/oauth.md "Consent"): validated authorization requests waiting on the
 * page, the single-use forms that carry them, the account created or linked there, and the
 * authorization code that completes the request.
 *
 * Opening the page stores nothing: the request travels in the page's form, sealed (AES-GCM
 * under BOARD_SECRET) with the form's number. Submitting a form records, under the request,
 * the last form number used (so each form works once, and an older one of the same request
 * never again) and, at the end, that the request was completed or declined.
 *
 * Each authorization request gets a fresh consent session: a random cookie the server
 * issues when the page opens (replacing any earlier one; a cookie the server did not
 * issue is never adopted), whose hash the request carries. If creating an agent succeeds
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
import { transact, type Tx } from "../../kv/tx.ts";
import { clientIsLive, type ClientRecord } from "./oauth_clients.ts";
import { issueCode } from "./oauth_grants.ts";
import { countNetworkNewClient, networkNewClientsKey } from "./oauth_rate_limits.ts";
import { newSecret, TTL } from "./oauth_tokens.ts";

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

/** What the forms of one request have used up (`keys.oauthRequestUses`). */
interface RequestUse {
  /** The number of the last form submitted (forms are numbered from 0 in the order shown). */
  form: number;
  /** Set once the request was completed (a code issued) or declined. */
  ended?: true;
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
    oauthRequestUses: RequestUse;
    oauthConsentAccounts: ConsentAccountRecord;
  }
}

/** Associated data of a sealed consent form: it opens as nothing else. */
const FORM_CONTEXT = "consent-form";

/** A sealed form is far larger than this only when it was not made here. */
const MAX_FORM_TOKEN = 24_000;

/**
 * The hidden `csrf` value of form number `form` of `request`: the request and the number,
 * sealed. Stores nothing.
 */
export async function consentFormToken(
  deps: Deps,
  request: AuthRequestRecord,
  form: number,
): Promise<string> {
  const sealed = await sealCredential(deps, FORM_CONTEXT, JSON.stringify({ r: request, n: form }));
  return `${sealed.iv}.${sealed.ct}`;
}

/**
 * The request and form number a `csrf` value carries, when it was sealed here, the request
 * has not expired, and it belongs to the consent session `sessionHash`; else null.
 */
async function openFormToken(
  deps: Deps,
  token: string,
  sessionHash: string | null,
): Promise<{ request: AuthRequestRecord; form: number } | null> {
  const [iv, ct, extra] = token.split(".");
  if (!sessionHash || !iv || !ct || extra !== undefined || token.length > MAX_FORM_TOKEN) {
    return null;
  }
  const plain = await openCredential(deps, FORM_CONTEXT, { v: 1, iv, ct });
  if (plain === null) return null;
  const { r: request, n: form } = JSON.parse(plain) as { r: AuthRequestRecord; n: number };
  if (request.expires_at <= deps.clock.now()) return null;
  if (!timingSafeEqual(request.session_hash, sessionHash)) return null;
  return { request, form };
}

/** Records in `tx` that form `form` of `request` was used (and, with `ended`, the request). */
function useForm(tx: Tx, request: AuthRequestRecord, form: number, now: number, ended = false) {
  tx.set(
    keys.oauthRequestUses(request.id),
    ended ? { form, ended: true } : { form },
    { expireIn: Math.max(1, request.expires_at - now) * 1000 },
  );
}

/** Whether form `form` may still be submitted, given what its request has used (`use`). */
function formUnused(use: RequestUse | null, form: number): boolean {
  return !use?.ended && (use === null || use.form < form);
}

/**
 * A validated request and its first form. Stores nothing, except that a pending client is
 * kept longer for it when needed (`keepPendingClient`; `seen` is the client as the
 * request's validation read it, read again with a check only then: a client's expiry never
 * moves earlier).
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
  if (pendingUntil(seen, request.expires_at, now) !== null) {
    await transact(deps.kv, async (tx) => {
      const client = (await tx.get(keys.oauthClients(request.client_id))).value;
      keepPendingClient(tx, client, request.expires_at, now);
    });
  }
  return { request, csrf: await consentFormToken(deps, request, 0) };
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
 * minutes from now, at least), together with its pending client. Returns the request as its
 * next form should carry it, or null when it has expired or was completed meanwhile.
 */
export async function extendAuthRequest(
  deps: Deps,
  request: AuthRequestRecord,
): Promise<AuthRequestRecord | null> {
  const { value } = await transact(deps.kv, async (tx) => {
    const now = deps.clock.now();
    const read = await tx.getNamed({
      use: keys.oauthRequestUses(request.id),
      client: keys.oauthClients(request.client_id),
    });
    if (read.use.value?.ended || request.expires_at <= now) return null;
    const until = Math.max(request.expires_at, now + TTL.consentSession);
    if (until === request.expires_at) return request;
    keepPendingClient(tx, read.client.value, until, now);
    return { ...request, expires_at: until };
  });
  return value;
}

/** A consent form's submission that passed its checks: its request, number and client. */
export interface ConsumedForm {
  request: AuthRequestRecord;
  /** The form's number: the page shown after it carries the next one. */
  form: number;
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
 * Uses up form `form` of `request` inside `tx`: reads what the request has used with its
 * client and, when `link` is given, that account and its network's count of new clients,
 * in one batch; records the form as used and answers the form with its client (null when
 * not live), the account and the count, or null when this form or a later one of the request
 * was already submitted or the request has ended.
 */
async function useUpForm(
  tx: Tx,
  opened: { request: AuthRequestRecord; form: number },
  now: number,
  link?: { agentId: string | null; network: string },
): Promise<{ form: ConsumedForm; agent: Agent | null; newClients: number | null } | null> {
  const { request, form } = opened;
  const read = await tx.getNamed({
    use: keys.oauthRequestUses(request.id),
    client: keys.oauthClients(request.client_id),
    agent: link?.agentId ? keys.agents(link.agentId) : null,
    newClients: link ? networkNewClientsKey(link.network, now) : null,
  });
  if (!formUnused(read.use.value, form)) return null;
  useForm(tx, request, form, now);
  const client = read.client.value;
  return {
    form: { request, form, client: clientIsLive(client, now) ? client : null },
    agent: read.agent?.value ?? null,
    newClients: read.newClients?.value ?? null,
  };
}

/**
 * Uses up a submitted form (one read batch, one commit) and returns the authorization
 * request it carries with its client, or null when the form was not made here, was used
 * already (it or a later form of its request), has expired, its request has ended, or it
 * belongs to another browser session.
 */
export async function consumeForm(
  deps: Deps,
  csrf: string,
  sessionHash: string | null,
): Promise<ConsumedForm | null> {
  const opened = await openFormToken(deps, csrf, sessionHash);
  if (!opened) return null;
  const { value } = await transact(
    deps.kv,
    async (tx) => (await useUpForm(tx, opened, deps.clock.now()))?.form ?? null,
  );
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
 * has already matched the request's consent session (`consumeForm`).
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

/** Refusal of a request that has expired or ended (completed or declined). */
function requestGone(): BoardError {
  return new BoardError(
    "NOT_FOUND",
    "This authorization request has expired or was already completed; start again from your application.",
  );
}

/**
 * Completes the request of a used-up form given from `network`: checks the request has not
 * ended, the client and agent are still valid, counts a never-activated client against the
 * network's new clients of the day (`countNetworkNewClient`), ends the request and stores an
 * authorization code bound to client, redirect URI, PKCE challenge, resource and scopes.
 * What the request used, its client, the agent and the count are read in one batch. Returns
 * the code.
 */
export async function completeAuthRequest(
  deps: Deps,
  consumed: Pick<ConsumedForm, "request" | "form">,
  who: ConsentAgent,
  network: string,
): Promise<{ code: string; request: AuthRequestRecord }> {
  const { request, form } = consumed;
  const credential = await sealCredential(deps, `agent:${who.agent.id}`, who.apiKey);
  const grantId = deps.newId();
  const { value } = await transact(deps.kv, async (tx) => {
    const now = deps.clock.now();
    const read = await tx.getNamed({
      use: keys.oauthRequestUses(request.id),
      client: keys.oauthClients(request.client_id),
      agent: keys.agents(who.agent.id),
      newClients: networkNewClientsKey(network, now),
    });
    const client = read.client.value;
    if (read.use.value?.ended || request.expires_at <= now) throw requestGone();
    if (!clientIsLive(client, now)) {
      throw new BoardError("NOT_FOUND", "The application's registration has expired.");
    }
    if (read.agent.value?.status !== "active") {
      throw new BoardError("UNAUTHORIZED", "The agent's API key has been revoked.");
    }
    countNetworkNewClient(tx, deps, network, client, read.newClients.value, now);
    useForm(tx, request, Math.max(form, read.use.value?.form ?? 0), now, true);
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
 * `mode=link` in one commit: uses up the form (as `consumeForm`) and, when `who` (the key's
 * agent, looked up meanwhile) resolved, completes the request for it (as
 * `completeAuthRequest`, from `network`). Reads what the request used, its client, the agent
 * and the network's count in one batch. Answers null when the form does not pass; otherwise
 * the consumed form with the code, or with why the request was not completed (the form is
 * used up all the same).
 */
export async function submitLinkForm(
  deps: Deps,
  csrf: string,
  sessionHash: string | null,
  who: Promise<ConsentAgent>,
  network: string,
): Promise<LinkedForm | null> {
  const [opened, agentFound] = await Promise.all([
    openFormToken(deps, csrf, sessionHash),
    Promise.allSettled([who]).then(([r]) => r),
  ]);
  if (!opened) return null;
  const linked = agentFound.status === "fulfilled" ? agentFound.value : null;
  const grantId = deps.newId();
  const { value } = await transact(deps.kv, async (tx): Promise<LinkedForm | null> => {
    const now = deps.clock.now();
    const used = await useUpForm(tx, opened, now, { agentId: linked?.agent.id ?? null, network });
    if (!used) return null;
    const { form, agent } = used;
    const request = form.request;
    if (!form.client) return { form, linkError: null };
    if (agentFound.status === "rejected") return { form, linkError: agentFound.reason };
    if (!linked || agent?.status !== "active") {
      return {
        form,
        completeError: new BoardError("UNAUTHORIZED", "The agent's API key has been revoked."),
      };
    }
    try {
      countNetworkNewClient(tx, deps, network, form.client, used.newClients, now);
    } catch (e) {
      if (e instanceof BoardError) return { form, completeError: e };
      throw e;
    }
    useForm(tx, request, form.form, now, true);
    const credential = await sealCredential(deps, `agent:${linked.agent.id}`, linked.apiKey);
    const code = await codeFor(deps, tx, now, request, linked.agent.id, grantId, credential);
    return { form, code, request };
  });
  return value;
}

/** Ends the request of a used-up form the person declined; returns it, or null when gone. */
export async function declineAuthRequest(
  deps: Deps,
  consumed: Pick<ConsumedForm, "request" | "form">,
): Promise<AuthRequestRecord | null> {
  const { request, form } = consumed;
  const { value } = await transact(deps.kv, async (tx) => {
    const now = deps.clock.now();
    const use = (await tx.get(keys.oauthRequestUses(request.id))).value;
    if (use?.ended || request.expires_at <= now) return null;
    useForm(tx, request, Math.max(form, use?.form ?? 0), now, true);
    return request;
  });
  return value;
}
