/**
 * Issuing tokens: authorization codes, the code exchange and refresh rotation.
 *
 * A grant links one client to one agent and holds the agent's board credential sealed
 * with BOARD_SECRET. Access and refresh tokens point at their grant; validating a token
 * reads the grant and the agent, so deleting a grant (or revoking the agent's key) ends
 * every token of that connection at once, on every instance.
 */
import { timingSafeEqual } from "../hashing.ts";
import { base64url } from "./api_keys.ts";
import { capConnections, grantStands, standingKeyHash } from "./connections.ts";
import {
  type AccessRecord,
  type CodeRecord,
  type CodeUseRecord,
  dropGrant,
  type GrantRecord,
  type RefreshRecord,
  type TokenSet,
} from "./oauth_records.ts";
import type { Deps } from "../deps.ts";
import { keys } from "../../kv/keys.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import { clientIsLive, type ClientRecord, keepClientUntil } from "./oauth_clients.ts";
import { refundCompletedRegistration } from "./oauth_rate_limits.ts";
import {
  InvalidClientError,
  InvalidGrantError,
  InvalidScopeError,
  InvalidTargetError,
} from "./oauth_errors.ts";
import type { OAuthError } from "./oauth_errors.ts";
import {
  ACCESS_TOKEN_PREFIX,
  newSecret,
  parseScopes,
  REFRESH_TOKEN_PREFIX,
  secretHash,
  TTL,
} from "./oauth_tokens.ts";

/** Stores a new single-use authorization code inside the consent commit; returns the code. */
export async function issueCode(
  tx: Tx,
  now: number,
  fields: Omit<CodeRecord, "created_at" | "expires_at">,
): Promise<string> {
  const code = newSecret();
  const record: CodeRecord = { ...fields, created_at: now, expires_at: now + TTL.code };
  tx.set(keys.oauthCodes(await secretHash("code", code)), record, { expireIn: TTL.code * 1000 });
  return code;
}

/** RFC 7636 S256: BASE64URL(SHA256(verifier)) equals the stored challenge. */
export async function pkceMatches(verifier: string, challenge: string): Promise<boolean> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return timingSafeEqual(base64url(new Uint8Array(digest)), challenge);
}

/** A syntactically valid PKCE code verifier (RFC 7636 §4.1). */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

async function newTokens(
  tx: Tx,
  now: number,
  grant: GrantRecord,
  accessScopes: string[],
  refreshHash: string,
  refreshToken: string,
): Promise<TokenSet> {
  const access = newSecret(ACCESS_TOKEN_PREFIX);
  const accessRecord: AccessRecord = {
    grant_id: grant.id,
    agent_id: grant.agent_id,
    client_id: grant.client_id,
    scopes: accessScopes,
    audience: grant.resource,
    issued_at: now,
    expires_at: now + TTL.access,
  };
  const refreshRecord: RefreshRecord = {
    grant_id: grant.id,
    client_id: grant.client_id,
    issued_at: now,
    expires_at: now + TTL.refresh,
    rotated_at: null,
  };
  tx.set(keys.oauthAccessTokens(await secretHash("access", access)), accessRecord, {
    expireIn: TTL.access * 1000,
  })
    .set(keys.oauthRefreshTokens(refreshHash), refreshRecord, { expireIn: TTL.refresh * 1000 })
    .set(keys.oauthGrants(grant.id), grant, { expireIn: TTL.refresh * 1000 })
    .set(keys.oauthGrantsByAgent(grant.agent_id, grant.id), grant.client_id, {
      expireIn: TTL.refresh * 1000,
    });
  return {
    access_token: access,
    token_type: "Bearer",
    expires_in: TTL.access,
    refresh_token: refreshToken,
    scope: accessScopes.join(" "),
  };
}

type Outcome = { tokens: TokenSet } | { error: OAuthError };

function settle(outcome: Outcome): TokenSet {
  if ("error" in outcome) throw outcome.error;
  return outcome.tokens;
}

export interface CodeExchange {
  client: ClientRecord;
  code: string;
  codeVerifier: string;
  redirectUri: string | undefined;
  resource: string | undefined;
}

/**
 * Redeems an authorization code: single use (read and deleted in one commit), bound to
 * client, redirect URI, PKCE challenge and resource. A failed attempt also burns the
 * code; a replayed code revokes the grant (and so every token) it produced.
 */
export async function exchangeCode(deps: Deps, req: CodeExchange): Promise<TokenSet> {
  const codeHash = await secretHash("code", req.code);
  const refreshToken = newSecret(REFRESH_TOKEN_PREFIX);
  const refreshHash = await secretHash("refresh", refreshToken);
  const { value } = await transact(deps.kv, async (tx): Promise<Outcome> => {
    const now = deps.clock.now();
    const entry = await tx.get(keys.oauthCodes(codeHash));
    const code = entry.value;
    if (!code) {
      const use = await tx.get(keys.oauthCodeUses(codeHash));
      if (use.value && use.value.expires_at > now) {
        const grant = await tx.get(keys.oauthGrants(use.value.grant_id));
        if (grant.value) dropGrant(tx, grant.value);
        tx.delete(keys.oauthCodeUses(codeHash));
        return {
          error: new InvalidGrantError(
            "The authorization code was already used; the tokens issued for it are revoked.",
          ),
        };
      }
      return { error: new InvalidGrantError("The authorization code is invalid or expired.") };
    }
    tx.delete(keys.oauthCodes(codeHash));
    if (code.expires_at <= now) {
      return { error: new InvalidGrantError("The authorization code has expired.") };
    }
    if (code.client_id !== req.client.client_id) {
      return {
        error: new InvalidGrantError("The authorization code was issued to another client."),
      };
    }
    if (req.redirectUri !== code.redirect_uri) {
      return {
        error: new InvalidGrantError(
          '"redirect_uri" must be exactly the one sent in the authorization request.',
        ),
      };
    }
    if (req.resource !== undefined && req.resource !== code.resource) {
      return { error: new InvalidTargetError(`"resource" must be "${code.resource}".`) };
    }
    if (!(await pkceMatches(req.codeVerifier, code.code_challenge))) {
      return {
        error: new InvalidGrantError("The PKCE code_verifier does not match the challenge."),
      };
    }
    const [clientEntry, agentEntry] = await tx.getMany([
      keys.oauthClients(code.client_id),
      keys.agents(code.agent_id),
    ]);
    const client = clientEntry.value;
    const agent = agentEntry.value;
    if (!clientIsLive(client, now)) {
      return { error: new InvalidClientError("The client registration has expired.") };
    }
    // The key the consent linked: the connection stands only while the agent still holds it.
    const keyHash = await standingKeyHash(deps, code, agent);
    if (keyHash === null) {
      return {
        error: new InvalidGrantError(
          "The API key this authorization was linked with has been rotated or revoked.",
        ),
      };
    }
    tx.set(
      keys.oauthCodeUses(codeHash),
      {
        grant_id: code.grant_id,
        expires_at: now + TTL.codeUse,
      } satisfies CodeUseRecord,
      { expireIn: TTL.codeUse * 1000 },
    );
    const grant: GrantRecord = {
      id: code.grant_id,
      agent_id: code.agent_id,
      client_id: code.client_id,
      scopes: code.scopes,
      resource: code.resource,
      credential: code.credential,
      key_hash: keyHash,
      created_at: now,
      refreshed_at: now,
      expires_at: now + TTL.refresh,
      refresh_hash: refreshHash,
    };
    await refundCompletedRegistration(tx, deps, client);
    keepClientUntil(tx, client, now, grant.expires_at + TTL.unusedClient);
    // At the cap, the account's oldest connection ends in this commit.
    await capConnections(tx, grant.agent_id, now, TTL.refresh);
    return { tokens: await newTokens(tx, now, grant, grant.scopes, refreshHash, refreshToken) };
  });
  return settle(value);
}

export interface RefreshExchange {
  client: ClientRecord;
  refreshToken: string;
  scope: string | undefined;
  resource: string | undefined;
}

/**
 * Exchanges a refresh token for a new access token and a new refresh token (rotation).
 * The old token is kept as "rotated" until it would have expired: presenting it again
 * revokes the whole grant. An optional `scope` narrows the new access token.
 */
export async function refreshGrant(deps: Deps, req: RefreshExchange): Promise<TokenSet> {
  const oldHash = await secretHash("refresh", req.refreshToken);
  const refreshToken = newSecret(REFRESH_TOKEN_PREFIX);
  const refreshHash = await secretHash("refresh", refreshToken);
  const { value } = await transact(deps.kv, async (tx): Promise<Outcome> => {
    const now = deps.clock.now();
    const entry = await tx.get(keys.oauthRefreshTokens(oldHash));
    const old = entry.value;
    if (!old || old.expires_at <= now) {
      return { error: new InvalidGrantError("The refresh token is invalid or expired.") };
    }
    if (old.client_id !== req.client.client_id) {
      return { error: new InvalidGrantError("The refresh token was issued to another client.") };
    }
    const [grantEntry, clientEntry] = await tx.getMany([
      keys.oauthGrants(old.grant_id),
      keys.oauthClients(old.client_id),
    ]);
    const grant = grantEntry.value;
    if (!grant || grant.expires_at <= now) {
      return { error: new InvalidGrantError("The connection was revoked.") };
    }
    if (old.rotated_at !== null || grant.refresh_hash !== oldHash) {
      dropGrant(tx, grant);
      return {
        error: new InvalidGrantError(
          "The refresh token was already used; the connection is revoked. Authorize again.",
        ),
      };
    }
    const client = clientEntry.value;
    if (!clientIsLive(client, now)) {
      return { error: new InvalidClientError("The client registration has expired.") };
    }
    if (req.resource !== undefined && req.resource !== grant.resource) {
      return { error: new InvalidTargetError(`"resource" must be "${grant.resource}".`) };
    }
    const asked = parseScopes(req.scope);
    if (asked.some((s) => !grant.scopes.includes(s))) {
      return {
        error: new InvalidScopeError(`The connection holds only "${grant.scopes.join(" ")}".`),
      };
    }
    const agentEntry = await tx.get(keys.agents(grant.agent_id));
    if (!(await grantStands(deps, grant, agentEntry.value))) {
      dropGrant(tx, grant);
      return {
        error: new InvalidGrantError(
          "The API key this connection was linked with has been rotated or revoked; the connection has ended.",
        ),
      };
    }
    tx.set(keys.oauthRefreshTokens(oldHash), { ...old, rotated_at: now } satisfies RefreshRecord, {
      expireIn: Math.max(1, old.expires_at - now) * 1000,
    });
    const renewed: GrantRecord = {
      ...grant,
      refreshed_at: now,
      expires_at: now + TTL.refresh,
      refresh_hash: refreshHash,
    };
    keepClientUntil(tx, client, now, renewed.expires_at + TTL.unusedClient);
    const scopes = asked.length > 0 ? asked : grant.scopes;
    return { tokens: await newTokens(tx, now, renewed, scopes, refreshHash, refreshToken) };
  });
  return settle(value);
}
