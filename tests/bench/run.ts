/**
 * `deno task bench`: seeds the retained capacity on the embedded KV, loads the real server
 * over loopback with wrk (a second process), measures the framework and storage ceilings in
 * the same run, and writes every figure and ratio to docs/benchmarks.md (followed by
 * docs/benchmark_notes.md, what was changed and what it gained, and the latest soak).
 *
 * Environment: BENCH_SECONDS (per route, default 5); BENCH_SEED_DIR (optional: keep the
 * seeded stores there and reuse them on later runs — for development; the seeding time
 * reported is then the one measured when they were made).
 */
import { SystemClock } from "../../domain/clock.ts";
import { loadConfig } from "../../routes/config.ts";
import { makeDeps } from "../../domain/deps.ts";
import { openKv } from "../../kv/open.ts";
import { prepareService } from "../../routes/service.ts";
import { freePort, startServer } from "../e2e/server_process.ts";
import {
  AGENT_HEADERS,
  postLua,
  readLua,
  type ReadScenario,
  readScenarios,
  voteCast,
  voteLua,
} from "./scenarios.ts";
import { seedBoard, type Seeded } from "./seed.ts";
import { measureWritePaths, type WritePathFigures } from "./write_paths.ts";
import { ensureWrk, fixedRequestLua, type LoadResult, runWrk } from "./wrk.ts";

const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? 5);
const LIMIT_SCALE = "1000000";
const WRITE_TARGET = 0.4;

/**
 * The V8 flags of `deno task start` (deno.json): the benchmarked server runs as deployed.
 * They bound the young generation and the old-space heap (docs/benchmark_notes.md).
 */
export async function startFlags(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  return String(config.tasks.start).split(/\s+/).filter((a: string) => a.startsWith("--v8-flags="));
}

/** The server's environment for load: limits scaled so they never trip (the code still runs). */
export const BENCH_SERVER_ENV = {
  BOARD_LIMIT_SCALE: LIMIT_SCALE,
  // The board is seeded to its retained capacity; the write phase needs room beyond it.
  BOARD_MAX_POSTS: "1000000",
};

async function copyStore(from: string, to: string) {
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
  const deps = makeDeps(
    kv,
    new SystemClock(),
    loadConfig({ BOARD_KV: kvPath, BOARD_LIMIT_SCALE: LIMIT_SCALE }),
  );
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

/** Peak resident set (VmHWM) of a process, MB. */
export async function peakRss(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(status.match(/VmHWM:\s+(\d+) kB/)?.[1] ?? 0) / 1024;
}

/** Commits per second of a bare sequential loop of atomic check+set commits on a KV file. */
async function storageCeiling(dir: string): Promise<number> {
  const kv = await Deno.openKv(`${dir}/ceiling.kv`);
  try {
    const n = 3000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const key = ["ceiling", i];
      await kv.atomic().check({ key, versionstamp: null }).set(key, { i, text: "x".repeat(600) })
        .commit();
    }
    return n / ((performance.now() - t0) / 1000);
  } finally {
    kv.close();
  }
}

/** Requests per second of the bare Hono app answering each captured page, by scenario name. */
async function frameworkCeilings(
  dir: string,
  scenarios: ReadScenario[],
  pages: Map<string, unknown>,
): Promise<Map<string, number>> {
  const file = `${dir}/pages.json`;
  const byRoute: Record<string, unknown> = {};
  for (const sc of scenarios) byRoute[`${sc.method} ${sc.path}`] = pages.get(sc.name);
  await Deno.writeTextFile(file, JSON.stringify(byRoute));
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./bare_server.ts", import.meta.url).pathname, file, String(port)],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  await reader.read();
  const out = new Map<string, number>();
  try {
    for (const sc of scenarios) {
      const lua = fixedRequestLua(sc.method, sc.path, AGENT_HEADERS, sc.body);
      out.set(sc.name, (await runWrk(`http://127.0.0.1:${port}`, lua, { seconds: SECONDS })).rps);
    }
  } finally {
    child.kill("SIGTERM");
    await child.status;
    reader.releaseLock();
    await child.stdout.cancel();
  }
  return out;
}

interface Measured {
  name: string;
  kind: "read" | "write";
  target: number | null;
  result: LoadResult;
}

async function measure(kvPath: string, s: Seeded, withWrites: boolean) {
  await using server = await startServer(kvPath, BENCH_SERVER_ENV, undefined, await startFlags());
  const reads = readScenarios(s, s.agents[0].key);
  const pages = new Map<string, unknown>();
  for (const sc of reads) {
    const res = await fetch(server.url + sc.path, {
      method: sc.method,
      headers: sc.headers,
      body: sc.body,
    });
    const body = await res.json();
    if (res.status !== 200 || body.error || body.result?.isError) {
      throw new Error(`${sc.name} answered ${res.status}: ${JSON.stringify(body).slice(0, 500)}`);
    }
    pages.set(sc.name, body);
  }
  const results: Measured[] = [];
  for (const sc of reads) {
    const result = await runWrk(server.url, readLua(sc), { seconds: SECONDS });
    results.push({ name: sc.name, kind: "read", target: sc.target, result });
  }
  if (withWrites) {
    const writerKeys = s.agents.slice(0, 1000).map((a) => a.key);
    results.push({
      name: "POST /v1/posts",
      kind: "write",
      target: WRITE_TARGET,
      result: await runWrk(server.url, postLua(writerKeys), { seconds: SECONDS }),
    });
    const { voterKeys, targets } = voteCast(s);
    results.push({
      name: "POST /votes",
      kind: "write",
      target: WRITE_TARGET,
      result: await runWrk(server.url, voteLua(voterKeys, targets), { seconds: SECONDS }),
    });
  }
  const rss = await peakRss(server.child.pid);
  await server.stop();
  return { results, pages, rss, reads };
}

function fmt(n: number, d = 1) {
  return Number.isFinite(n) ? n.toFixed(d) : "-";
}

function verdict(ok: boolean) {
  return ok ? "met" : "MISSED";
}

if (import.meta.main) {
  await ensureWrk();
  const dir = await Deno.makeTempDir({ prefix: "board-bench-" });
  const lines: string[] = [];
  try {
    console.log("seeding 5,000 accounts and 25,000 posts and replies ...");
    const big = await seededStore(dir, 25_000, 5_000, 5_000);
    console.log(`seeded in ${fmt(big.s.seconds)} s`);
    const small = await seededStore(dir, 1_000, 5_000, 200);
    const writePaths: WritePathFigures[] = await measureWritePaths(big.kvPath, big.s);
    const bigRun = await measure(big.kvPath, big.s, true);
    const smallRun = await measure(small.kvPath, small.s, false);
    const ceilings = await frameworkCeilings(dir, bigRun.reads, bigRun.pages);
    const storage = await storageCeiling(dir);
    const load = await Deno.readTextFile("/proc/loadavg").catch(() => "?");

    lines.push(`# Benchmarks`, "");
    lines.push(
      `Last run: ${
        new Date().toISOString()
      } on ${Deno.build.target}, ${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}; load average at the end: ${
        load.split(" ").slice(0, 3).join(" ")
      }.`,
    );
    lines.push(
      `Load: wrk, 64 connections, ${SECONDS} s per route, from a second process over loopback. KV: embedded SQLite file. Limits scaled by ${LIMIT_SCALE} so they never trip (the limiter code still runs). Server: main.ts with the flags of \`deno task start\` (${
        (await startFlags()).join(" ")
      }).`,
      "",
    );
    lines.push(
      `Seeding 5,000 accounts, 25,000 posts and replies and 5,000 votes took ${
        fmt(big.s.seconds)
      } s.`,
      "",
    );
    lines.push(
      "| route | req/s | p50 ms | p99 ms | errors | ceiling req/s | ratio | target |",
      "|---|---|---|---|---|---|---|---|",
    );
    for (const r of bigRun.results) {
      const ceiling = r.kind === "read" ? ceilings.get(r.name)! : storage;
      const ratio = r.result.rps / ceiling;
      let target = r.target === null
        ? "reported"
        : `${r.target * 100}% ${verdict(ratio >= r.target)}`;
      if (r.name.includes("search")) {
        target += `; p99 < 25 ms ${verdict(r.result.p99ms < 25)}`;
      }
      lines.push(
        `| ${r.name} | ${fmt(r.result.rps, 0)} | ${fmt(r.result.p50ms, 2)} | ${
          fmt(r.result.p99ms, 2)
        } | ${r.result.errors} ${r.result.errors === 0 ? "" : "MISSED"} | ${fmt(ceiling, 0)} (${
          r.kind === "read" ? "framework" : "storage"
        }) | ${fmt(ratio * 100, 0)}% | ${target} |`,
      );
    }
    lines.push(
      "",
      `Storage ceiling: a bare sequential loop of atomic check+set commits of one 600-byte value on a fresh KV file: ${
        fmt(storage, 0)
      } commits/s. Framework ceiling: a bare Hono app on the same Deno answering the captured page of each read route (same size and shape, serialised per request).`,
      "",
    );
    lines.push(
      "Write paths without HTTP (domain functions one at a time on a copy of the seeded store; see docs/benchmark_notes.md):",
      "",
      "| write | per second | commit mean ms | commit p50 ms | its commit alone allows |",
      "|---|---|---|---|---|",
    );
    for (const w of writePaths) {
      lines.push(
        `| ${w.name} | ${fmt(w.perSecond, 0)} | ${fmt(w.commitMeanMs, 2)} | ${
          fmt(w.commitP50Ms, 2)
        } | ${fmt(1000 / w.commitMeanMs, 0)}/s (${
          fmt((1000 / w.commitMeanMs / storage) * 100, 0)
        }% of the storage ceiling) |`,
      );
    }
    lines.push(
      "",
      `Peak RSS of the server: ${fmt(bigRun.rss)} MB at 25,000 retained (target < 200 MB: ${
        verdict(bigRun.rss < 200)
      }); ${fmt(smallRun.rss)} MB at 1,000.`,
      "",
    );
    lines.push(
      "Growth: read figures at 25,000 retained against 1,000 retained (target: within 1.5x).",
      "",
    );
    lines.push("| route | req/s at 1,000 | req/s at 25,000 | slowdown |", "|---|---|---|---|");
    for (const r of bigRun.results.filter((x) => x.kind === "read")) {
      const s1 = smallRun.results.find((x) => x.name === r.name)!;
      const slow = s1.result.rps / r.result.rps;
      lines.push(
        `| ${r.name} | ${fmt(s1.result.rps, 0)} | ${fmt(r.result.rps, 0)} | ${fmt(slow, 2)}x ${
          verdict(slow <= 1.5)
        } |`,
      );
    }
    for (const area of ["search", "limits", "svg"]) {
      try {
        const mod = await import(`./${area}.ts`);
        if (typeof mod.run === "function") lines.push("", await mod.run());
      } catch (e) {
        lines.push("", `(${area} benchmark failed: ${e instanceof Error ? e.message : e})`);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  let report = lines.join("\n") + "\n";
  for (const extra of ["benchmark_notes.md", "benchmark_soak.md"]) {
    const text = await Deno.readTextFile(new URL(`../../docs/${extra}`, import.meta.url))
      .catch(() => "");
    if (text) report += `\n${text.trimEnd()}\n`;
  }
  console.log(report);
  await Deno.writeTextFile(new URL("../../docs/benchmarks.md", import.meta.url), report);
}
