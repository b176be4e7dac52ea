/** HTTP hooks of the rate limits (docs/limits.md): registration attempts and edge limits. */
import type { Context, MiddlewareHandler } from "hono";
import { chargeRegistrationAttempt, credentialShaped } from "../domain/accounts/mod.ts";
import { BoardError } from "../domain/errors.ts";
import { type Admission, edgeLimiter } from "../domain/limits/mod.ts";
import type { AppEnv, Caller } from "./env.ts";
import { callBucket } from "./http.ts";

/** Registration requests whose attempt the registration commit itself counted. */
const attemptsCounted = new WeakSet<Request>();

/** Says that the registration commit of this request counted its attempt. */
export function attemptCounted(c: Context<AppEnv>): void {
  attemptsCounted.add(c.req.raw);
}

/**
 * Counts every `POST /v1/agents` against the network's registration attempts (exact, in
 * KV), whatever its validation found: invalid attempts count too. A registration counts its
 * attempt in its own commit (one read batch and one commit in all: `attemptCounted`); any
 * other answer — bad JSON, missing headers, a taken name — is counted here once it is known,
 * and becomes 429 RATE_LIMITED when the network's attempts for the minute are spent (as it
 * would have been before validation). Mounted after the browser check, so a refused browser
 * request spends nothing.
 */
export const registrationAttempts: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (c.req.method !== "POST" || attemptsCounted.has(c.req.raw)) return;
  try {
    await chargeRegistrationAttempt(c.get("deps"), c.get("network"));
  } catch (e) {
    // An answer that already says to wait (429) stands; any other becomes the 429.
    if (!(e instanceof BoardError && e.status === 429 && c.res.status === 429)) throw e;
  }
};

/** Requests already admitted, with their resolved caller: one request is one call. */
const admitted = new WeakMap<Request, Promise<Caller | null>>();
/** The edge admission of each admitted request, for the extra messages of a batch. */
const admissions = new WeakMap<Request, Admission>();

/**
 * Runs the edge limits of a credential-bearing call (per network, per credential, the API
 * ceiling, the lookup budget and lookups per network; in memory, no KV) and then
 * `lookup`, the credential resolution. Throws 429 RATE_LIMITED before any lookup when a
 * limit is reached. A token that cannot be a board credential (not an API key or access
 * token in shape) is not counted at all: `lookup` refuses it without reading KV. A request
 * that passes the guard twice (overlapping route patterns) is counted and looked up once.
 */
export function limitCredentialCall(
  c: Context<AppEnv>,
  token: string,
  lookup: () => Promise<Caller | null>,
): Promise<Caller | null> {
  const known = admitted.get(c.req.raw);
  if (known) return known;
  if (!credentialShaped(token)) return lookup();
  const limiter = edgeLimiter(c.get("deps"));
  const admission = limiter.admitCall(callBucket(c), token);
  const result = lookup().then((caller) => {
    limiter.settle(admission, caller !== null);
    return caller;
  }, (e) => {
    limiter.settle(admission, false);
    throw e;
  });
  admitted.set(c.req.raw, result);
  admissions.set(c.req.raw, admission);
  return result;
}

/**
 * Charges the `extra` further messages of a JSON-RPC batch to the allowance, credential
 * and ceiling its request was admitted in. Call it only once the credential has resolved
 * to a caller: a token that is no credential is never charged for its batch. All or
 * none; when they do not fit, the request's own call is taken back too and 429
 * RATE_LIMITED is thrown.
 */
export function admitBatchExtras(c: Context<AppEnv>, extra: number): void {
  const admission = admissions.get(c.req.raw);
  if (admission && extra > 0) edgeLimiter(c.get("deps")).admitExtraCalls(admission, extra);
}
