import type { Clock } from "./clock.ts";
import type { Config } from "../routes/config.ts";
import { uuidV7 } from "./ids.ts";

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
