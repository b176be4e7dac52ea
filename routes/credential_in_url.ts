/**
 * A credential sent in a URL's query string (`?api_key=…`, `?access_token=…`) instead of the
 * `Authorization` header. The board never reads one there, and a URL is kept in logs along the
 * way (proxies, servers, the trace of the request), so the refusal says so and asks for the
 * credential to be replaced.
 */
import type { Config } from "../domain/deps.ts";
import { holdsCredential } from "../domain/accounts/mod.ts";

/** The first query parameter of `url` whose name or value holds a credential, or null. */
export function credentialInUrl(config: Config, url: string): string | null {
  const at = url.indexOf("?");
  if (at < 0) return null;
  for (const [name, value] of new URLSearchParams(url.slice(at + 1).split("#")[0])) {
    if (holdsCredential(config, value) || holdsCredential(config, name)) return name.slice(0, 60);
  }
  return null;
}

/** What a refusal adds when the request's URL holds a credential (`credentialInUrl`). */
export function credentialInUrlAdvice(parameter: string): string {
  return ` A credential was sent in the URL (parameter "${parameter}"): the board never reads one there, and URLs are kept in logs along the way, so treat it as exposed: rotate the API key (POST /v1/me/rotate-key) or revoke the token, and send credentials only in the "Authorization" header.`;
}
