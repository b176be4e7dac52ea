/**
 * Token format and lifetimes. Every OAuth secret (code, access token, refresh token,
 * CSRF token, consent cookie) is 256 random bits from Web Crypto, handed out once and
 * stored only as its SHA-256 hash. Tokens are opaque: their meaning lives in KV, so a
 * revocation is seen by every instance on its next read. Access and refresh tokens, and codes,
 * also name the records a check reads with them (the agent's id, and for tokens the grant's),
 * after the secret: the whole token is hashed, so changing a name finds no record, and the
 * check reads every record it needs in one batch. A code also carries a tag under the board
 * secret, so a made-up code names no agent and costs no more than any unknown code.
 */
import { ACCESS_TOKEN_SHAPE, base64url } from "./api_keys.ts";
import { sha256Hex, timingSafeEqual } from "../hashing.ts";

/** Lifetimes in seconds. */
export const TTL = {
  /** Access tokens (audience `{base}/mcp`). */
  access: 3600,
  /** Each refresh token; a new one (fresh 30 days) is issued at every use. */
  refresh: 30 * 86400,
  /**
   * After a rotation, how long refreshes (with the token it handed out or the one it replaced)
   * get that same refresh token back instead of rotating again: parallel refreshes, a retry.
   */
  refreshGrace: 60,
  /** Authorization codes. */
  code: 120,
  /** A redeemed code's marker, so a replay is detected (longer than any code lives). */
  codeUse: 3600,
  /** An authorization request waiting on the consent page. */
  authRequest: 15 * 60,
  /** The consent browser session (cookie) and the account-reuse record it keys. */
  consentSession: 10 * 60,
  /** A client registration that has never completed an authorization. */
  pendingClient: 3600,
  /** How long a client outlives its newest refresh token. */
  unusedClient: 24 * 3600,
} as const;

export const ACCESS_TOKEN_PREFIX = "pb_at_";
export const REFRESH_TOKEN_PREFIX = "pb_rt_";

/** Matches a board OAuth access or refresh token (for leak checks). */
export const OAUTH_TOKEN_PATTERN = /pb_(?:at|rt)_[A-Za-z0-9_-]{43}/;

type SecretKind = "access" | "refresh" | "code" | "csrf" | "consent";

/** A new secret: 256 random bits, base64url, with an optional prefix. */
export function newSecret(prefix = ""): string {
  return prefix + base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** The stored form of a secret: SHA-256 hex, separated per kind. */
export function secretHash(kind: SecretKind, value: string): Promise<string> {
  return sha256Hex(`board-oauth-${kind}:${value}`);
}

/** True for strings shaped like a board access token. */
export function looksLikeAccessToken(token: string): boolean {
  return ACCESS_TOKEN_SHAPE.test(token);
}

/** The records a token or code names: its agent, and for a token its grant. */
interface TokenNames {
  agentId: string;
  grantId: string;
}

/** An id as a token names it (ids are UUIDs; the hash check makes any other value harmless). */
const ID = "[A-Za-z0-9-]{1,64}";
const NAMED_TOKEN = new RegExp(`^pb_(?:at|rt)_[A-Za-z0-9_-]{43}\\.(${ID})\\.(${ID})$`);
const NAMED_CODE = new RegExp(`^([A-Za-z0-9_-]{43}\\.(${ID}))\\.([A-Za-z0-9_-]{43})$`);

/**
 * A new access or refresh token naming its agent and grant (`<secret>.<agent id>.<grant id>`).
 */
export function newNamedToken(prefix: string, names: TokenNames): string {
  return `${newSecret(prefix)}.${names.agentId}.${names.grantId}`;
}

/**
 * The agent and grant an access or refresh token names, or null for a token issued before
 * tokens named them (those are checked with one read more until they expire).
 */
export function tokenNames(token: string): TokenNames | null {
  const m = NAMED_TOKEN.exec(token);
  return m ? { agentId: m[1], grantId: m[2] } : null;
}

/**
 * A new authorization code naming the agent it links, tagged under the board secret
 * (`<secret>.<agent id>.<tag>`, the tag made by `tag` from the rest): only a code the board
 * issued names an agent (`codeAgentId`).
 */
export async function newNamedCode(
  agentId: string,
  tag: (named: string) => Promise<string>,
): Promise<string> {
  const named = `${newSecret()}.${agentId}`;
  return `${named}.${await tag(named)}`;
}

/**
 * The agent an authorization code names when its tag is the one `tag` makes, else null (a
 * made-up code, or one issued before codes named their agent): the code exchange reads the
 * agent's records beside the code only for a code the board issued.
 */
export async function codeAgentId(
  code: string,
  tag: (named: string) => Promise<string>,
): Promise<string | null> {
  const m = NAMED_CODE.exec(code);
  return m && timingSafeEqual(await tag(m[1]), m[3]) ? m[2] : null;
}

/** Splits a space-delimited scope string into unique values, keeping order. */
export function parseScopes(scope: string | undefined | null): string[] {
  if (!scope) return [];
  return [...new Set(scope.split(" ").filter((s) => s.length > 0))];
}

/** The OAuth scopes the board grants. */
export const SCOPES = ["board:read", "board:write"] as const;
export type Scope = (typeof SCOPES)[number];

/** The scopes a raw API key holds (every agent scope): one shared set, never modified. */
export const API_KEY_SCOPES: Set<string> = new Set(SCOPES);
