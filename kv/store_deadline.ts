/**
 * A deadline on every KV call. Deno's KV Connect client retries a store it cannot reach for as
 * long as it takes, so without one a request waits with it, and an in-process lock held across
 * that call (a post's, kv/tx.ts) holds every later post too. A call the store has not answered
 * within the deadline is given up: the request gets `StoreTimeoutError`, which the edges answer
 * like a busy store (503 UNAVAILABLE, retry shortly). A commit given up may still land later;
 * a retry with the same idempotency key then finds it and answers what it stored instead of
 * writing again, and one that lands after its retry wrote fails its checks.
 */
import { TxConflictError } from "./tx.ts";

/** How long a KV call may take before it is given up (ms). */
export const STORE_DEADLINE_MS = 10_000;

/** The store did not answer a call within its deadline; answered like a busy store. */
class StoreTimeoutError extends TxConflictError {}

/** The last time a given-up call was logged (ms): at most one line every ten seconds. */
let lastLogged = -Infinity;

/** `call`'s answer, or `StoreTimeoutError` once `ms` have passed without one. */
export function withinDeadline<T>(call: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      call.catch(() => {}); // given up: whatever it ends with later is nobody's to handle
      if (Date.now() - lastLogged >= 10_000) {
        lastLogged = Date.now();
        console.error(`the store did not answer a ${what} within ${ms} ms: given up`);
      }
      reject(new StoreTimeoutError(`the store did not answer a ${what} within ${ms} ms`));
    }, ms);
  });
  return Promise.race([call, late]).finally(() => clearTimeout(timer));
}
