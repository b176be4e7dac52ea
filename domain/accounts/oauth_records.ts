/**
 * The OAuth records kept in KV. Secrets never appear in them: tokens and codes are
 * keyed by their SHA-256 hash, and a grant's board credential is AES-GCM sealed.
 */
import { keys } from "../../kv/keys.ts";
import type { Tx } from "../../kv/tx.ts";
import type { SealedCredential } from "./secret.ts";

export interface CodeRecord {
  client_id: string;
  redirect_uri: string;
  /**
   * True when the authorization request left `redirect_uri` out: the token request may leave it
   * out too (RFC 6749 §4.1.3), or send that same URI.
   */
  redirect_uri_omitted?: true;
  code_challenge: string;
  resource: string;
  scopes: string[];
  agent_id: string;
  grant_id: string;
  credential: SealedCredential;
  created_at: number;
  expires_at: number;
}

export interface CodeUseRecord {
  grant_id: string;
  expires_at: number;
}

export interface GrantRecord {
  id: string;
  agent_id: string;
  client_id: string;
  scopes: string[];
  resource: string;
  /** The agent's API key, AES-GCM sealed; never returned to anyone. */
  credential: SealedCredential;
  /**
   * Hash of that key (as `Agent.key_hash`): the connection stands only while the agent still
   * holds it (domain/accounts/connections.ts). Absent on grants stored before it was kept.
   */
  key_hash?: string;
  created_at: number;
  refreshed_at: number;
  /** Expiry of the newest refresh token. */
  expires_at: number;
  /** Hash of the current (not yet rotated) refresh token. */
  refresh_hash: string;
  /**
   * Hashes of the refresh tokens this grant's refreshes replaced, newest first (at most
   * `ROTATED_HASHES_KEPT`): presenting one again revokes the grant (`wasRotated`). Absent on
   * grants stored before it was kept.
   */
  rotated_hashes?: string[];
  /** The UTC day of the latest refresh, and how many refreshes that day (the daily cap). */
  refresh_day?: number;
  refreshes_that_day?: number;
}

export interface AccessRecord {
  grant_id: string;
  agent_id: string;
  client_id: string;
  scopes: string[];
  audience: string;
  issued_at: number;
  expires_at: number;
}

export interface RefreshRecord {
  grant_id: string;
  client_id: string;
  issued_at: number;
  expires_at: number;
  /**
   * Set when the token was exchanged; presenting it again revokes the grant. A named token's
   * record is deleted when it is exchanged (its grant keeps its hash in `rotated_hashes`); only
   * a token that names no grant, and records stored before, are kept rotated.
   */
  rotated_at: number | null;
}

/** The body of a successful token response. */
export interface TokenSet {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** How many replaced refresh tokens a grant remembers (`GrantRecord.rotated_hashes`). */
export const ROTATED_HASHES_KEPT = 8;

/** True when `hash` is of a refresh token one of the grant's recent refreshes replaced. */
export function wasRotated(grant: GrantRecord, hash: string): boolean {
  return grant.rotated_hashes?.includes(hash) ?? false;
}

/** The grant's `rotated_hashes` once the refresh token of hash `hash` is replaced. */
export function withRotated(grant: GrantRecord, hash: string): string[] {
  return [hash, ...(grant.rotated_hashes ?? [])].slice(0, ROTATED_HASHES_KEPT);
}

/**
 * Deletes a grant and its per-agent index entry: every token of it stops working. Its client
 * is marked for the release check (`markClientRelease`).
 */
export function dropGrant(tx: Tx, grant: GrantRecord): void {
  tx.delete(keys.oauthGrants(grant.id)).delete(keys.oauthGrantsByAgent(grant.agent_id, grant.id));
  markClientRelease(tx, grant.agent_id, grant.client_id);
}

/** How long a release mark is kept: a client never outlives its last refresh token by more. */
const RELEASE_MARK_MS = (30 + 1) * 86400 * 1000;

/**
 * Marks, in a commit that ends a connection of `agentId` through `clientId`, that the tidy-up
 * sweep should check whether the client is still used (domain/accounts/client_releases.ts).
 * A blind write: several ends of one pair make one mark.
 */
export function markClientRelease(
  op: Deno.AtomicOperation | Tx,
  agentId: string,
  clientId: string,
): void {
  op.set(keys.oauthClientReleases(agentId, clientId), true, { expireIn: RELEASE_MARK_MS });
}

/** A dynamically registered public OAuth client (registered in oauth_clients.ts). */
export interface ClientRecord {
  client_id: string;
  client_name: string | null;
  client_uri: string | null;
  redirect_uris: string[];
  /** Scopes the client may request. */
  scopes: string[];
  software_id: string | null;
  software_version: string | null;
  created_at: number;
  /** Enforced in code; the KV entry also carries a matching `expireIn`. */
  expires_at: number;
  /** When the client first exchanged a code for tokens, or null. */
  activated_at: number | null;
  /**
   * The one account the client has completed authorizations with: set by its first code
   * exchange, dropped when another account's exchange uses it. Absent on clients several
   * accounts use, pending ones, and ones stored before it was kept.
   */
  owner?: string;
  /**
   * Registered from another site's page (a foreign `Origin`): counted in the cross-origin
   * registration allowances. Absent on records stored before it existed (false).
   */
  cross_origin?: boolean;
}

declare module "../../kv/key_values.ts" {
  interface KeyValues {
    oauthCodes: CodeRecord;
    oauthCodeUses: CodeUseRecord;
    oauthGrants: GrantRecord;
    oauthAccessTokens: AccessRecord;
    oauthRefreshTokens: RefreshRecord;
    oauthClients: ClientRecord;
    oauthClientReleases: true;
  }
}
