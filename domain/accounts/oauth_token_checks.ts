/**
 * What a presented token is worth now: access-token validation for the resource server
 * and RFC 7009 revocation. Both read KV on every call, so a revocation is seen at once
 * by every instance. A token names its agent and grant (domain/accounts/oauth_tokens.ts), so
 * each reads every record it needs in one batch.
 */
import type { Agent } from "./agent_record.ts";
import { grantStands } from "./connections.ts";
import { clientIsLive, mayBeClientId, unknownClient } from "./oauth_clients.ts";
import { type AccessRecord, dropGrant, type GrantRecord, wasRotated } from "./oauth_records.ts";
import type { Deps } from "../deps.ts";
import { attachSnapshot, snapshotMark, versionKeys } from "../read_cache.ts";
import { keys } from "../../kv/keys.ts";
import { readNamed } from "../../kv/read_many.ts";
import { transact } from "../../kv/tx.ts";
import { looksLikeAccessToken, secretHash, tokenNames } from "./oauth_tokens.ts";

/**
 * RFC 7009 revocation. An access token is revoked alone; a refresh token (current, or
 * rotated and still held by its grant: `wasRotated`) revokes its whole grant. Unknown tokens, or tokens of another client, change
 * nothing (the endpoint still answers 200). Both records the token may be, and the grant it
 * names, are read in one batch (a refresh token issued before tokens named their grant reads
 * its grant after).
 */
export async function revokeToken(
  deps: Deps,
  token: string,
  clientId: string | undefined,
  hint: string | undefined,
): Promise<void> {
  if (clientId !== undefined && !mayBeClientId(clientId)) throw unknownClient();
  const accessHash = await secretHash("access", token);
  const refreshHash = await secretHash("refresh", token);
  const named = tokenNames(token);
  await transact(deps.kv, async (tx) => {
    // The client a request names is read with the token's keys: unknown, nothing changes.
    const read = await tx.getNamed({
      access: keys.oauthAccessTokens(accessHash),
      refresh: keys.oauthRefreshTokens(refreshHash),
      grant: named ? keys.oauthGrants(named.grantId) : null,
      client: clientId === undefined ? null : keys.oauthClients(clientId),
    });
    if (read.client && !clientIsLive(read.client.value, deps.clock.now())) throw unknownClient();
    const access = read.access.value;
    const refresh = read.refresh.value;
    // Both cannot exist (the hashes are of one token under two kinds): the hint only says
    // which to look at first, as RFC 7009 allows.
    const kind = hint === "refresh_token"
      ? (refresh ? "refresh" : "access")
      : (access ? "access" : "refresh");
    if (kind === "access") {
      if (access && (clientId === undefined || access.client_id === clientId)) {
        tx.delete(keys.oauthAccessTokens(accessHash));
      }
      return;
    }
    if (!refresh) {
      // A replaced token has no record: its grant holds its hash.
      const held = read.grant?.value;
      if (
        held && wasRotated(held, refreshHash) && (clientId ?? held.client_id) === held.client_id
      ) {
        dropGrant(tx, held);
      }
      return;
    }
    if (clientId !== undefined && refresh.client_id !== clientId) return;
    const grant = read.grant?.value?.id === refresh.grant_id
      ? read.grant.value
      : (await tx.get(keys.oauthGrants(refresh.grant_id))).value;
    if (grant) dropGrant(tx, grant);
    tx.delete(keys.oauthRefreshTokens(refreshHash));
  });
}

/** Why an access token was refused, or the facts it carries. */
type AccessCheck =
  | { ok: true; agent: Agent; scopes: string[]; record: AccessRecord }
  | { ok: false; reason: "invalid" | "expired" | "audience" | "revoked"; description: string }
  | { ok: false; reason: "agent_inactive"; description: string; agentId: string };

const INVALID: AccessCheck = {
  ok: false,
  reason: "invalid",
  description: "The access token is not valid.",
};

/** The records an access token check decides on, and the read-cache versions read with them. */
interface AccessRead {
  record: AccessRecord | null;
  grant: GrantRecord | null;
  agent: Agent | null;
  versions: Deno.KvEntryMaybe<unknown>[];
}

/**
 * Reads the token's record, its grant, its agent and the read-cache versions: one `getMany`
 * for a token that names its agent and grant; a token issued before tokens named them (an
 * hour at most) reads its record first.
 */
async function readAccess(deps: Deps, token: string): Promise<AccessRead> {
  const recordKey = keys.oauthAccessTokens(await secretHash("access", token));
  const named = tokenNames(token);
  if (named) {
    const read = await readNamed(deps.kv, {
      record: recordKey,
      grant: keys.oauthGrants(named.grantId),
      agent: keys.agents(named.agentId),
      versions: versionKeys(),
    });
    const record = read.record.value;
    // The hash covers the names, so a record found is one issued with them.
    if (!record || record.grant_id !== named.grantId || record.agent_id !== named.agentId) {
      return { record: null, grant: null, agent: null, versions: [] };
    }
    return { record, grant: read.grant.value, agent: read.agent.value, versions: read.versions };
  }
  const record = (await deps.kv.get(recordKey)).value;
  if (!record) return { record: null, grant: null, agent: null, versions: [] };
  const read = await readNamed(deps.kv, {
    grant: keys.oauthGrants(record.grant_id),
    agent: keys.agents(record.agent_id),
    versions: versionKeys(),
  });
  return { record, grant: read.grant.value, agent: read.agent.value, versions: read.versions };
}

/**
 * Validates an access token against KV: known, unexpired (stored `expires_at` against the
 * clock), audience `audience`, grant still present, agent still active and still holding
 * the key the connection was linked with (a rotation ends the connection in its own commit).
 * The agent answered carries the read-cache versions read with it (domain/read_cache.ts), as
 * an API key's does.
 */
export async function checkAccessToken(
  deps: Deps,
  token: string,
  audience: string,
): Promise<AccessCheck> {
  if (!looksLikeAccessToken(token)) return INVALID;
  const now = deps.clock.now();
  const mark = snapshotMark();
  const { record, grant, agent, versions } = await readAccess(deps, token);
  if (!record) return INVALID;
  if (record.expires_at <= now) {
    return { ok: false, reason: "expired", description: "The access token has expired." };
  }
  if (record.audience !== audience) {
    return {
      ok: false,
      reason: "audience",
      description: `The access token was issued for "${record.audience}", not "${audience}".`,
    };
  }
  if (!agent || agent.status !== "active") {
    if (grant) {
      await transact(deps.kv, async (tx) => {
        const g = await tx.get(keys.oauthGrants(grant.id));
        if (g.value) dropGrant(tx, g.value);
      });
    }
    return {
      ok: false,
      reason: "agent_inactive",
      agentId: record.agent_id,
      description: "The agent linked to this connection has had its API key revoked.",
    };
  }
  if (!grant || grant.expires_at <= now) {
    return { ok: false, reason: "revoked", description: "The connection has been revoked." };
  }
  if (!(await grantStands(deps, grant, agent))) {
    return {
      ok: false,
      reason: "revoked",
      description:
        "The API key this connection was linked with has been rotated or revoked; the connection has ended.",
    };
  }
  attachSnapshot(agent, versions, mark);
  return { ok: true, agent, scopes: record.scopes, record };
}
