/**
 * Token format and lifetimes. Every OAuth secret (code, access token, refresh token,
 * CSRF token, consent cookie) is 256 random bits from Web Crypto, handed out once and
 * stored only as its SHA-256 hash. Tokens are opaque: their meaning lives in KV, so a
 * revocation is seen by every instance on its next read.
 */
import { base64url } from "./api_keys.ts";
import { sha256Hex } from "../hashing.ts";

/** Lifetimes in seconds. */
export const TTL = {
  /** Access tokens (audience `{base}/mcp`). */
  access: 3600,
  /** Each refresh token; a new one (fresh 30 days) is issued at every use. */
  refresh: 30 * 86400,
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

export type SecretKind = "access" | "refresh" | "code" | "csrf" | "consent";

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

const ACCESS_TOKEN_SHAPE = /^pb_at_[A-Za-z0-9_-]{43}$/;

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
