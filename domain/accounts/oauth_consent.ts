/**
 * The consent step's forms (docs/oauth.md "Consent"): validated authorization requests
 * waiting on the page, the single-use forms that carry them, and the pieces the submissions
 * (domain/accounts/oauth_consent_modes.ts) commit with: using up a form, keeping a request
 * and its pending client longer, the authorization code.
 *
 * Opening the page stores nothing: the request travels in the page's form, sealed (AES-GCM
 * under BOARD_SECRET) with the form's number. Submitting a form records, under the request,
 * the last form number used (so each form works once, and an older one of the same request
 * never again) and, at the end, that the request was completed or declined.
 *
 * Each authorization request gets a fresh consent session: a random cookie the server
 * issues when the page opens (replacing any earlier one; a cookie the server did not
 * issue is never adopted), whose hash the request carries.
 */
import type { Agent } from "./agent_record.ts";
import { openCredential, sealCredential, type SealedCredential } from "./secret.ts";
import type { Deps } from "../deps.ts";
import { timingSafeEqual } from "../hashing.ts";
import { keys } from "../../kv/keys.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import { clientIsLive, type ClientRecord } from "./oauth_clients.ts";
import { issueCode } from "./oauth_grants.ts";
import { networkNewClientsKey } from "./oauth_rate_limits.ts";
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

/** What the forms of one request have used up (`keys.oauthRequestUses`). */
interface RequestUse {
  /** The number of the last form submitted (forms are numbered from 0 in the order shown). */
  form: number;
  /** Set once the request was completed (a code issued) or declined. */
  ended?: true;
  /** The completion by that form: its code (sealed), for the form sent twice (`resentCode`). */
  completed?: Completion;
}

/** What completing a request issued: the agent, the code sealed for the request, when. */
interface Completion {
  agent_id: string;
  code: SealedCredential;
  at: number;
}

/** The account created on the consent page, kept ten minutes for a retry. */
export interface ConsentAccountRecord {
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

/** Associated data of a sealed consent form (sealed under the forms' own key). */
const FORM_CONTEXT = "consent-form";
/** The key consent forms are sealed under (derived from BOARD_SECRET for forms only). */
const FORM_PURPOSE = "consent-form-v1";

/** A sealed form is far larger than this only when it was not made here. */
const MAX_FORM_TOKEN = 24_000;

/**
 * The hidden `csrf` value of form number `form` of `request`: the request and the number,
 * sealed, and for the Continue form under a new key the agent created (`agentId`), so that
 * its submission reads the agent in its first batch. Stores nothing.
 */
export async function consentFormToken(
  deps: Deps,
  request: AuthRequestRecord,
  form: number,
  agentId?: string,
): Promise<string> {
  const sealed = await sealCredential(
    deps,
    FORM_CONTEXT,
    JSON.stringify({ r: request, n: form, ...(agentId ? { a: agentId } : {}) }),
    FORM_PURPOSE,
  );
  return `${sealed.iv}.${sealed.ct}`;
}

/** A consent form as its `csrf` value carries it (`openFormToken`). */
export interface OpenedForm {
  request: AuthRequestRecord;
  form: number;
  /** The agent created for the request, on the Continue form under its key. */
  agentId: string | null;
}

/**
 * The form a `csrf` value carries, when it was sealed here, the request has not expired, and
 * it belongs to the consent session `sessionHash`; else null.
 */
export async function openFormToken(
  deps: Deps,
  token: string,
  sessionHash: string | null,
): Promise<OpenedForm | null> {
  const [iv, ct, extra] = token.split(".");
  if (!sessionHash || !iv || !ct || extra !== undefined || token.length > MAX_FORM_TOKEN) {
    return null;
  }
  const plain = await openCredential(deps, FORM_CONTEXT, { v: 1, iv, ct }, FORM_PURPOSE);
  if (plain === null) return null;
  const { r: request, n: form, a } = JSON.parse(plain) as {
    r: AuthRequestRecord;
    n: number;
    a?: string;
  };
  if (request.expires_at <= deps.clock.now()) return null;
  if (!timingSafeEqual(request.session_hash, sessionHash)) return null;
  return { request, form, agentId: a ?? null };
}

/**
 * Records in `tx` that form `form` of `request` was used (and, with `ended`, the request; with
 * `completed`, the code that completed it).
 */
export function useForm(
  tx: Tx,
  request: AuthRequestRecord,
  form: number,
  now: number,
  ended = false,
  completed?: Completion,
) {
  tx.set(
    keys.oauthRequestUses(request.id),
    ended ? { form, ended: true, ...(completed ? { completed } : {}) } : { form },
    { expireIn: Math.max(1, request.expires_at - now) * 1000 },
  );
}

/** The associated data of a completion's sealed code: the request and the form. */
const completionContext = (request: AuthRequestRecord, form: number) =>
  `consent-code:${request.id}:${form}`;

/** `code`, issued to `agentId` by form `form` of `request`, sealed for its use record. */
export async function sealCompletion(
  deps: Deps,
  request: AuthRequestRecord,
  form: number,
  agentId: string,
  code: string,
  now: number,
): Promise<Completion> {
  const sealed = await sealCredential(
    deps,
    completionContext(request, form),
    code,
    "consent-code-v1",
  );
  return { agent_id: agentId, code: sealed, at: now };
}

/**
 * The code a form completed its request with, when this very form is sent again for the same
 * agent while the code is valid and not yet redeemed (a double click on Continue or Link: the
 * browser shows the second answer, and the first, the redirect with the code, was lost): read
 * in `tx` (answered from what `useUpForm` read, and the code's record). Null otherwise: the
 * form stays spent.
 */
export async function resentCode(
  deps: Deps,
  tx: Tx,
  opened: OpenedForm,
  agentId: string | null,
  now: number,
): Promise<{ form: ConsumedForm; code: string } | null> {
  const { request, form } = opened;
  const got = await tx.getNamed({
    use: keys.oauthRequestUses(request.id),
    client: keys.oauthClients(request.client_id),
  });
  const done = got.use.value?.form === form ? got.use.value.completed : undefined;
  const client = got.client.value;
  if (!done || done.agent_id !== agentId || now >= done.at + TTL.code) return null;
  if (!clientIsLive(client, now)) return null;
  const code = await openCredential(
    deps,
    completionContext(request, form),
    done.code,
    "consent-code-v1",
  );
  if (code === null) return null;
  // Only a code not yet redeemed: presented twice, a code revokes what it connected.
  const issued = await tx.get(keys.oauthCodes(await secretHash("code", code)));
  return issued.value ? { form: { request, form, client }, code } : null;
}

/** Whether form `form` may still be submitted, given what its request has used (`use`). */
function formUnused(use: RequestUse | null, form: number): boolean {
  return !use?.ended && (use === null || use.form < form);
}

/**
 * A validated request and its first form. Stores nothing, except that a pending client is
 * kept longer for it when needed (`keepPendingClient`), in a commit that depends on `seen`,
 * the client's entry as the request's validation read it (read again only if that commit
 * fails its check).
 */
export async function openAuthRequest(
  deps: Deps,
  fields: Omit<AuthRequestRecord, "id" | "created_at" | "expires_at">,
  seen: Deno.KvEntry<ClientRecord>,
): Promise<{ request: AuthRequestRecord; csrf: string }> {
  const now = deps.clock.now();
  const request: AuthRequestRecord = {
    ...fields,
    id: newSecret(),
    created_at: now,
    expires_at: now + TTL.authRequest,
  };
  if (pendingUntil(seen.value, request.expires_at, now) !== null) {
    let first: Deno.KvEntry<ClientRecord> | null = seen;
    await transact(deps.kv, async (tx) => {
      if (first) tx.seen(first);
      first = null;
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
 * minutes from now, at least), together with its pending client, in the commit of `tx`.
 * Returns the request as its next form should carry it.
 */
export function extendIn(
  tx: Tx,
  request: AuthRequestRecord,
  client: ClientRecord,
  now: number,
): AuthRequestRecord {
  const until = Math.max(request.expires_at, now + TTL.consentSession);
  if (until === request.expires_at) return request;
  keepPendingClient(tx, client, until, now);
  return { ...request, expires_at: until };
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
export function codeFor(
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

/** What `useUpForm` read besides the form's use: the keys a submission asked for. */
interface FormReads {
  /** An account (`keys.agents`): the one a key names, or the one a Continue form carries. */
  agentId?: string | null;
  /** A network whose count of consents to new clients is read. */
  network?: string;
  /** A name whose consent account record of the request is read (`oauthConsentAccounts`). */
  account?: string;
}

/** A form `useUpForm` used up, with what it read. */
export interface UsedForm {
  form: ConsumedForm;
  agent: Agent | null;
  newClients: number | null;
  account: ConsentAccountRecord | null;
  /** The entries of the form's use and client as read (for `useUpAfter`). */
  seen: Deno.KvEntryMaybe<unknown>[];
}

/**
 * Uses up a form inside `tx`: reads what its request has used, its client and what `also`
 * names, in one batch; records the form as used and answers it with its client (null when not
 * live) and what was read, or null when this form or a later one of the request was already
 * submitted or the request has ended.
 */
export async function useUpForm(
  tx: Tx,
  opened: OpenedForm,
  now: number,
  also: FormReads = {},
): Promise<UsedForm | null> {
  const { request, form } = opened;
  const name = also.account;
  const read = await tx.getNamed({
    use: keys.oauthRequestUses(request.id),
    client: keys.oauthClients(request.client_id),
    agent: also.agentId ? keys.agents(also.agentId) : null,
    newClients: also.network ? networkNewClientsKey(also.network, now) : null,
    // A name the page never accepted names no record (and keeps the key short).
    account: name && name.length <= 100 ? keys.oauthConsentAccounts(request.id, name) : null,
  });
  if (!formUnused(read.use.value, form)) return null;
  useForm(tx, request, form, now);
  const client = read.client.value;
  return {
    form: { request, form, client: clientIsLive(client, now) ? client : null },
    agent: read.agent?.value ?? null,
    newClients: read.newClients?.value ?? null,
    account: read.account?.value ?? null,
    seen: [read.use, read.client],
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
  return (await useUpAfter(deps, opened, [], false))?.form ?? null;
}

/**
 * Uses up an opened form in a commit of its own, after the submission's own commit did not
 * happen (a refused registration, a reused account): `seen` are the entries that attempt
 * read, so that on a first try this is the commit alone. With `extend`, the request and its
 * pending client are kept longer as for a new key (`extendIn`). Null when the form was used
 * meanwhile.
 */
export async function useUpAfter(
  deps: Deps,
  opened: OpenedForm,
  seen: Deno.KvEntryMaybe<unknown>[],
  extend: boolean,
): Promise<{ form: ConsumedForm; request: AuthRequestRecord } | null> {
  let first: Deno.KvEntryMaybe<unknown>[] = seen;
  const { value } = await transact(deps.kv, async (tx) => {
    for (const entry of first) tx.seen(entry);
    first = [];
    const now = deps.clock.now();
    const used = await useUpForm(tx, opened, now);
    if (!used) return null;
    const { client } = used.form;
    const request = extend && client ? extendIn(tx, opened.request, client, now) : opened.request;
    return { form: used.form, request };
  });
  return value;
}
