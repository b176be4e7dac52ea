/**
 * Dynamically registered clients (RFC 7591): public clients only, redirect URIs that are
 * HTTPS, loopback HTTP or a private-use scheme (RFC 8252), names under the board's text rules, a
 * few KB per client, and registrations that expire within an hour unless they complete an
 * authorization.
 */
import type { Deps } from "../deps.ts";
import type { ClientRecord } from "./oauth_records.ts";
import { keys } from "../../kv/keys.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import { displayNameProblem, takeCodeUnits, utf8Length } from "../text.ts";
import { chargeClientRegistration, type RegistrationAllowance } from "./oauth_rate_limits.ts";
import {
  InvalidClientError,
  InvalidClientMetadataError,
  type OAuthClientMetadata,
} from "./oauth_errors.ts";
import { parseScopes, TTL } from "./oauth_tokens.ts";
import { SCOPES } from "./oauth_tokens.ts";

export type { ClientRecord };

/** Registration limits (documented in docs/oauth.md); `recordBytes` caps what one client stores. */
export const CLIENT_LIMITS = {
  redirectUris: 10,
  uriLength: 2000,
  nameLength: 200,
  recordBytes: 4096,
} as const;

/** Thrown for a redirect URI the board refuses at registration (RFC 7591 `invalid_redirect_uri`). */
export class InvalidRedirectUriError extends InvalidClientMetadataError {
  static override errorCode = "invalid_redirect_uri";
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** True for an `http:`/`https:` URL whose host is a loopback name or address. */
function isLoopback(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname);
}

/** Why a redirect URI is refused, or null when it is acceptable. */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > CLIENT_LIMITS.uriLength) {
    return `is longer than ${CLIENT_LIMITS.uriLength} characters`;
  }
  if (!URI_CHARACTERS.test(uri)) {
    return "holds a character a URI cannot (a space, a control or a non-ASCII character, or one around it): percent-encode it or leave it out";
  }
  const url = URL.parse(uri);
  if (!url) return "is not an absolute URL";
  if (url.hash || uri.includes("#")) return "must not contain a fragment";
  if (url.username || url.password) return "must not contain user information";
  if (url.protocol === "https:") return null;
  if (url.protocol === "http:") {
    return isLoopback(url)
      ? null
      : "uses http: with a host that is not loopback (127.0.0.1, [::1] or localhost); use https:";
  }
  return privateSchemeProblem(url.protocol);
}

/**
 * Private-use schemes of known MCP clients that are not in reverse-DNS form, accepted by
 * name (docs/oauth.md "Redirect URIs"). Every other private-use scheme must be reverse-DNS.
 */
const KNOWN_CLIENT_SCHEMES: readonly string[] = [
  "cursor:",
  "vscode:",
  "vscode-insiders:",
  "windsurf:",
];

/**
 * Generic top-level domains a reverse-DNS scheme may start with (besides every two-letter
 * country code): `com.example.app:` is reverse-DNS, `claude.ai:` is not.
 */
const GENERIC_TLDS = new Set([
  "com",
  "org",
  "net",
  "edu",
  "gov",
  "mil",
  "int",
  "app",
  "dev",
  "info",
  "biz",
  "cloud",
  "tech",
  "xyz",
  "page",
  "software",
  "systems",
  "codes",
  "tools",
  "chat",
  "team",
  "works",
  "studio",
  "online",
  "site",
]);

const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/** True for a scheme in reverse-DNS form (RFC 8252 §7.1), such as `com.example.agent:`. */
function isReverseDnsScheme(protocol: string): boolean {
  const labels = protocol.replace(/:$/, "").toLowerCase().split(".");
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return false;
  return /^[a-z]{2}$/.test(labels[0]) || GENERIC_TLDS.has(labels[0]);
}

/** Why a non-http(s) scheme is refused as a redirect target, or null when it is accepted. */
function privateSchemeProblem(protocol: string): string | null {
  const scheme = protocol.toLowerCase();
  if (REFUSED_SCHEMES.has(scheme) || OS_HANDLER_SCHEMES.has(scheme) || /^ms-/.test(scheme)) {
    return `uses the scheme "${scheme}", which is not a redirect target`;
  }
  if (KNOWN_CLIENT_SCHEMES.includes(scheme) || isReverseDnsScheme(scheme)) return null;
  return `uses the private-use scheme "${scheme}", which is neither in reverse-DNS form (such as "com.example.app:") nor one of the known clients' schemes (${
    KNOWN_CLIENT_SCHEMES.map((k) => `"${k}"`).join(", ")
  })`;
}

/**
 * Schemes refused as redirect targets: script and inline content, local files and
 * browser-internal pages, and schemes that hand the code to another kind of program.
 */
const REFUSED_SCHEMES = new Set([
  "javascript:",
  "vbscript:",
  "data:",
  "blob:",
  "file:",
  "filesystem:",
  "about:",
  "view-source:",
  "chrome:",
  "chrome-extension:",
  "ftp:",
  "ws:",
  "wss:",
  "mailto:",
  "tel:",
  "sms:",
]);

/**
 * Schemes that open an operating-system handler (search, diagnostics, settings, installers,
 * Android intents, shell): refused even though the reverse-DNS rule would already refuse
 * most of them, so no future list change can let one through. Every `ms-…` scheme is refused
 * as well.
 */
const OS_HANDLER_SCHEMES = new Set([
  "search-ms:",
  "search:",
  "intent:",
  "android-app:",
  "shell:",
  "its:",
  "mk:",
  "hcp:",
  "res:",
  "jar:",
  "x-apple-systempreferences:",
  "smb:",
  "nfs:",
  "afp:",
  "steam:",
  "itms-services:",
]);

/** The characters a URI may hold as written (RFC 3986 §2): no space, control or non-ASCII. */
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;

/**
 * True when `given` is the registered redirect URI: an exact string match, or for a
 * loopback `http:` URI the same host, path and query on any port (RFC 8252 §7.3), written
 * with URI characters only. The URL parser drops tabs and newlines and escapes controls, so
 * without that rule a URI padded with them would match while its raw text, which the request
 * carries to the token exchange, grows past what the consent form can hold.
 */
export function redirectUriMatches(registered: string, given: string): boolean {
  if (registered === given) return true;
  if (!URI_CHARACTERS.test(given)) return false;
  const [a, b] = [URL.parse(registered), URL.parse(given)];
  if (!a || !b) return false;
  if (a.protocol !== "http:" || !isLoopback(a) || given.includes("#") || b.username || b.password) {
    return false;
  }
  return a.protocol === b.protocol && a.hostname === b.hostname && a.pathname === b.pathname &&
    a.search === b.search;
}

/** Scopes kept from a registration request: known values only; the full set by default. */
function registrationScopes(scope: string | undefined): string[] {
  const known = parseScopes(scope).filter((s) => (SCOPES as readonly string[]).includes(s));
  return known.length > 0 ? known : [...SCOPES];
}

/**
 * Validates client metadata (already parsed with the SDK schema) and stores the client,
 * charging the registration limits of its allowance (network, and instance-wide) in the
 * same commit (a refused registration counts nothing).
 */
export async function registerClient(
  deps: Deps,
  meta: OAuthClientMetadata,
  allowance: RegistrationAllowance,
): Promise<ClientRecord> {
  if (meta.redirect_uris.length === 0) {
    throw new InvalidRedirectUriError("Register at least one redirect URI.");
  }
  if (meta.redirect_uris.length > CLIENT_LIMITS.redirectUris) {
    throw new InvalidRedirectUriError(
      `Register at most ${CLIENT_LIMITS.redirectUris} redirect URIs.`,
    );
  }
  for (const uri of meta.redirect_uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new InvalidRedirectUriError(`The redirect URI "${uri}" ${problem}.`);
  }
  if (meta.grant_types && !meta.grant_types.includes("authorization_code")) {
    throw new InvalidClientMetadataError(
      'The board issues tokens only through the "authorization_code" grant.',
    );
  }
  if (meta.response_types && !meta.response_types.includes("code")) {
    throw new InvalidClientMetadataError('The board supports only the "code" response type.');
  }
  if ((meta.client_name?.length ?? 0) > CLIENT_LIMITS.nameLength) {
    throw new InvalidClientMetadataError(
      `"client_name" is longer than ${CLIENT_LIMITS.nameLength} characters.`,
    );
  }
  const nameProblem = meta.client_name ? displayNameProblem(meta.client_name) : null;
  if (nameProblem) throw new InvalidClientMetadataError(`"client_name" ${nameProblem}.`);
  const now = deps.clock.now();
  const client: ClientRecord = {
    client_id: deps.newId(),
    client_name: meta.client_name?.trim() || null,
    client_uri: meta.client_uri && meta.client_uri.length <= CLIENT_LIMITS.uriLength
      ? meta.client_uri
      : null,
    redirect_uris: [...new Set(meta.redirect_uris)],
    scopes: registrationScopes(meta.scope),
    // Cut between characters: an emoji across the cut would leave half a surrogate pair, which
    // the registration answer would echo as an escape some JSON parsers refuse (serde_json).
    software_id: meta.software_id == null ? null : takeCodeUnits(meta.software_id, 200),
    software_version: meta.software_version == null
      ? null
      : takeCodeUnits(meta.software_version, 100),
    created_at: now,
    expires_at: now + TTL.pendingClient,
    activated_at: null,
    ...(allowance.crossOrigin ? { cross_origin: true } : {}),
  };
  const bytes = utf8Length(JSON.stringify(client));
  if (bytes > CLIENT_LIMITS.recordBytes) {
    throw new InvalidClientMetadataError(
      `The registration would store ${bytes} bytes; at most ${CLIENT_LIMITS.recordBytes} are kept per client (register fewer or shorter URIs).`,
    );
  }
  const key = keys.oauthClients(client.client_id);
  await transact(deps.kv, async (tx) => {
    const existing = await chargeClientRegistration(tx, deps, allowance, key);
    if (existing.versionstamp !== null) throw new Error("client id collision");
    tx.set(key, client, { expireIn: TTL.pendingClient * 1000 });
  });
  return client;
}

/** The RFC 7591 registration response for a client (no secret is ever issued). */
export function clientInformation(client: ClientRecord) {
  return {
    client_id: client.client_id,
    client_id_issued_at: client.created_at,
    client_name: client.client_name ?? undefined,
    client_uri: client.client_uri ?? undefined,
    redirect_uris: client.redirect_uris,
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    scope: client.scopes.join(" "),
    software_id: client.software_id ?? undefined,
    software_version: client.software_version ?? undefined,
  };
}

/** True while a client record is usable (its stored expiry has not passed). */
export function clientIsLive(client: ClientRecord | null, now: number): client is ClientRecord {
  return client !== null && client.expires_at > now;
}

/** A request naming no live client (unknown, or its registration expired): `invalid_client`. */
export function unknownClient(): InvalidClientError {
  return new InvalidClientError("The client is unknown or its registration expired.");
}

/** Whether `clientId` could name a client (one the board issues is far shorter than 100). */
export function mayBeClientId(clientId: string): boolean {
  return clientId.length > 0 && clientId.length <= 100;
}

/** A live client's entry as read (a commit may depend on it: `Tx.seen`), or null. */
export async function getClientEntry(
  deps: Deps,
  clientId: string,
): Promise<Deno.KvEntry<ClientRecord> | null> {
  if (!mayBeClientId(clientId)) return null;
  const entry = await deps.kv.get(keys.oauthClients(clientId));
  return clientIsLive(entry.value, deps.clock.now()) ? entry as Deno.KvEntry<ClientRecord> : null;
}

/**
 * Marks a client used and keeps it until `until` (its newest refresh token's expiry plus
 * a day). Call inside the commit that issues tokens (the client was read with `tx.get`);
 * a code exchange names the account it connects (`agentId`), which `ClientRecord.owner`
 * records.
 */
export function keepClientUntil(
  tx: Tx,
  client: ClientRecord,
  now: number,
  until: number,
  agentId?: string,
): void {
  const { owner: _, ...rest } = client;
  const owner = agentId === undefined
    ? client.owner
    : client.activated_at === null || client.owner === agentId
    ? agentId
    : undefined;
  const updated: ClientRecord = {
    ...rest,
    activated_at: client.activated_at ?? now,
    expires_at: Math.max(client.expires_at, until),
    ...(owner ? { owner } : {}),
  };
  tx.set(keys.oauthClients(client.client_id), updated, {
    expireIn: (updated.expires_at - now) * 1000,
  });
}
