/** HTTP hooks of the rate limits (docs/limits.md): registration attempts and edge limits. */
import type { Context, MiddlewareHandler } from "hono";
import { chargeRegistrationAttempt, credentialShaped } from "../domain/accounts/mod.ts";
import { edgeLimiter } from "../domain/limits/mod.ts";
import type { AppEnv, Caller } from "./env.ts";

/**
 * Counts every `POST /v1/agents` against the network's registration attempts (exact, in
 * KV), before any header or body validation: invalid attempts count too. Mounted after
 * the browser check, so a refused browser request spends nothing.
 */
export const registrationAttempts: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method === "POST") await chargeRegistrationAttempt(c.get("deps"), c.get("network"));
  await next();
};

/** Requests already admitted, with their resolved caller: one request is one call. */
const admitted = new WeakMap<Request, Promise<Caller | null>>();

/**
 * The network allowance a credential-bearing call is counted in: the client network, or,
 * for a request a browser sent from another site's page (an `Origin` other than the
 * board's own), that network's separate cross-origin allowance. A page on another site
 * can make a visitor's browser call `/mcp` (CORS is open to MCP clients), but it then
 * spends only that cross-origin allowance, never what the visitor's own agents on the
 * same network use. A non-browser client that forges `Origin` gains one more allowance,
 * never more than one.
 */
export function callBucket(c: Context<AppEnv>): string {
  const network = c.get("network");
  const origin = c.req.header("origin");
  if (origin === undefined) return network;
  return origin === new URL(c.get("deps").config.baseUrl).origin
    ? network
    : `${network} cross-origin`;
}

/**
 * Runs the edge limits of a credential-bearing call (per network, per credential, the API
 * ceiling, the lookup budget and failed lookups per network; in memory, no KV) and then
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
  return result;
}

/**
 * Edge admission of a moderator call (for `/mod` routes, after the key is verified):
 * per-network and per-credential limits apply, the API ceiling never refuses it.
 */
export function admitModeratorCall(c: Context<AppEnv>, token: string): void {
  edgeLimiter(c.get("deps")).admitCall(c.get("network"), token, { moderator: true });
}
