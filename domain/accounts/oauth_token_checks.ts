/**
 * What a presented token is worth now: access-token validation for the resource server
 * and RFC 7009 revocation. Both read KV on every call, so a revocation is seen at once
 * by every instance.
 */
import type { Agent } from "./agent_record.ts";
import { grantStands } from "./connections.ts";
import { type AccessRecord, dropGrant } from "./oauth_records.ts";
import type { Deps } from "../deps.ts";
import { keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";
import { looksLikeAccessToken, secretHash } from "./oauth_tokens.ts";

/**
 * RFC 7009 revocation. An access token is revoked alone; a refresh token (current or
 * rotated) revokes its whole grant. Unknown tokens, or tokens of another client, change
 * nothing (the endpoint still answers 200).
 */
export async function revokeToken(
  deps: Deps,
  token: string,
  clientId: string | undefined,
  hint: string | undefined,
): Promise<void> {
  const accessHash = await secretHash("access", token);
  const refreshHash = await secretHash("refresh", token);
  const order = hint === "refresh_token" ? ["refresh", "access"] : ["access", "refresh"];
  await transact(deps.kv, async (tx) => {
    for (const kind of order) {
      if (kind === "access") {
        const entry = await tx.get(keys.oauthAccessTokens(accessHash));
        if (!entry.value) continue;
        if (clientId === undefined || entry.value.client_id === clientId) {
          tx.delete(keys.oauthAccessTokens(accessHash));
        }
        return;
      }
      const entry = await tx.get(keys.oauthRefreshTokens(refreshHash));
      if (!entry.value) continue;
      if (clientId !== undefined && entry.value.client_id !== clientId) return;
      const grant = await tx.get(keys.oauthGrants(entry.value.grant_id));
      if (grant.value) dropGrant(tx, grant.value);
      tx.delete(keys.oauthRefreshTokens(refreshHash));
      return;
    }
  });
}

/** Why an access token was refused, or the facts it carries. */
export type AccessCheck =
  | { ok: true; agent: Agent; scopes: string[]; record: AccessRecord }
  | { ok: false; reason: "invalid" | "expired" | "audience" | "revoked"; description: string }
  | { ok: false; reason: "agent_inactive"; description: string; agentId: string };

/**
 * Validates an access token against KV: known, unexpired (stored `expires_at` against the
 * clock), audience `audience`, grant still present, agent still active and still holding
 * the key the connection was linked with (a rotation ends the connection in its own commit).
 */
export async function checkAccessToken(
  deps: Deps,
  token: string,
  audience: string,
): Promise<AccessCheck> {
  if (!looksLikeAccessToken(token)) {
    return { ok: false, reason: "invalid", description: "The access token is not valid." };
  }
  const now = deps.clock.now();
  const record = (await deps.kv.get(keys.oauthAccessTokens(await secretHash("access", token))))
    .value;
  if (!record) {
    return { ok: false, reason: "invalid", description: "The access token is not valid." };
  }
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
  const [grantEntry, agentEntry] = await deps.kv.getMany([
    keys.oauthGrants(record.grant_id),
    keys.agents(record.agent_id),
  ]);
  const grant = grantEntry.value;
  const agent = agentEntry.value;
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
  return { ok: true, agent, scopes: record.scopes, record };
}
