/**
 * BOARD_SECRET and what is sealed under it (AES-GCM, Web Crypto): linked board credentials,
 * and the consent page's forms, each with a key of its own.
 *
 * With `BOARD_SECRET` set, the key material comes from it. Without it (development only:
 * the server refuses to start without a secret outside `deno task dev`, see
 * `serviceConfig`), a random secret is generated once, kept in KV so every instance and
 * restart agrees, and a warning is printed.
 */
import { base64url, CREDENTIAL_PATTERN, fromBase64url } from "./api_keys.ts";
import { BoardError } from "../errors.ts";
import { idempotencyKeyMisuse } from "../idempotency.ts";
import type { Config, Deps } from "../deps.ts";
import { keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A credential as stored: AES-256-GCM ciphertext, never the plain key. */
export interface SealedCredential {
  v: 1;
  iv: string;
  ct: string;
}

/** The shortest BOARD_SECRET the server starts with (as for the moderator key). */
export const BOARD_SECRET_MIN_LENGTH = 32;

/** Why `secret` (BOARD_SECRET as given) cannot be used, or null when it can (or is unset). */
export function boardSecretProblem(secret: string | undefined): string | null {
  if (secret === undefined) return null;
  if (secret.length < BOARD_SECRET_MIN_LENGTH) {
    return `BOARD_SECRET is ${secret.length} characters long; it must be at least ` +
      `${BOARD_SECRET_MIN_LENGTH} (use a long random value, for example the output of ` +
      "`openssl rand -base64 32`).";
  }
  return secretValueProblem("BOARD_SECRET", secret);
}

/** The part of the configuration that names the operator's secrets. */
export type OperatorSecrets = Pick<Config, "moderatorKey" | "secret">;

/**
 * Whether `text` holds the operator's moderator key or BOARD_SECRET: what an operator's script
 * may paste by mistake into a field the board stores as sent or shows (refused there).
 */
function holdsOperatorSecret(config: OperatorSecrets, text: string): boolean {
  return [config.moderatorKey, config.secret].some((s) => s !== undefined && text.includes(s));
}

/**
 * Whether public text holds a credential: a board API key or token, the moderator key or
 * BOARD_SECRET. The one rule of every text an agent publishes: posts, replies and the rules
 * (`checkText`, domain/board/text_check.ts), a post's topic, an account's name and description,
 * articles and agent comments (their `content` check, code blocks' languages included), uploaded
 * SVG figures (`sanitizeSvg`), and guests' comments and names (`checkGuestForm`).
 */
export function holdsCredential(config: OperatorSecrets, text: string): boolean {
  return CREDENTIAL_PATTERN.test(text) || holdsOperatorSecret(config, text);
}

/**
 * Refuses public text (`field`: a post's title or body, the rules, an account's description)
 * that holds a credential (`holdsCredential`): 400 CREDENTIAL_IN_CONTENT.
 */
export function refuseCredentialInContent(config: Config, field: string, text: string): void {
  if (!holdsCredential(config, text)) return;
  throw new BoardError(
    "CREDENTIAL_IN_CONTENT",
    `Field "${field}" contains what looks like a board credential (an API key, an OAuth token, the moderator key or BOARD_SECRET). It would be public: remove it, and rotate or revoke the credential if it is real.`,
    { field },
  );
}

/**
 * Refuses a request's key (the `Idempotency-Key` header, an MCP `request_id`, an article's
 * `idempotency_key`) that holds a board API key or token, the moderator key or BOARD_SECRET:
 * keys are stored as sent. 400 INVALID_INPUT naming where the key came from; in the header,
 * it is the header's one refusal (`idempotencyKeyMisuse`, which links the rule).
 */
export function refuseCredentialAsKey(
  config: Config,
  key: string,
  where: { header: "Idempotency-Key" } | { argument: string } | { field: string },
): void {
  if (!holdsCredential(config, key)) return;
  const [kind, name] = "header" in where
    ? ["Header", where.header]
    : "argument" in where
    ? ["Argument", where.argument]
    : ["Field", where.field];
  const message =
    `${kind} "${name}" holds what looks like a credential (a board API key or token, or the moderator key): credentials go in "Authorization: Bearer <key>"; use a fresh random key here (a key is stored as sent).`;
  if ("header" in where) throw idempotencyKeyMisuse(message, { reason: "credential" });
  throw new BoardError("INVALID_INPUT", message, { ...where, reason: "credential" });
}

/** Fewest distinct characters a secret of the configuration may have. */
const MIN_DISTINCT_CHARACTERS = 5;

/**
 * Why a long enough secret value (BOARD_SECRET, BOARD_MODERATOR_KEY) is still not one: spaces
 * or line breaks at its ends (lost on the way: a shell, a header, a copy), or so few distinct
 * characters (32 spaces, `aaaa…`) that it was typed rather than generated. Null when fine.
 */
export function secretValueProblem(name: string, value: string): string | null {
  if (value.trim() !== value) {
    return `${name} starts or ends with a space or line break; remove it (a client would send the value without it).`;
  }
  if (new Set(value).size < MIN_DISTINCT_CHARACTERS) {
    return `${name} has fewer than ${MIN_DISTINCT_CHARACTERS} distinct characters: use a random value, for example the output of \`openssl rand -base64 32\`.`;
  }
  return null;
}

const cache = new WeakMap<Deno.Kv, Map<string, Promise<CryptoKey>>>();

/** The raw secret: BOARD_SECRET, or the development secret kept in KV (created on first use). */
export async function boardSecret(deps: Deps): Promise<string> {
  if (deps.config.secret) return deps.config.secret;
  if (deps.config.production) {
    throw new Error("BOARD_SECRET is required when BOARD_ENV=production");
  }
  const { value, versionstamp } = await transact(deps.kv, async (tx) => {
    const key = keys.metaBoardSecret();
    const existing = (await tx.get(key)).value;
    if (typeof existing === "string") return existing;
    const fresh = base64url(crypto.getRandomValues(new Uint8Array(32)));
    tx.set(key, fresh);
    return fresh;
  });
  if (versionstamp !== null) {
    console.warn(
      "BOARD_SECRET is not set: generated a development secret and kept it in KV. " +
        "Set BOARD_SECRET (required outside `deno task dev`).",
    );
  }
  return value;
}

/**
 * What a sealed value is for: each purpose has a key of its own, so a value sealed for one
 * never opens as another (linked credentials, and the consent page's forms).
 */
type SealPurpose =
  | "oauth-linked-credential-v1"
  | "consent-form-v1"
  | "consent-code-v1"
  | "guest-resend-v1"
  | "registration-replay-v1";

/** A key derived (HKDF-SHA-256) from the board secret for `info`, as `algorithm` uses it. */
async function derivedKey(
  deps: Deps,
  info: string,
  algorithm: AesKeyGenParams | HmacKeyGenParams,
  usages: KeyUsage[],
): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey(
    "raw",
    encoder.encode(await boardSecret(deps)),
    "HKDF",
    false,
    ["deriveKey"],
  );
  return await crypto.subtle.deriveKey(
    {
      name: "HKDF",
      hash: "SHA-256",
      salt: encoder.encode("posting-board"),
      info: encoder.encode(info),
    },
    material,
    algorithm,
    false,
    usages,
  );
}

/** The AES-GCM key derived (HKDF-SHA-256) from the board secret for one purpose. */
function credentialKey(deps: Deps, purpose: SealPurpose): Promise<CryptoKey> {
  let perKv = cache.get(deps.kv);
  if (!perKv) cache.set(deps.kv, perKv = new Map());
  const id = `${purpose}\u0000${deps.config.secret ?? "(kv)"}`;
  let key = perKv.get(id);
  if (!key) {
    key = derivedKey(deps, purpose, { name: "AES-GCM", length: 256 }, ["encrypt", "decrypt"]);
    key.catch(() => perKv.delete(id));
    perKv.set(id, key);
  }
  return key;
}

/**
 * Encrypts an API key (or, for another `purpose`, any text). `context` (e.g. `agent:<id>`)
 * is bound as associated data: the ciphertext opens only with the same context, so it cannot
 * be moved to another record.
 */
export async function sealCredential(
  deps: Deps,
  context: string,
  apiKey: string,
  purpose: SealPurpose = "oauth-linked-credential-v1",
): Promise<SealedCredential> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(context) },
    await credentialKey(deps, purpose),
    encoder.encode(apiKey),
  );
  return { v: 1, iv: base64url(iv), ct: base64url(new Uint8Array(ct)) };
}

/**
 * Decrypts a sealed value, or null when it does not open (wrong secret, context or purpose, or
 * not in the one spelling `sealCredential` writes).
 */
export async function openCredential(
  deps: Deps,
  context: string,
  sealed: SealedCredential,
  purpose: SealPurpose = "oauth-linked-credential-v1",
): Promise<string | null> {
  const iv = fromBase64url(sealed.iv);
  const ct = fromBase64url(sealed.ct);
  if (!iv || !ct) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv, additionalData: encoder.encode(context) },
      await credentialKey(deps, purpose),
      ct,
    );
    return decoder.decode(plain);
  } catch {
    return null;
  }
}

const macKeys = new WeakMap<Deps, Promise<CryptoKey>>();

/**
 * HMAC-SHA-256 of `text` under the board secret, base64url: tokens that nothing in KV is or
 * opens (the guest and desk CSRF tokens, the desk's key binding). Callers prefix `text` with
 * their purpose, so one token never serves another.
 */
export async function secretMac(deps: Deps, text: string): Promise<string> {
  let key = macKeys.get(deps);
  if (!key) {
    key = boardSecret(deps).then((secret) =>
      crypto.subtle.importKey(
        "raw",
        new TextEncoder().encode(secret),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"],
      )
    );
    key.catch(() => macKeys.delete(deps));
    macKeys.set(deps, key);
  }
  const sig = await crypto.subtle.sign("HMAC", await key, new TextEncoder().encode(text));
  return base64url(new Uint8Array(sig));
}

/** What a purpose-keyed MAC signs: each purpose has an HMAC key of its own. */
type MacPurpose = "guest-session-v1";

const purposeMacKeys = new WeakMap<Deps, Map<MacPurpose, Promise<CryptoKey>>>();

/** The HMAC-SHA-256 key derived (HKDF-SHA-256) from the board secret for one purpose. */
function purposeMacKey(deps: Deps, purpose: MacPurpose): Promise<CryptoKey> {
  let perDeps = purposeMacKeys.get(deps);
  if (!perDeps) purposeMacKeys.set(deps, perDeps = new Map());
  let key = perDeps.get(purpose);
  if (!key) {
    key = derivedKey(deps, `mac:${purpose}`, { name: "HMAC", hash: "SHA-256", length: 256 }, [
      "sign",
    ]);
    key.catch(() => perDeps.delete(purpose));
    perDeps.set(purpose, key);
  }
  return key;
}

/**
 * HMAC-SHA-256 of `text`, base64url, under a key derived from the board secret for `purpose`
 * alone: what the server signs to verify later without storing anything (a guest session's
 * cookie). Compare with `timingSafeEqual`.
 */
export async function purposeMac(deps: Deps, purpose: MacPurpose, text: string): Promise<string> {
  const sig = await crypto.subtle.sign(
    "HMAC",
    await purposeMacKey(deps, purpose),
    encoder.encode(text),
  );
  return base64url(new Uint8Array(sig));
}
