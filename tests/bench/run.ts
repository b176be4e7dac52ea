/**
 * `deno task bench`: seeds the retained capacity on the embedded KV, loads the real server
 * over loopback with wrk (a second process), measures the framework and storage ceilings in
 * the same run, and writes every figure and ratio to docs/benchmarks.md.
 */
import { SystemClock } from "../../domain/clock.ts";
import { loadConfig } from "../../domain/config.ts";
import { makeDeps } from "../../domain/deps.ts";
import { prepareService } from "../../routes/service.ts";
import { freePort, startServer } from "../e2e/server_process.ts";
import { seedBoard, type Seeded } from "./seed.ts";
import { ensureWrk, fixedRequestLua, type LoadResult, luaString, runWrk } from "./wrk.ts";

const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? 5);
const LIMIT_SCALE = "1000000";
const H = { accept: "application/json", "x-agent-protocol": "board/1" };

interface Row {
  name: string;
  kind: "read" | "write";
  result: LoadResult;
  ceiling: number;
}

async function seeded(dir: string, messages: number, accounts: number, votes: number) {
  const kvPath = `${dir}/board-${messages}.kv`;
  const kv = await Deno.openKv(kvPath);
  const deps = makeDeps(
    kv,
    new SystemClock(),
    loadConfig({ BOARD_KV: kvPath, BOARD_LIMIT_SCALE: LIMIT_SCALE }),
  );
  try {
    await prepareService(deps);
    const s = await seedBoard(deps, { accounts, messages, votes });
    return { kvPath, s };
  } finally {
    kv.close();
  }
}

function readScenarios(s: Seeded, key: string) {
  const auth = { ...H, authorization: `Bearer ${key}` };
  const [w1, w2] = [s.words[1], s.words[3]];
  return [
    { name: "GET /v1/posts?limit=30", path: "/v1/posts?limit=30", headers: auth },
    {
      name: "GET /v1/activity?after= (polling)",
      path: `/v1/activity?after=${Math.max(1, s.lastSeq - 5)}`,
      headers: auth,
    },
    {
      name: "GET /v1/posts/{id} (30 replies)",
      path: `/v1/posts/${s.hotThreadId}?limit=30`,
      headers: auth,
    },
    { name: "GET /v1/search (2 tokens)", path: `/v1/search?q=${w1}+${w2}&limit=10`, headers: auth },
  ];
}

async function peakRss(pid: number): Promise<number> {
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

async function frameworkCeilings(
  dir: string,
  pages: Record<string, unknown>,
): Promise<Record<string, number>> {
  const file = `${dir}/pages.json`;
  await Deno.writeTextFile(file, JSON.stringify(pages));
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./bare_server.ts", import.meta.url).pathname, file, String(port)],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  await reader.read();
  const out: Record<string, number> = {};
  try {
    for (const path of Object.keys(pages)) {
      const r = await runWrk(`http://127.0.0.1:${port}`, fixedRequestLua("GET", path, H), {
        seconds: SECONDS,
      });
      out[path] = r.rps;
    }
  } finally {
    child.kill("SIGTERM");
    await child.status;
    reader.releaseLock();
    await child.stdout.cancel();
  }
  return out;
}

function postLua(keys: string[]): string {
  return `
local keys = {${keys.map(luaString).join(",")}}
local counter = 0
local tid = 0
local threads = 0
function setup(thread) thread:set("tid", threads); threads = threads + 1 end
function init(args) tid = tonumber(wrk.thread:get("tid")) or 0 end
wrk.method = "POST"
wrk.headers["Accept"] = "application/json"
wrk.headers["X-Agent-Protocol"] = "board/1"
wrk.headers["Content-Type"] = "application/json"
request = function()
  counter = counter + 1
  local n = counter * 2 + tid
  wrk.headers["Authorization"] = "Bearer " .. keys[(n % #keys) + 1]
  wrk.headers["Idempotency-Key"] = string.format("bench-post-%d-%012d", tid, counter)
  wrk.body = '{"title":"Benchmark thread ' .. n .. '","body":"Load test body number ' .. n .. ' with some words."}'
  return wrk.format(nil, "/v1/posts")
end`;
}

function voteLua(keys: string[], targets: string[]): string {
  return `
local keys = {${keys.map(luaString).join(",")}}
local targets = {${targets.map(luaString).join(",")}}
local counter = 0
local tid = 0
local threads = 0
function setup(thread) thread:set("tid", threads); threads = threads + 1 end
function init(args) tid = tonumber(wrk.thread:get("tid")) or 0 end
wrk.method = "POST"
wrk.headers["Accept"] = "application/json"
wrk.headers["X-Agent-Protocol"] = "board/1"
wrk.headers["Content-Type"] = "application/json"
request = function()
  counter = counter + 1
  local n = counter * 2 + tid
  local voter = (n % #keys) + 1
  local target = (math.floor(n / #keys) % #targets) + 1
  wrk.headers["Authorization"] = "Bearer " .. keys[voter]
  wrk.body = '{"board":"named","post_id":"' .. targets[target] .. '","value":1}'
  return wrk.format(nil, "/votes")
end`;
}

async function measure(label: string, kvPath: string, s: Seeded, withWrites: boolean) {
  const rows: Row[] = [];
  const pages: Record<string, unknown> = {};
  // The board is seeded to its retained capacity; the write phase needs room beyond it.
  await using server = await startServer(kvPath, {
    BOARD_LIMIT_SCALE: LIMIT_SCALE,
    BOARD_MAX_POSTS: "1000000",
  });
  const reads = readScenarios(s, s.agents[0].key);
  for (const sc of reads) {
    const res = await fetch(server.url + sc.path, { headers: sc.headers });
    pages[sc.path] = await res.json();
    if (res.status !== 200) {
      throw new Error(`${sc.name} answered ${res.status}: ${JSON.stringify(pages[sc.path])}`);
    }
  }
  const results: { name: string; kind: "read" | "write"; result: LoadResult; path?: string }[] = [];
  for (const sc of reads) {
    const result = await runWrk(server.url, fixedRequestLua("GET", sc.path, sc.headers), {
      seconds: SECONDS,
    });
    results.push({ name: sc.name, kind: "read", result, path: sc.path });
  }
  if (withWrites) {
    const half = Math.floor(s.agents.length / 2);
    const writerKeys = s.agents.slice(0, 1000).map((a) => a.key);
    results.push({
      name: "POST /v1/posts",
      kind: "write",
      result: await runWrk(server.url, postLua(writerKeys), { seconds: SECONDS }),
    });
    // Voters from the upper half never vote on roots written by the lower half (no self-votes).
    const voterKeys = s.agents.slice(half).map((a) => a.key);
    const targets = s.rootIds.filter((_, i) => i % s.agents.length < half).slice(0, 2000);
    results.push({
      name: "POST /votes",
      kind: "write",
      result: await runWrk(server.url, voteLua(voterKeys, targets), { seconds: SECONDS }),
    });
  }
  const rss = await peakRss(server.child.pid);
  await server.stop();
  return { label, results, pages, rss, rows };
}

function fmt(n: number, d = 1) {
  return Number.isFinite(n) ? n.toFixed(d) : "-";
}

if (import.meta.main) {
  await ensureWrk();
  const dir = await Deno.makeTempDir({ prefix: "board-bench-" });
  const lines: string[] = [];
  try {
    console.log("seeding 5,000 accounts and 25,000 posts and replies ...");
    const big = await seeded(dir, 25_000, 5_000, 5_000);
    console.log(`seeded in ${fmt(big.s.seconds)} s`);
    const small = await seeded(dir, 1_000, 5_000, 200);
    const bigRun = await measure("25,000", big.kvPath, big.s, true);
    const smallRun = await measure("1,000", small.kvPath, small.s, false);
    const ceilings = await frameworkCeilings(dir, bigRun.pages);
    const storage = await storageCeiling(dir);

    lines.push(`# Benchmarks`, "");
    lines.push(
      `Last run: ${
        new Date().toISOString()
      } on ${Deno.build.target}, ${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}.`,
    );
    lines.push(
      `Load: wrk, 64 connections, ${SECONDS} s per route, from a second process over loopback. KV: embedded SQLite file.`,
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
      const ceiling = r.kind === "read" ? ceilings[r.path!] : storage;
      const ratio = r.result.rps / ceiling;
      const target = r.kind === "write" ? 0.4 : r.name.includes("search") ? 0.1 : 0.25;
      lines.push(
        `| ${r.name} | ${fmt(r.result.rps, 0)} | ${fmt(r.result.p50ms, 2)} | ${
          fmt(r.result.p99ms, 2)
        } | ${r.result.errors} | ${fmt(ceiling, 0)} (${
          r.kind === "read" ? "framework" : "storage"
        }) | ${fmt(ratio * 100, 0)}% | ${target * 100}% ${ratio >= target ? "met" : "MISSED"} |`,
      );
    }
    lines.push(
      "",
      `Storage ceiling: a bare sequential loop of atomic check+set commits on a KV file: ${
        fmt(storage, 0)
      } commits/s.`,
    );
    lines.push(
      `Peak RSS of the server: ${fmt(bigRun.rss)} MB at 25,000 retained (target < 200 MB); ${
        fmt(smallRun.rss)
      } MB at 1,000.`,
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
          slow <= 1.5 ? "met" : "MISSED"
        } |`,
      );
    }
    for (const area of ["search", "limits"]) {
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
  const notes = await Deno.readTextFile(new URL("../../docs/benchmark_notes.md", import.meta.url))
    .catch(() => "");
  const report = lines.join("\n") + (notes ? `\n\n${notes}` : "") + "\n";
  console.log(report);
  await Deno.writeTextFile(new URL("../../docs/benchmarks.md", import.meta.url), report);
}
