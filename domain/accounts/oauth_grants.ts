/**
 * Issuing tokens: authorization codes, the code exchange and refresh rotation.
 *
 * A grant links one client to one agent and holds the agent's board credential sealed
 * with BOARD_SECRET. Access and refresh tokens point at their grant; validating a token
 * reads the grant and the agent, so deleting a grant (or revoking the agent's key) ends
 * every token of that connection at once, on every instance.
 */
import { timingSafeEqual } from "../hashing.ts";
import { secretMac } from "./secret.ts";
import { base64url } from "./api_keys.ts";
import {
  capConnections,
  grantStands,
  readNewestConnections,
  standingKeyHash,
} from "./connections.ts";
import {
  type AccessRecord,
  type CodeRecord,
  type CodeUseRecord,
  dropGrant,
  type GrantRecord,
  type RefreshRecord,
  type TokenSet,
  wasRotated,
  withRotated,
} from "./oauth_records.ts";
import type { Deps } from "../deps.ts";
import { keys } from "../../kv/keys.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import { clientIsLive, keepClientUntil, mayBeClientId, unknownClient } from "./oauth_clients.ts";
import {
  countNewClient,
  countRefresh,
  refundCompletedRegistration,
  refundWindowKeys,
} from "./oauth_rate_limits.ts";
import {
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTargetError,
} from "./oauth_errors.ts";
import type { OAuthError } from "./oauth_errors.ts";
import {
  ACCESS_TOKEN_PREFIX,
  codeAgentId,
  newNamedCode,
  newNamedToken,
  parseScopes,
  REFRESH_TOKEN_PREFIX,
  secretHash,
  tokenNames,
  TTL,
} from "./oauth_tokens.ts";

/** What tags the codes of this board (`newNamedCode`, `codeAgentId`). */
function codeTag(deps: Deps): (named: string) => Promise<string> {
  return (named) => secretMac(deps, `oauth-code:${named}`);
}

/**
 * Stores a new single-use authorization code inside the consent commit; returns the code,
 * which names the agent it links (`newNamedCode`) so that its exchange reads everything at once.
 */
export async function issueCode(
  deps: Deps,
  tx: Tx,
  now: number,
  fields: Omit<CodeRecord, "created_at" | "expires_at">,
): Promise<string> {
  const code = await newNamedCode(fields.agent_id, codeTag(deps));
  const record: CodeRecord = { ...fields, created_at: now, expires_at: now + TTL.code };
  tx.set(keys.oauthCodes(await secretHash("code", code)), record, { expireIn: TTL.code * 1000 });
  return code;
}

/** RFC 7636 S256: BASE64URL(SHA256(verifier)) equals the stored challenge. */
async function pkceMatches(verifier: string, challenge: string): Promise<boolean> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return timingSafeEqual(base64url(new Uint8Array(digest)), challenge);
}

/** A syntactically valid PKCE code verifier (RFC 7636 §4.1). */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

/**
 * Stages a grant with a new access token and the refresh token `refresh` (made by
 * `newRefresh` for this grant), both naming the agent and the grant.
 */
async function newTokens(
  tx: Tx,
  now: number,
  grant: GrantRecord,
  accessScopes: string[],
  refresh: NewRefresh,
): Promise<TokenSet> {
  const access = newNamedToken(ACCESS_TOKEN_PREFIX, { agentId: grant.agent_id, grantId: grant.id });
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
    .set(keys.oauthRefreshTokens(refresh.hash), refreshRecord, { expireIn: TTL.refresh * 1000 })
    .set(keys.oauthGrants(grant.id), grant, { expireIn: TTL.refresh * 1000 })
    .set(
      keys.oauthGrantsByAgent(grant.agent_id, grant.id),
      { client_id: grant.client_id, refresh_hash: refresh.hash },
      { expireIn: TTL.refresh * 1000 },
    );
  return {
    access_token: access,
    token_type: "Bearer",
    expires_in: TTL.access,
    refresh_token: refresh.token,
    scope: accessScopes.join(" "),
  };
}

/** A new refresh token and its stored hash. */
interface NewRefresh {
  token: string;
  hash: string;
}

/** A new refresh token for the grant `grantId` of `agentId`. */
async function newRefresh(agentId: string, grantId: string): Promise<NewRefresh> {
  const token = newNamedToken(REFRESH_TOKEN_PREFIX, { agentId, grantId });
  return { token, hash: await secretHash("refresh", token) };
}

/**
 * The refresh token that replaces `token` at its exchange: derived from it under the board
 * secret (so only the service can tell it), naming the grant. Deriving it rather than drawing
 * it lets a repeat of the exchange within the grace period hand out the same token again.
 */
async function successorRefresh(
  deps: Deps,
  token: string,
  grant: GrantRecord,
): Promise<NewRefresh> {
  const mac = await secretMac(deps, `oauth-refresh-successor:${token}`);
  const successor = `${REFRESH_TOKEN_PREFIX}${mac}.${grant.agent_id}.${grant.id}`;
  return { token: successor, hash: await secretHash("refresh", successor) };
}

/**
 * True while the grant's last rotation is less than `TTL.refreshGrace` old: requests sent
 * together (parallel tool calls that all met an expired access token, a retry after a lost
 * answer) then get the refresh token that rotation handed out, rather than rotating it again
 * and making the tokens the others hold look reused.
 */
function rotatedInGrace(grant: GrantRecord, now: number): boolean {
  return (grant.rotated_hashes?.length ?? 0) > 0 && now - grant.refreshed_at < TTL.refreshGrace;
}

/**
 * The grant's refresh token when `token` (hash `hash`) is the one its last rotation replaced
 * and that rotation is in its grace (`rotatedInGrace`), else null: presenting any other
 * replaced token is a reuse.
 */
async function successorInGrace(
  deps: Deps,
  grant: GrantRecord,
  token: string,
  hash: string,
  now: number,
): Promise<NewRefresh | null> {
  if (grant.rotated_hashes?.[0] !== hash || !rotatedInGrace(grant, now)) return null;
  const successor = await successorRefresh(deps, token, grant);
  return successor.hash === grant.refresh_hash ? successor : null;
}

type Outcome = { tokens: TokenSet } | { error: OAuthError };

function settle(outcome: Outcome): TokenSet {
  if ("error" in outcome) throw outcome.error;
  return outcome.tokens;
}

interface CodeExchange {
  clientId: string;
  code: string;
  codeVerifier: string;
  redirectUri: string | undefined;
  resource: string | undefined;
}

/**
 * Redeems an authorization code: single use (read and deleted in one commit), bound to
 * client, redirect URI, PKCE challenge and resource. A failed attempt also burns the
 * code, except a request that leaves out a parameter the code requires (malformed, as one
 * without a verifier is); a replayed code revokes the grant (and so every token) it produced.
 */
export async function exchangeCode(deps: Deps, req: CodeExchange): Promise<TokenSet> {
  if (!mayBeClientId(req.clientId)) throw unknownClient();
  const codeHash = await secretHash("code", req.code);
  // The agent a code the board issued names: its record and connections are read with the code.
  const named = await codeAgentId(req.code, codeTag(deps));
  const { value } = await transact(deps.kv, async (tx): Promise<Outcome> => {
    const now = deps.clock.now();
    const [read, namedConnections] = await Promise.all([
      tx.getNamed({
        code: keys.oauthCodes(codeHash),
        use: keys.oauthCodeUses(codeHash),
        client: keys.oauthClients(req.clientId),
        agent: named === null ? null : keys.agents(named),
      }),
      named === null ? null : readNewestConnections(tx, named),
      // The window a first exchange gives its registration back to (which one the client
      // names), read in the same batch.
      tx.prefetch(refundWindowKeys()),
    ]);
    // The client first: an unknown one burns no code.
    const client = read.client.value;
    if (!clientIsLive(client, now)) return { error: unknownClient() };
    const code = read.code.value;
    if (!code) {
      const use = read.use.value;
      if (use && use.expires_at > now) {
        const grant = await tx.get(keys.oauthGrants(use.grant_id));
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
    // A missing parameter the code requires is a malformed request, as a missing verifier is:
    // told so, and the code stays (RFC 6749 §5.2 `invalid_request`).
    if (req.redirectUri === undefined && !code.redirect_uri_omitted) {
      return {
        error: new InvalidRequestError(
          '"redirect_uri" is required: the authorization request sent one; send exactly that URI.',
        ),
      };
    }
    tx.delete(keys.oauthCodes(codeHash));
    if (code.expires_at <= now) {
      return { error: new InvalidGrantError("The authorization code has expired.") };
    }
    if (code.client_id !== req.clientId) {
      return {
        error: new InvalidGrantError("The authorization code was issued to another client."),
      };
    }
    const sameRedirect = req.redirectUri === code.redirect_uri ||
      (code.redirect_uri_omitted && req.redirectUri === undefined);
    if (!sameRedirect) {
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
    // A code issued before codes named their agent reads the agent now.
    const agent = named === code.agent_id && read.agent
      ? read.agent.value
      : (await tx.get(keys.agents(code.agent_id))).value;
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
    const refresh = await newRefresh(code.agent_id, code.grant_id);
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
      refresh_hash: refresh.hash,
    };
    const connections = named === code.agent_id && namedConnections
      ? namedConnections
      : await readNewestConnections(tx, grant.agent_id);
    const head = {
      ...connections.head,
      updated_at: now,
      // A client completing its first authorization is counted for the account.
      ...(client.activated_at === null ? countNewClient(deps, connections.head ?? {}, now) : {}),
    };
    await refundCompletedRegistration(tx, deps, client);
    keepClientUntil(tx, client, now, grant.expires_at + TTL.unusedClient, grant.agent_id);
    // At the cap, the account's oldest connection ends in this commit.
    await capConnections(tx, grant.agent_id, client.client_id, now, head, connections);
    return { tokens: await newTokens(tx, now, grant, grant.scopes, refresh) };
  });
  return settle(value);
}

/** The answer to a refresh token presented again (its connection is revoked with it). */
function reusedError(): OAuthError {
  return new InvalidGrantError(
    "The refresh token was already used; the connection is revoked. Authorize again.",
  );
}

interface RefreshExchange {
  clientId: string;
  refreshToken: string;
  scope: string | undefined;
  resource: string | undefined;
}

/**
 * Exchanges a refresh token for a new access token and a new refresh token (rotation), at
 * most `countRefresh` times a UTC day per connection. The old token's record is deleted and
 * its hash kept in the grant (`withRotated`): presenting it again revokes the whole grant.
 * Within `TTL.refreshGrace` of a rotation nothing rotates again: the token it handed out, or
 * the one it replaced, is answered with that same refresh token and a new access token
 * (`rotatedInGrace`, `successorInGrace`). An optional `scope` narrows the new access token.
 */
export async function refreshGrant(deps: Deps, req: RefreshExchange): Promise<TokenSet> {
  if (!mayBeClientId(req.clientId)) throw unknownClient();
  const oldHash = await secretHash("refresh", req.refreshToken);
  // The grant and agent the token names are read with it (a token issued before tokens
  // named them reads them after).
  const named = tokenNames(req.refreshToken);
  const { value } = await transact(deps.kv, async (tx): Promise<Outcome> => {
    const now = deps.clock.now();
    const read = await tx.getNamed({
      old: keys.oauthRefreshTokens(oldHash),
      client: keys.oauthClients(req.clientId),
      grant: named === null ? null : keys.oauthGrants(named.grantId),
      agent: named === null ? null : keys.agents(named.agentId),
    });
    // The client first: an unknown one changes nothing.
    const client = read.client.value;
    if (!clientIsLive(client, now)) return { error: unknownClient() };
    const old = read.old.value;
    let grant: GrantRecord | null;
    // Within the grace of the grant's last rotation: the refresh token it handed out is
    // answered again (presented itself, or the token it replaced), and nothing rotates.
    let repeat: NewRefresh | null = null;
    if (!old) {
      // A replaced token: its hash is in the grant it names (a made-up one never is).
      const held = read.grant?.value;
      if (!held || held.expires_at <= now || !wasRotated(held, oldHash)) {
        return { error: new InvalidGrantError("The refresh token is invalid or expired.") };
      }
      if (held.client_id !== req.clientId) {
        return { error: new InvalidGrantError("The refresh token was issued to another client.") };
      }
      repeat = await successorInGrace(deps, held, req.refreshToken, oldHash, now);
      if (!repeat) {
        dropGrant(tx, held);
        return { error: reusedError() };
      }
      grant = held;
    } else {
      if (old.expires_at <= now) {
        return { error: new InvalidGrantError("The refresh token is invalid or expired.") };
      }
      if (old.client_id !== req.clientId) {
        return { error: new InvalidGrantError("The refresh token was issued to another client.") };
      }
      grant = named?.grantId === old.grant_id && read.grant
        ? read.grant.value
        : (await tx.get(keys.oauthGrants(old.grant_id))).value;
      if (!grant || grant.expires_at <= now) {
        return { error: new InvalidGrantError("The connection was revoked.") };
      }
      if (old.rotated_at !== null || grant.refresh_hash !== oldHash) {
        // A token of the older format keeps its record once replaced: within the grace of that
        // replacement it gets its successor again, as a named token does.
        repeat = old.rotated_at === null
          ? null
          : await successorInGrace(deps, grant, req.refreshToken, oldHash, now);
        if (!repeat) {
          dropGrant(tx, grant);
          return { error: reusedError() };
        }
      } else if (rotatedInGrace(grant, now)) repeat = { token: req.refreshToken, hash: oldHash };
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
    const agent = named?.agentId === grant.agent_id && read.agent
      ? read.agent.value
      : (await tx.get(keys.agents(grant.agent_id))).value;
    if (!(await grantStands(deps, grant, agent))) {
      dropGrant(tx, grant);
      return {
        error: new InvalidGrantError(
          "The API key this connection was linked with has been rotated or revoked; the connection has ended.",
        ),
      };
    }
    const count = countRefresh(deps, grant, now);
    const scopes = asked.length > 0 ? asked : grant.scopes;
    if (repeat) {
      // The grant's refresh token again, with an access token of its own.
      return { tokens: await newTokens(tx, now, { ...grant, ...count }, scopes, repeat) };
    }
    const refresh = await successorRefresh(deps, req.refreshToken, grant);
    if (named === null && old) {
      // A token naming no grant is found again only through its own record.
      const rotated: RefreshRecord = { ...old, rotated_at: now };
      tx.set(keys.oauthRefreshTokens(oldHash), rotated, {
        expireIn: Math.max(1, old.expires_at - now) * 1000,
      });
    } else tx.delete(keys.oauthRefreshTokens(oldHash));
    const renewed: GrantRecord = {
      ...grant,
      ...count,
      refreshed_at: now,
      expires_at: now + TTL.refresh,
      refresh_hash: refresh.hash,
      rotated_hashes: withRotated(grant, oldHash),
    };
    keepClientUntil(tx, client, now, renewed.expires_at + TTL.unusedClient);
    return { tokens: await newTokens(tx, now, renewed, scopes, refresh) };
  });
  return settle(value);
}
