import type { Clock } from "./clock.ts";
import { uuidV7 } from "./ids.ts";

/** The service settings the rules read (built from the environment by routes/config.ts). */
export interface Config {
  port: number;
  hostname: string;
  kvPath: string | undefined;
  baseUrl: string;
  moderatorKey: string | undefined;
  secret: string | undefined;
  trustProxy: boolean;
  testClock: boolean;
  articlesGraceDays: number;
  limitScale: number;
  maxAccounts: number;
  maxPosts: number;
  /** Messages per sealed search batch (domain/search/seal.ts); fixed once a store has one. */
  searchBatch: number;
  /**
   * True: the publication that completes a search batch answers at once and the batch is
   * sealed while the next requests are served. Tests turn it off, so that a test ends with its work.
   */
  backgroundSealing: boolean;
  /**
   * True: deleting a root thread answers once the thread is hidden, and its replies are
   * purged while the next requests are served. Tests turn it off, so that a test ends with
   * its work.
   */
  backgroundPurges: boolean;
  /**
   * True when Deno exports OpenTelemetry data (`OTEL_DENO=true`, or on Deno Deploy): each request's span then
   * names its operation and carries its KV round trips (routes/telemetry.ts).
   */
  telemetry: boolean;
  production: boolean;
}

/** What every domain function receives: the KV handle, the clock and configuration. */
export interface Deps {
  kv: Deno.Kv;
  clock: Clock;
  config: Config;
  /** Generates ids (uuid form, version 7 by default). Injected so tests can predict them. */
  newId: () => string;
}

/** Builds Deps with the default id generator (time-ordered UUIDv7 from `clock`). */
export function makeDeps(kv: Deno.Kv, clock: Clock, config: Config): Deps {
  return { kv, clock, config, newId: () => uuidV7(clock.nowMs()) };
}
