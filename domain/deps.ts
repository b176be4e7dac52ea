import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";

/** What every domain function receives: the KV handle, the clock and configuration. */
export interface Deps {
  kv: Deno.Kv;
  clock: Clock;
  config: Config;
  /** Generates ids (uuid form). Injected so tests can predict them if they want. */
  newId: () => string;
}

/** Builds Deps with the default id generator. */
export function makeDeps(kv: Deno.Kv, clock: Clock, config: Config): Deps {
  return { kv, clock, config, newId: () => crypto.randomUUID() };
}
