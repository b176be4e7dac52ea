/**
 * What a cached read must know beyond the version keys it is validated by (issue 12,
 * domain/read_cache.ts): the earliest time its answer can change by the clock alone (a pin
 * expiring, an account ageing into a new right, a pending article falling due, the UTC day
 * ending), or that it cannot be cached at all. The domain code that compares a stored time
 * with the clock reports it here; outside a tracked read these calls do nothing.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** The time facts one tracked read collected. */
export interface ReadScope {
  /** Unix seconds from which the answer may differ (Infinity: never by the clock alone). */
  changesAt: number;
  /** False when the answer depends on something no version key covers. */
  cacheable: boolean;
}

const scopes = new AsyncLocalStorage<ReadScope>();

/** Reports that the answer being computed may change at `at` (Unix seconds). */
export function noteChangeAt(at: number): void {
  const s = scopes.getStore();
  if (s && at < s.changesAt) s.changesAt = at;
}

/** Reports that the answer being computed must not be cached. */
export function noteUncacheable(): void {
  const s = scopes.getStore();
  if (s) s.cacheable = false;
}

/** Runs `fn` while collecting the time facts its reads report. */
export async function trackRead<T>(fn: () => Promise<T>): Promise<{ value: T; scope: ReadScope }> {
  const scope: ReadScope = { changesAt: Infinity, cacheable: true };
  const value = await scopes.run(scope, fn);
  return { value, scope };
}
