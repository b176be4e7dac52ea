/** HTTP hooks of the rate limits (docs/limits.md): registration attempts and edge limits. */
import type { Context, MiddlewareHandler } from "hono";
import { edgeLimiter } from "../domain/edge_limiter.ts";
import { chargeRegistrationAttempt } from "../domain/registration_limits.ts";
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
 * Runs the edge limits of a credential-bearing call (per network, per credential, the API
 * ceiling and the lookup budget; in memory, no KV) and then `lookup`, the credential
 * resolution. Throws 429 RATE_LIMITED before any lookup when a limit is reached. A request
 * that passes the guard twice (overlapping route patterns) is counted and looked up once.
 */
export function limitCredentialCall(
  c: Context<AppEnv>,
  token: string,
  lookup: () => Promise<Caller | null>,
): Promise<Caller | null> {
  const known = admitted.get(c.req.raw);
  if (known) return known;
  const limiter = edgeLimiter(c.get("deps"));
  const id = limiter.admitCall(c.get("network"), token);
  const result = lookup().then((caller) => {
    if (caller) limiter.validated(id);
    return caller;
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
