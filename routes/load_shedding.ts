/**
 * Load shedding by memory. A request that arrives while the process's heap is half used and
 * many requests are already being handled is refused at once — 503 UNAVAILABLE with
 * `Retry-After: 1` — before anything is read or built for it. Every request under way holds
 * its parsed input and the answer it is building: a few thousand at once (feed reads, or
 * consent pages with the longest query, about 10 KB in and 60 KB out) would take the heap
 * past its limit, and V8 then ends the process with every request it held. Refusing the
 * newest keeps the others and the process.
 *
 * Both conditions must hold: with few requests under way the heap's use is not theirs to
 * free (it is garbage a collection will take, or the process's own state), and a heap far
 * from its limit has room for many requests.
 */
import type { MiddlewareHandler } from "hono";
import { getHeapStatistics } from "node:v8";
import { BoardError } from "../domain/errors.ts";
import type { AppEnv } from "./env.ts";

/** The heap's use now and its limit, in bytes. */
export interface HeapGauge {
  used(): number;
  readonly limit: number;
}

/** This process's V8 heap (`--max-old-space-size` sets most of its limit). */
export const processHeap: HeapGauge = {
  used: () => getHeapStatistics().used_heap_size,
  limit: getHeapStatistics().heap_size_limit,
};

/**
 * The share of the heap's limit in use from which requests are shed. Measured with the flags
 * of `deno task start` (docs/limits.md, "Overload"): a burst of 300 posts stays below 0.3;
 * floods survive shedding from 0.6 and kill the process from 0.7.
 */
export const SHED_HEAP_SHARE = 0.5;
/** Requests under way below which none is shed, however full the heap. */
export const SHED_MIN_IN_FLIGHT = 32;

/** Counts the requests under way and sheds new ones as described above. */
export function shedLoad(heap: HeapGauge = processHeap): MiddlewareHandler<AppEnv> {
  let inFlight = 0;
  const threshold = heap.limit * SHED_HEAP_SHARE;
  return async (_c, next) => {
    if (inFlight >= SHED_MIN_IN_FLIGHT && heap.used() >= threshold) {
      throw new BoardError(
        "UNAVAILABLE",
        "The board is handling more requests than it has memory for; retry in a second.",
        undefined,
        1,
      );
    }
    inFlight++;
    try {
      await next();
    } finally {
      inFlight--;
    }
  };
}
