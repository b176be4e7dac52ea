/**
 * Validation of an authorization request (`GET /oauth/authorize` query), in the order
 * the standards require: client and redirect URI first, then response type, PKCE (S256
 * only), resource, scopes and state. Every failure is shown on a board page; the browser
 * is never redirected for an error. Anyone can register a client with any address (and
 * complete a flow with an agent of their own), so redirecting request errors would make
 * the board an open redirect. For failures after the redirect URI was validated the page
 * carries a link back to the application with the standard error parameters.
 */
import { oauthDescription } from "../routes/http.ts";
import type { Deps } from "../domain/deps.ts";
import {
  type ClientRecord,
  getClientEntry,
  parseScopes,
  redirectUriMatches,
  redirectUriProblem,
} from "../domain/accounts/mod.ts";
import { oauthUrls, SCOPES } from "./urls.ts";

const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/**
 * What the "Unknown application" page tells the person: an application that saved an
 * expired registration keeps sending it until it forgets it.
 */
export const UNKNOWN_CLIENT_HELP =
  "This application is not registered with the board, or its registration expired. If the application saved its registration, it keeps sending the old one: make it forget it, then connect again. Usually removing the board's server from the application and adding it again does this; otherwise delete the application's saved sign-in data for this board (for example the stored client information of an MCP SDK client, or the ~/.mcp-auth folder of mcp-remote).";

/** Longest `state` accepted (it is echoed back). */
const MAX_STATE = 2048;

/** The outcome of validating an authorization request. */
type AuthorizeValidation =
  | {
    kind: "page";
    title: string;
    message: string;
    /** The error response for the application, offered as a link (never followed by itself). */
    back?: ErrorReturn;
  }
  | {
    kind: "ok";
    client: ClientRecord;
    /** The client's entry as read (its keep-alive commit depends on it). */
    clientEntry: Deno.KvEntry<ClientRecord>;
    redirectUri: string;
    /** False when the request left `redirect_uri` out (the client's only one is used). */
    redirectUriSent: boolean;
    state: string | null;
    scopes: string[];
    codeChallenge: string;
    resource: string;
  };

/** An OAuth error response the person may take back to the application by a link. */
export interface ErrorReturn {
  redirectUri: string;
  state: string | null;
  error: string;
  description: string;
}

function page(title: string, message: string): AuthorizeValidation {
  return { kind: "page", title, message };
}

/**
 * A value from the request quoted in an error, when it is a short plain token (a parameter
 * name, a method): the page on the board and the application's `error_description` show no
 * sentence someone else wrote into a link.
 */
function echoed(value: string): string | null {
  return /^[A-Za-z0-9_.:-]{1,40}$/.test(value) ? `"${value}"` : null;
}

/**
 * The address of an error response (`error`, `error_description`, `state`, `iss`) at the
 * application's redirect URI.
 */
export function errorReturnUrl(back: ErrorReturn, issuer: string): string {
  const url = new URL(back.redirectUri);
  url.searchParams.set("error", back.error);
  url.searchParams.set("error_description", oauthDescription(back.description));
  if (back.state !== null) url.searchParams.set("state", back.state);
  url.searchParams.set("iss", issuer);
  return url.toString();
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
  const clientEntry = clientId ? await getClientEntry(deps, clientId) : null;
  const client = clientEntry?.value;
  if (!clientEntry || !client) {
    return page(
      "Unknown application",
      clientId ? UNKNOWN_CLIENT_HELP : 'The request has no "client_id".',
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

  // A registration stored before a scheme was refused is not honoured either.
  const problem = redirectUriProblem(redirectUri);
  if (problem) {
    return page(
      "Redirect address refused",
      `The application's redirect address ${problem}. The board does not send browsers there.`,
    );
  }

  // From here on, errors are shown with a link back to the application (never redirected).
  const state = q.get("state");
  const fail = (error: string, description: string): AuthorizeValidation => ({
    kind: "page",
    title: "Invalid authorization request",
    message: `${description.replace(/\.$/, "")} (error "${error}").`,
    back: {
      redirectUri,
      state: state !== null && state.length <= MAX_STATE ? state : null,
      error,
      description,
    },
  });
  for (const [name] of q) {
    if (q.getAll(name).length > 1) {
      const named = echoed(name);
      return fail(
        "invalid_request",
        named
          ? `Parameter ${named} was sent more than once.`
          : "A parameter was sent more than once.",
      );
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
    const was = method && echoed(method) ? ` (not ${echoed(method)})` : "";
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
    clientEntry,
    redirectUri,
    redirectUriSent: given !== null,
    state,
    scopes: known.length > 0 ? known : client.scopes,
    codeChallenge: challenge,
    resource,
  };
}
