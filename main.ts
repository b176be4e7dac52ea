/** Entry point: read configuration, open KV, build the app, serve. Nothing else. */
import { SystemClock } from "./domain/clock.ts";
import { loadConfig } from "./routes/config.ts";
import { makeDeps } from "./domain/deps.ts";
import { startService } from "./routes/service.ts";
import { openKv } from "./kv/open.ts";

const config = loadConfig(Deno.env.toObject(), Deno.args.includes("--dev"));
const kv = await openKv(config.kvPath);
const deps = makeDeps(kv, new SystemClock(), config);
await startService(deps);
