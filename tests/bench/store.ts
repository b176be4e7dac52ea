/**
 * The seeded stores and server processes of `deno task bench` and `deno task bench:soak`:
 * seeding (limits scaled so that seeding is never refused), copies of a seeded store, the
 * flags of `deno task start`, and a process's peak resident set.
 */
import { SystemClock } from "../../domain/clock.ts";
import { loadConfig } from "../../routes/config.ts";
import { makeDeps } from "../../domain/deps.ts";
import { openKv } from "../../kv/open.ts";
import { prepareService } from "../../routes/service.ts";
import { seedBoard, type Seeded } from "./seed.ts";

/** Seeding only: limits scaled so that seeding 25,000 messages is never refused. */
export const SEED_LIMIT_SCALE = "1000000";

/**
 * The V8 flags of `deno task start` (deno.json): the benchmarked server runs as deployed.
 * They bound the young generation and the old-space heap (docs/benchmark_notes.md).
 */
export async function startFlags(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  return String(config.tasks.start).split(/\s+/).filter((a: string) => a.startsWith("--v8-flags="));
}

/** Copies a KV file (with its SQLite side files). */
export async function copyStore(from: string, to: string): Promise<void> {
  for (const suffix of ["", "-wal", "-shm"]) {
    await Deno.copyFile(from + suffix, to + suffix).catch(() => {});
  }
}

/** A seeded store (and what the seed made), made now or reused from BENCH_SEED_DIR. */
export async function seededStore(
  dir: string,
  messages: number,
  accounts: number,
  votes: number,
): Promise<{ kvPath: string; s: Seeded }> {
  const kvPath = `${dir}/board-${messages}.kv`;
  const cacheDir = Deno.env.get("BENCH_SEED_DIR");
  const cached = cacheDir ? `${cacheDir}/board-${messages}-${accounts}-${votes}.kv` : null;
  if (cached && await Deno.stat(`${cached}.json`).then(() => true, () => false)) {
    await copyStore(cached, kvPath);
    return { kvPath, s: JSON.parse(await Deno.readTextFile(`${cached}.json`)) };
  }
  const kv = await openKv(kvPath);
  const deps = makeDeps(kv, new SystemClock(), {
    ...loadConfig({ BOARD_KV: kvPath, BOARD_LIMIT_SCALE: SEED_LIMIT_SCALE }),
    backgroundSealing: false, // every batch sealed before the store is closed
  });
  let s: Seeded;
  try {
    await prepareService(deps);
    s = await seedBoard(deps, { accounts, messages, votes });
  } finally {
    kv.close();
  }
  if (cached) {
    await Deno.mkdir(cacheDir!, { recursive: true });
    await copyStore(kvPath, cached);
    await Deno.writeTextFile(`${cached}.json`, JSON.stringify(s));
  }
  return { kvPath, s };
}

/** Peak resident set (VmHWM) of a process, MB; NaN when the process is gone. */
export async function peakRss(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`).catch(() => "");
  if (!status) console.error(`server process ${pid} is gone: its peak RSS is unknown`);
  return Number(status.match(/VmHWM:\s+(\d+) kB/)?.[1] ?? NaN) / 1024;
}
