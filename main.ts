/** Entry point: read configuration, open KV, build the app, serve. Nothing else. */
import { SystemClock } from "./domain/clock.ts";
import { type Config, serviceConfig } from "./routes/config.ts";
import { makeDeps } from "./domain/deps.ts";
import { startService } from "./routes/service.ts";
import { openKv } from "./kv/open.ts";

let config: Config;
try {
  config = serviceConfig(Deno.env.toObject(), Deno.args.includes("--dev"));
} catch (e) {
  console.error(`The board cannot start: ${e instanceof Error ? e.message : e}`);
  Deno.exit(1);
}
const kv = await openKv(config.kvPath);
const deps = makeDeps(kv, new SystemClock(), config);
await startService(deps);
