/**
 * Validation of an authorization request (`GET /oauth/authorize` query), in the order
 * the standards require: client and redirect URI first — failures there must not be
 * redirected — then response type, PKCE (S256 only), resource, scopes and state, whose
 * failures go back to the client once it has completed an authorization (before that
 * they are shown on a page).
 */
import type { Deps } from "../domain/deps.ts";
import { type ClientRecord, getClient, redirectUriMatches } from "./clients.ts";
import { parseScopes } from "./tokens.ts";
import { oauthUrls, SCOPES } from "./urls.ts";

const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** Longest `state` accepted (it is echoed back). */
export const MAX_STATE = 2048;

/** The outcome of validating an authorization request. */
export type AuthorizeValidation =
  | { kind: "page"; title: string; message: string }
  | {
    kind: "redirect";
    redirectUri: string;
    state: string | null;
    error: string;
    description: string;
  }
  | {
    kind: "ok";
    client: ClientRecord;
    redirectUri: string;
    state: string | null;
    scopes: string[];
    codeChallenge: string;
    resource: string;
  };

function page(title: string, message: string): AuthorizeValidation {
  return { kind: "page", title, message };
}

/** Validates the query of an authorization request. */
export async function validateAuthorizeQuery(
  deps: Deps,
  q: URLSearchParams,
): Promise<AuthorizeValidation> {
  for (const name of ["client_id", "redirect_uri"]) {
    if (q.getAll(name).length > 1) {
      return page("Invalid request", `Parameter "${name}" was sent more than once.`);
    }
  }
  const clientId = q.get("client_id") ?? "";
  const client = clientId ? await getClient(deps, clientId) : null;
  if (!client) {
    return page(
      "Unknown application",
      clientId
        ? "This application is not registered with the board, or its registration expired."
        : 'The request has no "client_id".',
    );
  }
  const given = q.get("redirect_uri");
  let redirectUri: string;
  if (given === null) {
    if (client.redirect_uris.length !== 1) {
      return page("Invalid request", 'The request has no "redirect_uri".');
    }
    redirectUri = client.redirect_uris[0];
  } else if (client.redirect_uris.some((r) => redirectUriMatches(r, given))) {
    redirectUri = given;
  } else {
    return page(
      "Redirect address mismatch",
      "The redirect_uri does not match any address this application registered.",
    );
  }

  // From here on, errors are sent back to the application — but only to one that has
  // completed an authorization before. Anyone can register a client with any https
  // address, so for a new one the board shows the error itself: never an open redirect.
  const state = q.get("state");
  const fail = (error: string, description: string): AuthorizeValidation =>
    client.activated_at === null
      ? page(
        "Invalid authorization request",
        `${
          description.replace(/\.$/, "")
        } (error "${error}"). This application has not completed an authorization with the board yet, so the board shows the error here instead of sending your browser to the application's address.`,
      )
      : {
        kind: "redirect",
        redirectUri,
        state: state !== null && state.length <= MAX_STATE ? state : null,
        error,
        description,
      };
  for (const [name] of q) {
    if (q.getAll(name).length > 1) {
      return fail("invalid_request", `Parameter "${name}" was sent more than once.`);
    }
  }
  if (state !== null && state.length > MAX_STATE) {
    return fail("invalid_request", `"state" is longer than ${MAX_STATE} characters.`);
  }
  const responseType = q.get("response_type");
  if (responseType !== "code") {
    return responseType === null
      ? fail("invalid_request", '"response_type=code" is required.')
      : fail("unsupported_response_type", 'Only "response_type=code" is supported.');
  }
  const method = q.get("code_challenge_method");
  const challenge = q.get("code_challenge");
  if (!challenge) {
    return fail("invalid_request", "PKCE is required: send code_challenge with method S256.");
  }
  if (method !== "S256") {
    const was = method ? ` (not "${method}")` : "";
    return fail("invalid_request", `code_challenge_method must be "S256"${was}; plain is refused.`);
  }
  if (!CHALLENGE_PATTERN.test(challenge)) {
    return fail("invalid_request", "code_challenge must be 43 base64url characters (S256).");
  }
  const expected = oauthUrls(deps.config.baseUrl).resource;
  const resource = q.get("resource") ?? expected;
  if (resource !== expected) {
    return fail("invalid_target", `"resource" must be "${expected}".`);
  }
  const known = parseScopes(q.get("scope")).filter((s) =>
    (SCOPES as readonly string[]).includes(s)
  );
  const beyond = known.filter((s) => !client.scopes.includes(s));
  if (beyond.length > 0) {
    return fail(
      "invalid_scope",
      `This application registered for "${client.scopes.join(" ")}", not "${beyond.join(" ")}".`,
    );
  }
  return {
    kind: "ok",
    client,
    redirectUri,
    state,
    scopes: known.length > 0 ? known : client.scopes,
    codeChallenge: challenge,
    resource,
  };
}
