import { sha256Hex } from "../hashing.ts";

/** Prefix of every board API key: lets agents and the leak check recognise one. */
export const API_KEY_PREFIX = "pb_live_";
/** Matches anything in the board's key format. */
export const API_KEY_PATTERN = /pb_live_[A-Za-z0-9_-]{43}/;

/**
 * Matches any board credential in text: API keys (`pb_live_`) and OAuth access and refresh
 * tokens (`pb_at_`, `pb_rt_`). Public text containing one is refused so nobody leaks it.
 */
export const CREDENTIAL_PATTERN = /pb_(?:live|at|rt)_[A-Za-z0-9_-]{43}/;

const API_KEY_SHAPE = /^pb_live_[A-Za-z0-9_-]{43}$/;

/**
 * An OAuth access token: 43 characters of secret, then (tokens issued since they carry them)
 * `.` and the ids of its agent and its grant, so that a check knows every key it reads at
 * once (domain/accounts/oauth_token_checks.ts). The hash stored covers the whole token.
 */
export const ACCESS_TOKEN_SHAPE =
  /^pb_at_[A-Za-z0-9_-]{43}(?:\.[A-Za-z0-9-]{1,64}\.[A-Za-z0-9-]{1,64})?$/;

/** True when `token` has exactly the shape of a board API key. */
export function apiKeyShaped(token: string): boolean {
  return API_KEY_SHAPE.test(token);
}

/**
 * True when a bearer token has the shape of a board credential: an API key or an OAuth
 * access token. Anything else can never authenticate, so it is refused without a lookup.
 */
export function credentialShaped(token: string): boolean {
  return API_KEY_SHAPE.test(token) || ACCESS_TOKEN_SHAPE.test(token);
}

/** A new high-entropy API key (256 random bits). */
export function generateApiKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return API_KEY_PREFIX + base64url(bytes);
}

/** The stored form of a key: SHA-256 hex (keys are random, so no slow hash is needed). */
export function hashApiKey(key: string): Promise<string> {
  return sha256Hex(`board-api-key:${key}`);
}

/** Standard base64 (with padding). */
export function base64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** URL-safe base64 without padding. */
export function base64url(bytes: Uint8Array): string {
  return base64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
