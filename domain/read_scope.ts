/**
 * What a cached read must know beyond the version key it is validated by (domain/read_cache.ts):
 * the earliest time its answer can change by the clock alone (a pin expiring, an account
 * ageing into a new right, a pending article falling due, the UTC day ending), or that it
 * cannot be cached at all. Time boundaries are recorded by the comparisons themselves
 * (`reached` and `today` in domain/clock.ts), never by a separate call; outside a tracked
 * read these records do nothing.
 */
import { AsyncLocalStorage } from "node:async_hooks";

/** The time facts one tracked read collected. */
interface ReadScope {
  /** Unix seconds from which the answer may differ (Infinity: never by the clock alone). */
  changesAt: number;
  /** False when the answer depends on something no version key covers. */
  cacheable: boolean;
}

const scopes = new AsyncLocalStorage<ReadScope>();

/** Records that the answer being computed may change at `at` (Unix seconds): domain/clock.ts only. */
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
