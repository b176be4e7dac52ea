/**
 * Stopping without dropping a request. SIGTERM (what a process manager or a container runtime
 * sends to stop or redeploy) starts a stop: the requests under way finish and are answered, a
 * request arriving meanwhile is answered 503 UNAVAILABLE with `Retry-After: 1` and
 * `Connection: close` (another instance, or this one once restarted, takes the retry), and once
 * none is under way the listener shuts down and the process exits (routes/service.ts).
 */
import type { MiddlewareHandler } from "hono";
import { BoardError } from "../domain/errors.ts";
import type { AppEnv } from "./env.ts";

let stopping = false;
let inFlight = 0;
let idle: (() => void) | null = null;

/** Counts the requests under way; refuses new ones once the process is stopping. */
export const drainRequests: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (stopping) {
    c.header("Connection", "close");
    throw new BoardError("UNAVAILABLE", "The board is stopping; retry in a second.", undefined, 1);
  }
  inFlight++;
  try {
    await next();
  } finally {
    inFlight--;
    if (stopping && inFlight === 0) idle?.();
  }
};

/** Whether a stop has begun (a listener that ends then is not listened again). */
export function isStopping(): boolean {
  return stopping;
}

/** Begins a stop; resolves once no request is under way, or after `graceMs` at the latest. */
export function beginStop(graceMs: number): Promise<void> {
  stopping = true;
  return new Promise((resolve) => {
    if (inFlight === 0) return resolve();
    idle = resolve;
    setTimeout(resolve, graceMs);
  });
}
