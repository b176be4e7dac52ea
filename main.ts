/** Entry point: read configuration, open KV, build the app, serve. Nothing else. */
import { SystemClock } from "./domain/clock.ts";
import { type Config, serviceConfig, startupSummary, unknownVariables } from "./routes/config.ts";
import { makeDeps } from "./domain/deps.ts";
import { startService } from "./routes/service.ts";
import { assertNoUnfinishedImport, assertWritable, isKvFile, openKv } from "./kv/open.ts";

/** A configuration or a store the board cannot run with: said in one line, exit code 1. */
function cannotStart(e: unknown): never {
  console.error(`The board cannot start: ${e instanceof Error ? e.message : e}`);
  Deno.exit(1);
}

let config: Config;
let kv: Deno.Kv;
try {
  const env = Deno.env.toObject();
  config = serviceConfig(env, Deno.args.includes("--dev"));
  for (const warning of unknownVariables(env)) console.warn(`Warning: ${warning}`);
} catch (e) {
  cannotStart(e);
}
try {
  const file = config.kvPath;
  const newStore = isKvFile(file) && !(await Deno.stat(file).then(() => true, () => false));
  kv = await openKv(config.kvPath);
  await assertWritable(kv, config.kvPath);
  await assertNoUnfinishedImport(kv, config.kvPath);
  console.log(startupSummary(config, newStore));
} catch (e) {
  // The store named, whatever the runtime's own words (a permission, a missing folder).
  const why = e instanceof Deno.errors.NotCapable
    ? "this process may not read or write there (`deno task dev` writes under ./data only; `deno task start` writes anywhere)"
    : e instanceof Error
    ? e.message
    : String(e);
  cannotStart(
    why.includes("BOARD_KV")
      ? why
      : `the store ${config.kvPath ?? "(the platform's)"} (BOARD_KV) cannot be opened: ${why}`,
  );
}
const deps = makeDeps(kv, new SystemClock(), config);
try {
  await startService(deps);
} catch (e) {
  cannotStart(e);
}
