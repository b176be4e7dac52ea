/**
 * `POST /oauth/token`: the `authorization_code` (PKCE S256) and `refresh_token` grants
 * for public clients. Responses carry `Cache-Control: no-store`.
 */
import type { Context } from "hono";
import type { AppEnv } from "../routes/env.ts";
import { CODE_VERIFIER_PATTERN, exchangeCode, refreshGrant } from "../domain/accounts/mod.ts";
import { NO_STORE, readForm, required, single } from "./http.ts";
import { oauthErrorBody } from "../routes/http.ts";
import {
  InvalidClientError,
  InvalidRequestError,
  UnsupportedGrantTypeError,
} from "../domain/accounts/mod.ts";

/** Handles a token request (form-encoded body). */
export async function handleToken(c: Context<AppEnv>): Promise<Response> {
  const deps = c.get("deps");
  const form = await readForm(c.req.raw);
  const authorization = c.req.header("authorization");
  if (authorization || single(form, "client_secret")) {
    const error = new InvalidClientError(
      "Clients of this board are public: send only client_id (no secret was issued).",
    );
    if (!authorization) throw error;
    // A client that authenticated in the Authorization header is answered with the scheme it
    // used (RFC 6749 §5.2).
    const scheme = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+/.exec(authorization.trim())?.[0] ?? "Basic";
    return c.json(oauthErrorBody(error.errorCode, error.message), 401, {
      ...NO_STORE,
      "WWW-Authenticate": `${scheme} realm="oauth"`,
    });
  }
  // The client is read with the grant's own keys, in the exchange's one read batch.
  const clientId = required(form, "client_id");
  const grantType = required(form, "grant_type");
  const resource = single(form, "resource");
  let tokens;
  if (grantType === "authorization_code") {
    const codeVerifier = required(form, "code_verifier");
    if (!CODE_VERIFIER_PATTERN.test(codeVerifier)) {
      throw new InvalidRequestError(
        '"code_verifier" must be 43-128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636).',
      );
    }
    tokens = await exchangeCode(deps, {
      clientId,
      code: required(form, "code"),
      codeVerifier,
      redirectUri: single(form, "redirect_uri"),
      resource,
    });
  } else if (grantType === "refresh_token") {
    tokens = await refreshGrant(deps, {
      clientId,
      refreshToken: required(form, "refresh_token"),
      scope: single(form, "scope"),
      resource,
    });
  } else {
    throw new UnsupportedGrantTypeError(
      `The grant type "${grantType}" is not supported; use authorization_code or refresh_token.`,
    );
  }
  return c.json(tokens, 200, NO_STORE);
}
