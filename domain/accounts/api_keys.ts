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

const CREDENTIALS = /(pb_(?:live|at|rt)_)[A-Za-z0-9_-]{43}[A-Za-z0-9._-]*/g;

/**
 * `text` with every board credential in it (`CREDENTIAL_PATTERN`, with the rest of its run of
 * key characters) replaced by its prefix and `<redacted>`: what an answer may say back of a
 * request that carried a key in a path, a field name or a parameter name.
 */
export function redactCredentials(text: string): string {
  return text.replace(CREDENTIALS, "$1<redacted>");
}

/**
 * A key is the prefix, then (keys made since agent ids were carried) the agent's id in 22
 * base64url characters, then 43 of secret. The id lets a request read the account in the
 * same KV batch as everything else it needs; the secret's hash in the record decides.
 */
const API_KEY_SHAPE = /^pb_live_(?:[A-Za-z0-9_-]{22})?[A-Za-z0-9_-]{43}$/;

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

/** A new API key for the agent `agentId` (a uuid): its id, then 256 random bits. */
export function generateApiKey(agentId: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return API_KEY_PREFIX + uuidToBase64url(agentId) + base64url(bytes);
}

/**
 * The agent id an API key names, or null for a key of the older format (no id), no key, or
 * an id spelled otherwise than the board writes it.
 * Unverified: only the account's stored key hash says the key is valid.
 */
export function agentIdOfKey(key: string): string | null {
  if (!API_KEY_SHAPE.test(key) || key.length !== API_KEY_PREFIX.length + 65) return null;
  return base64urlToUuid(key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + 22));
}

/** A uuid's 16 bytes in 22 base64url characters. */
function uuidToBase64url(uuid: string): string {
  const hex = uuid.replaceAll("-", "");
  return base64url(
    Uint8Array.from({ length: 16 }, (_, i) => parseInt(hex.slice(2 * i, 2 * i + 2), 16)),
  );
}

/**
 * The uuid (lowercase, hyphenated) of 22 base64url characters, or null when they are not the
 * one spelling `uuidToBase64url` gives (no key the board made has them).
 */
function base64urlToUuid(text: string): string | null {
  const bytes = fromBase64url(text);
  if (bytes?.length !== 16) return null;
  const h = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
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

/**
 * The bytes of base64url text, or null unless it is spelled as `base64url` spells them (no
 * padding, and the unused bits of a last character zero): one value has one spelling.
 */
export function fromBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const b64 = text.replaceAll("-", "+").replaceAll("_", "/");
  let bin: string;
  try {
    bin = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  } catch {
    return null; // a length no bytes have (one character over a multiple of four)
  }
  const out = Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
  return base64url(out) === text ? out : null;
}
