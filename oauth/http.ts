/**
 * HTTP plumbing shared by the OAuth endpoints: the `{error, error_description}` error
 * object with the right status, bounded form-body reading, and the per-operation rate
 * limit applied around every JSON endpoint.
 */
import type { Context } from "hono";
import { BoardError, TxConflictError } from "../domain/errors.ts";
import { callBucket, oauthErrorBody } from "../routes/http.ts";
import { readBoundedForm, readBoundedText } from "../routes/body_reader.ts";
import type { AppEnv } from "../routes/env.ts";
import { admitOAuthRequest, OAuthRateLimited } from "../domain/accounts/mod.ts";
import {
  InvalidRequestError,
  OAuthError,
  ServerError,
  TemporarilyUnavailableError,
  TooManyRequestsError,
} from "../domain/accounts/mod.ts";

/** Largest accepted form or JSON body on OAuth endpoints. */
const MAX_OAUTH_BODY_BYTES = 16384;

const STATUS: Record<string, number> = {
  invalid_client: 401,
  invalid_token: 401,
  insufficient_scope: 403,
  too_many_requests: 429,
  server_error: 500,
  temporarily_unavailable: 503,
};

/** The HTTP status of an OAuth error code (400 unless listed). */
export function oauthStatus(code: string): number {
  return STATUS[code] ?? 400;
}

/** Headers every token-bearing or error response of the token endpoints carries. */
export const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" } as const;

/** Turns anything thrown by an OAuth endpoint into the OAuth error object. */
function oauthErrorResponse(err: unknown, headers: Record<string, string> = {}): Response {
  let error: OAuthError;
  const extra: Record<string, string> = { ...headers };
  if (err instanceof OAuthError) error = err;
  else if (err instanceof OAuthRateLimited) {
    error = new TooManyRequestsError(err.message);
    extra["Retry-After"] = String(err.retryAfter);
  } else if (err instanceof TxConflictError) {
    error = new TemporarilyUnavailableError("The board is busy; retry shortly.");
    extra["Retry-After"] = "1";
  } else if (err instanceof BoardError) {
    if (err.status === 429 || err.status === 503) {
      error = err.status === 429
        ? new TooManyRequestsError(err.message)
        : new TemporarilyUnavailableError(err.message);
      extra["Retry-After"] = String(Math.max(1, Math.ceil(err.retryAfter ?? 1)));
    } else error = new InvalidRequestError(err.message);
  } else {
    console.error("unhandled OAuth error", err);
    error = new ServerError("Something went wrong on the board's side; retry later.");
  }
  return Response.json(oauthErrorBody(error.errorCode, error.message), {
    status: oauthStatus(error.errorCode),
    headers: extra,
  });
}

/**
 * Wraps a JSON OAuth endpoint: applies the per-network limit of `operation` and maps
 * errors to the OAuth error object (with `headers`, e.g. no-store on the token endpoint).
 */
export function oauthEndpoint(
  operation: string,
  handler: (c: Context<AppEnv>) => Promise<Response> | Response,
  headers: Record<string, string> = {},
): (c: Context<AppEnv>) => Promise<Response> {
  return async (c) => {
    try {
      // These endpoints are CORS-open: another site's page spends its own allowance.
      admitOAuthRequest(c.get("deps"), operation, callBucket(c));
      return await handler(c);
    } catch (err) {
      return oauthErrorResponse(err, headers);
    }
  };
}

/** What a body read of the authorization server answers: InvalidRequestError, always. */
function oauthBodyErrors(limit: number) {
  return {
    // A client that stops mid-body is an invalid request, not a server error.
    incomplete: () => new InvalidRequestError("The request body ended before it was complete."),
    tooLarge: () => new InvalidRequestError(`The request body exceeds ${limit} bytes.`),
    encoded: (coding: string) =>
      new InvalidRequestError(`Send the request body uncompressed, not as "${coding}".`),
    notUtf8: () => new InvalidRequestError("The request body is not valid UTF-8."),
    notForm: () =>
      new InvalidRequestError(
        'Send the parameters as a form: "Content-Type: application/x-www-form-urlencoded".',
      ),
  };
}

/** Reads a bounded body as text, or throws InvalidRequestError. */
export async function readOAuthText(req: Request, limit = MAX_OAUTH_BODY_BYTES): Promise<string> {
  return await readBoundedText(req, limit, oauthBodyErrors(limit));
}

/** Reads an `application/x-www-form-urlencoded` body (bounded), or throws InvalidRequestError. */
export async function readForm(
  req: Request,
  limit = MAX_OAUTH_BODY_BYTES,
): Promise<URLSearchParams> {
  return await readBoundedForm(req, limit, oauthBodyErrors(limit));
}

/** One parameter, or undefined; a repeated parameter is an invalid request (RFC 6749 §3.1). */
export function single(params: URLSearchParams, name: string): string | undefined {
  const all = params.getAll(name);
  if (all.length > 1) throw new InvalidRequestError(`Parameter "${name}" was sent more than once.`);
  return all[0];
}

/** A required parameter (non-empty), or InvalidRequestError. */
export function required(params: URLSearchParams, name: string): string {
  const v = single(params, name);
  if (!v) throw new InvalidRequestError(`Parameter "${name}" is required.`);
  return v;
}
