/**
 * The four submissions of the consent page (docs/oauth.md "Consent"), each one read batch and
 * one commit: the form is used up (`useUpForm`) in the commit that does what the person chose.
 *
 * - `link`: the agent holding a typed API key is connected (the request completed);
 * - `create`: a new agent is registered and its key shown, with a Continue form;
 * - `continue`: the agent created for the request is connected;
 * - `deny`: the request ends.
 *
 * A refused registration commits nothing; its form is then used up by a commit of its own
 * on what the refused attempt read. If creating an agent succeeded but the person never got
 * its key page (a lost answer), submitting the same name again for the same request (the form
 * shown again, same session) within ten minutes shows that account's key again instead of
 * "name taken": its key is kept sealed under the request and the name for that long, where no
 * other request or session can reach it. The create form itself sent again with the same name
 * (a double click) shows that key page again too.
 */
import type { Agent, ParticipationBasis } from "./agent_record.ts";
import { holdsKey, keyHolder } from "./agents.ts";
import { agentIdOfKey, hashApiKey } from "./api_keys.ts";
import { clientIsLive } from "./oauth_clients.ts";
import { registerFromNetwork } from "./registration_limits.ts";
import { openCredential, sealCredential } from "./secret.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import {
  type AuthRequestRecord,
  codeFor,
  type ConsentAccountRecord,
  type ConsumedForm,
  extendIn,
  type OpenedForm,
  openFormToken,
  resentCode,
  sealCompletion,
  type UsedForm,
  useForm,
  useUpAfter,
  useUpForm,
} from "./oauth_consent.ts";
import { countNetworkNewClient } from "./oauth_rate_limits.ts";
import { TTL } from "./oauth_tokens.ts";
import { transact } from "../../kv/tx.ts";

/** The agent a consent resolves to, with its API key (kept only in memory, then sealed). */
export interface ConsentAgent {
  agent: Agent;
  apiKey: string;
}

/** Completes `request` for `who` in the commit of `tx`: the request ends with a code. */
async function complete(
  deps: Deps,
  tx: Tx,
  used: UsedForm,
  who: ConsentAgent,
  network: string,
  now: number,
): Promise<string> {
  const { request, form, client } = used.form;
  countNetworkNewClient(tx, deps, network, client!, used.newClients, now);
  const credential = await sealCredential(deps, `agent:${who.agent.id}`, who.apiKey);
  const code = await codeFor(deps, tx, now, request, who.agent.id, deps.newId(), credential);
  // Kept with the form's use, so that the form sent twice redirects with it again.
  const completed = await sealCompletion(deps, request, form, who.agent.id, code, now);
  useForm(tx, request, form, now, true, completed);
  return code;
}

/** What a consent form that links an existing agent came to (`submitLinkForm`). */
type LinkedForm =
  | { form: ConsumedForm; code: string; request: AuthRequestRecord }
  /** The client is gone (null), or the key is not an active agent's (401). */
  | { form: ConsumedForm; linkError: BoardError | null }
  /** A limit refused completing the request. */
  | { form: ConsumedForm; completeError: BoardError };

/**
 * `mode=link`: uses up the form and, when `apiKey` is an active agent's key, completes the
 * request for that agent from `network`. Reads what the request used, its client, the account
 * the key names and the network's count in one batch. Answers null when the form does not
 * pass; otherwise the consumed form with the code, or with why the request was not completed
 * (the form is used up all the same). The moderator key is an unknown key here. The key is
 * taken as typed less the blanks around it: a person pastes it from a terminal or a note, and
 * no key holds a blank.
 */
export async function submitLinkForm(
  deps: Deps,
  csrf: string,
  sessionHash: string | null,
  typedKey: string,
  network: string,
): Promise<LinkedForm | null> {
  const apiKey = typedKey.trim();
  const [opened, holder] = await Promise.all([
    openFormToken(deps, csrf, sessionHash),
    keyHolder(deps, apiKey),
  ]);
  if (!opened) return null;
  const { value } = await transact(deps.kv, async (tx): Promise<LinkedForm | null> => {
    const now = deps.clock.now();
    const used = await useUpForm(tx, opened, now, { agentId: holder.agentId, network });
    if (!used) {
      // This form sent twice with the same key: the redirect the first made, again.
      const agent = holder.agentId ? (await tx.get(keys.agents(holder.agentId))).value : null;
      if (!holdsKey(agent, holder.hash)) return null;
      const resent = await resentCode(deps, tx, opened, agent.id, now);
      return resent && { ...resent, request: opened.request };
    }
    const { form, agent } = used;
    if (!form.client) return { form, linkError: null };
    if (!holdsKey(agent, holder.hash)) {
      return {
        form,
        linkError: new BoardError("UNAUTHORIZED", "The API key is invalid or has been revoked."),
      };
    }
    try {
      const code = await complete(deps, tx, used, { agent, apiKey }, network, now);
      return { form, code, request: form.request };
    } catch (e) {
      if (e instanceof BoardError) return { form, completeError: e };
      throw e;
    }
  });
  return value;
}

/**
 * `mode=deny`: uses up the form and, while the request's client is live, ends the request.
 * Answers null when the form does not pass, else the consumed form (its client null when the
 * registration is gone; the request not ended then).
 */
export async function submitDenyForm(
  deps: Deps,
  csrf: string,
  sessionHash: string | null,
): Promise<ConsumedForm | null> {
  const opened = await openFormToken(deps, csrf, sessionHash);
  if (!opened) return null;
  const { value } = await transact(deps.kv, async (tx) => {
    const now = deps.clock.now();
    const used = await useUpForm(tx, opened, now);
    if (!used) return await resentDenial(tx, opened, now);
    if (used.form.client) useForm(tx, opened.request, opened.form, now, true);
    return used.form;
  });
  return value;
}

/**
 * The denial a form made, when this very form is sent again (a double click on Deny): the
 * request it ended, to send the person back as the first did. Null otherwise.
 */
async function resentDenial(
  tx: Tx,
  opened: OpenedForm,
  now: number,
): Promise<ConsumedForm | null> {
  const { request, form } = opened;
  const got = await tx.getNamed({
    use: keys.oauthRequestUses(request.id),
    client: keys.oauthClients(request.client_id),
  });
  const use = got.use.value;
  const client = got.client.value;
  if (!use?.ended || use.form !== form || use.completed || !clientIsLive(client, now)) return null;
  return { request, form, client };
}

/** The associated data of a created agent's key kept for its request (`ConsentAccountRecord`). */
const accountContext = (request: AuthRequestRecord, name: string) =>
  `consent:${request.id}:${name}`;

/**
 * The agent `request` created with `name` less than ten minutes ago (`record`, as read),
 * still active and holding the key it was created with, or null. The account is `agent` when
 * read already, else read now (checked).
 */
async function accountOf(
  deps: Deps,
  tx: Tx,
  request: AuthRequestRecord,
  name: string,
  record: ConsentAccountRecord | null,
  now: number,
  agent: Agent | null = null,
): Promise<ConsentAgent | null> {
  if (!record || record.expires_at <= now || record.client_id !== request.client_id) return null;
  const apiKey = await openCredential(deps, accountContext(request, name), record.credential);
  const id = apiKey ? agentIdOfKey(apiKey) : null;
  if (!apiKey || !id) return null;
  const account = agent?.id === id ? agent : (await tx.get(keys.agents(id))).value;
  if (!holdsKey(account, await hashApiKey(apiKey)) || account.name !== name) return null;
  return { agent: account, apiKey };
}

/** What a consent form that creates an agent came to (`submitCreateForm`). */
type CreatedForm =
  /** The agent, and the request kept ten more minutes for its key page. */
  | { form: ConsumedForm; created: ConsentAgent; request: AuthRequestRecord }
  /** The client is gone (`form.client` null), or the registration was refused. */
  | { form: ConsumedForm; refusal: unknown };

/** Ends a registration attempt early with what the form came to. */
class FormDecided {
  constructor(readonly used: UsedForm | null, readonly reused?: ConsentAgent) {}
}

/** A create form sent again after it created its agent (a double click): its key page again. */
class FormResent {
  constructor(readonly shown: CreatedForm) {}
}

/**
 * The key page of a create form already used, when the use was this very form's and it created
 * an agent named `name` less than ten minutes ago (a second click, or a submission sent twice):
 * what the first submission showed, with the request as that submission kept it. Null when the
 * form was refused for any other reason (a later form was used, the request ended).
 */
async function resentCreateForm(
  deps: Deps,
  tx: Tx,
  opened: OpenedForm,
  name: string,
  now: number,
): Promise<CreatedForm | null> {
  const { request, form } = opened;
  if (name.length > 100) return null;
  const got = await tx.getNamed({
    use: keys.oauthRequestUses(request.id),
    client: keys.oauthClients(request.client_id),
    account: keys.oauthConsentAccounts(request.id, name),
  });
  const use = got.use.value;
  const client = got.client.value;
  if (!use || use.ended || use.form !== form || !client || !clientIsLive(client, now)) return null;
  const created = await accountOf(deps, tx, request, name, got.account.value, now);
  if (!created) return null;
  const kept = {
    ...request,
    expires_at: Math.max(request.expires_at, got.account.value!.expires_at),
  };
  return { form: { request: kept, form, client }, created, request: kept };
}

/**
 * `mode=create`: registers a new agent (counted against the network's registration allowances
 * like `POST /v1/agents`: its day's registrations and its attempts of the minute) in the commit
 * that uses up the form and keeps the request and its pending client ten more minutes (the key
 * page), its key kept sealed for the request's
 * Continue. The agent this request created with this name less than ten minutes ago is
 * answered again instead (a replay: one round trip more). Null when the form does not pass.
 */
export async function submitCreateForm(
  deps: Deps,
  csrf: string,
  sessionHash: string | null,
  input: { name: string; participation_basis: ParticipationBasis },
  network: string,
): Promise<CreatedForm | null> {
  const opened = await openFormToken(deps, csrf, sessionHash);
  if (!opened) return null;
  const { request } = opened;
  // What the registration's last attempt read of the form, and the request kept longer.
  const last: { attempt: { used: UsedForm; request: AuthRequestRecord } | null } = {
    attempt: null,
  };
  // The form, its client and the request's earlier account, read with the registration's
  // reads; what refuses the form comes before the registration's own refusals.
  const before = async (tx: Tx) => {
    last.attempt = null;
    const now = deps.clock.now();
    const used = await useUpForm(tx, opened, now, { account: input.name });
    if (!used) {
      const resent = await resentCreateForm(deps, tx, opened, input.name, now);
      if (resent) throw new FormResent(resent);
    }
    if (!used?.form.client) throw new FormDecided(used);
    const prior = await accountOf(deps, tx, request, input.name, used.account, now);
    if (prior) throw new FormDecided(used, prior);
    last.attempt = { used, request: extendIn(tx, request, used.form.client, now) };
  };
  const keep = async (tx: Tx, apiKey: string) => {
    const now = deps.clock.now();
    tx.set(
      keys.oauthConsentAccounts(request.id, input.name),
      {
        client_id: request.client_id,
        credential: await sealCredential(deps, accountContext(request, input.name), apiKey),
        expires_at: now + TTL.consentSession,
      } satisfies ConsentAccountRecord,
      { expireIn: TTL.consentSession * 1000 },
    );
  };
  try {
    const created = await registerFromNetwork(deps, input, network, keep, {
      countAttempt: true,
      before,
    });
    const { used, request: kept } = last.attempt!;
    return { form: used.form, created, request: kept };
  } catch (e) {
    if (e instanceof FormResent) return e.shown;
    if (e instanceof FormDecided && !e.used) return null;
    const seen = e instanceof FormDecided ? e.used!.seen : last.attempt?.used.seen ?? [];
    const after = await useUpAfter(deps, opened, seen, e instanceof FormDecided && !!e.reused);
    if (!after) return null;
    if (e instanceof FormDecided && e.reused) {
      return { form: after.form, created: e.reused, request: after.request };
    }
    return { form: after.form, refusal: e instanceof FormDecided ? null : e };
  }
}

/** What the Continue form under a new key came to (`submitContinueForm`). */
type ContinuedForm =
  | { form: ConsumedForm; code: string; request: AuthRequestRecord }
  /** The client is gone, or the agent is (its ten minutes passed, its key was revoked). */
  | { form: ConsumedForm; gone: "client" | "agent" }
  /** A limit refused completing the request: the key page again, the request kept longer. */
  | {
    form: ConsumedForm;
    who: ConsentAgent;
    completeError: BoardError;
    request: AuthRequestRecord;
  };

/**
 * `mode=continue` (the button under the new key): uses up the form and completes the request
 * for the agent it created with `name`, from `network`. The form names the agent, so what the
 * request used, its client, the agent, its kept key and the network's count are one batch.
 * Null when the form does not pass.
 */
export async function submitContinueForm(
  deps: Deps,
  csrf: string,
  sessionHash: string | null,
  name: string,
  network: string,
): Promise<ContinuedForm | null> {
  const opened = await openFormToken(deps, csrf, sessionHash);
  if (!opened) return null;
  const { value } = await transact(deps.kv, async (tx): Promise<ContinuedForm | null> => {
    const now = deps.clock.now();
    const used = await useUpForm(tx, opened, now, {
      agentId: opened.agentId,
      network,
      account: name,
    });
    if (!used) {
      // This form sent twice: the redirect the first made, again.
      const resent = await resentCode(deps, tx, opened, opened.agentId, now);
      return resent && { ...resent, request: opened.request };
    }
    const { form } = used;
    if (!form.client) return { form, gone: "client" };
    const who = await accountOf(deps, tx, form.request, name, used.account, now, used.agent);
    if (!who) return { form, gone: "agent" };
    try {
      const code = await complete(deps, tx, used, who, network, now);
      return { form, code, request: form.request };
    } catch (e) {
      if (!(e instanceof BoardError)) throw e;
      const request = extendIn(tx, form.request, form.client, now);
      return { form, who, completeError: e, request };
    }
  });
  return value;
}
