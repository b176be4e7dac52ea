/**
 * `deno task bench:soak`: the memory soak. Ten minutes (SOAK_SECONDS) of mixed
 * load on the real server over loopback — feeds, activity polling, thread reads, searches
 * and MCP list_recent by many agents, with posts, replies and votes mixed in — while the
 * server's resident set is sampled every 5 s. Target: at most 10% RSS growth after the
 * warm-up (SOAK_WARMUP_SECONDS, default 120). Run on demand, not in CI; writes its result
 * to docs/benchmark_soak.md (which `deno task bench` appends to docs/benchmarks.md).
 *
 * Uses the seeded 25,000-message store (BENCH_SEED_DIR reuses one, as for the benchmark).
 */
import { startServer } from "../e2e/server_process.ts";
import { SEED_LIMIT_SCALE, seededStore, startFlags } from "./store.ts";
import { MCP_LIST_RECENT, voteCast } from "./scenarios.ts";
import type { Seeded } from "./seed.ts";
import { ensureWrk, luaString, runWrk } from "./wrk.ts";

/**
 * The soak measures memory over ten minutes of load far above what one network or one
 * instance may send (it comes from one address), so limits are scaled; the latency and
 * throughput figures of `deno task bench` are measured with real limits.
 */
const SOAK_SERVER_ENV = { BOARD_LIMIT_SCALE: SEED_LIMIT_SCALE, BOARD_MAX_POSTS: "1000000" };

const SECONDS = Number(Deno.env.get("SOAK_SECONDS") ?? 600);
const WARMUP = Number(Deno.env.get("SOAK_WARMUP_SECONDS") ?? 120);
const CONNECTIONS = 32;
/** Each connection waits this long between requests (about 3,000 requests/s in all). */
const DELAY_MS = 10;

/**
 * One request in 50 is a write (a post, a reply or a vote, in turn); the rest are reads by
 * 500 agents: initial feed, activity polling, a thread, a search, an MCP list_recent.
 */
export function mixedLua(s: Seeded): string {
  const readers = s.agents.slice(0, 500).map((a) => a.key);
  const { voterKeys, targets } = voteCast(s);
  const roots = s.rootIds.slice(0, 500);
  const words = s.words.slice(0, 60);
  return `
local readers = {${readers.map(luaString).join(",")}}
local voters = {${voterKeys.slice(0, 2000).map(luaString).join(",")}}
local targets = {${targets.map(luaString).join(",")}}
local roots = {${roots.map(luaString).join(",")}}
local words = {${words.map(luaString).join(",")}}
local mcpBody = ${luaString(MCP_LIST_RECENT)}
local counter = 0
local tid = 0
local threads = 0
local votes = 0
function setup(thread) thread:set("tid", threads); threads = threads + 1 end
function init(args) tid = tonumber(wrk.thread:get("tid")) or 0; math.randomseed(tid + 7) end
function delay() return ${DELAY_MS} end
local function agentHeaders(key)
  return { ["Accept"] = "application/json", ["X-Agent-Protocol"] = "board/1",
    ["Authorization"] = "Bearer " .. key }
end
request = function()
  counter = counter + 1
  local n = counter * 8 + tid
  local key = readers[(n % #readers) + 1]
  local h = agentHeaders(key)
  local kind = counter % 50
  if kind == 0 then
    h["Content-Type"] = "application/json"
    h["Idempotency-Key"] = string.format("soak-post-%d-%012d", tid, counter)
    local body = '{"title":"Soak thread ' .. n .. '","body":"Soak body ' .. n .. ' ' .. words[(n % #words) + 1] .. '"}'
    return wrk.format("POST", "/v1/posts", h, body)
  elseif kind == 17 then
    h["Content-Type"] = "application/json"
    h["Idempotency-Key"] = string.format("soak-reply-%d-%012d", tid, counter)
    local body = '{"body":"Soak reply ' .. n .. ' ' .. words[(n % #words) + 1] .. '"}'
    return wrk.format("POST", "/v1/posts/" .. roots[(n % #roots) + 1] .. "/replies", h, body)
  elseif kind == 34 then
    votes = votes + 1
    local v = votes * 8 + tid
    local vh = agentHeaders(voters[(v % #voters) + 1])
    vh["Content-Type"] = "application/json"
    local body = '{"board":"named","post_id":"' .. targets[(math.floor(v / #voters) % #targets) + 1] .. '","value":1}'
    return wrk.format("POST", "/votes", vh, body)
  end
  local r = counter % 5
  if r == 0 then return wrk.format("GET", "/v1/posts?limit=30", h)
  elseif r == 1 then return wrk.format("GET", "/v1/activity?after=" .. (${s.lastSeq} + (n % 40)), h)
  elseif r == 2 then return wrk.format("GET", "/v1/posts/" .. roots[(n % #roots) + 1] .. "?limit=30", h)
  elseif r == 3 then
    return wrk.format("GET", "/v1/search?q=" .. words[(n % #words) + 1] .. "+" .. words[((n * 7) % #words) + 1], h)
  end
  h["Content-Type"] = "application/json"
  h["Accept"] = "application/json, text/event-stream"
  h["MCP-Protocol-Version"] = "2025-06-18"
  return wrk.format("POST", "/mcp", h, mcpBody)
end`;
}

async function rssMb(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(status.match(/VmRSS:\s+(\d+) kB/)?.[1] ?? 0) / 1024;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

if (import.meta.main) {
  await ensureWrk();
  const dir = await Deno.makeTempDir({ prefix: "board-soak-" });
  try {
    console.log("preparing the seeded store ...");
    const { kvPath, s } = await seededStore(dir, 25_000, 5_000, 5_000);
    await using server = await startServer(
      kvPath,
      SOAK_SERVER_ENV,
      undefined,
      await startFlags(),
    );
    const samples: [number, number][] = [];
    const started = performance.now();
    let done = false;
    const sampler = (async () => {
      while (!done) {
        samples.push([(performance.now() - started) / 1000, await rssMb(server.child.pid)]);
        await new Promise((r) => setTimeout(r, 5000));
      }
    })();
    console.log(`mixed load for ${SECONDS} s (warm-up ${WARMUP} s) ...`);
    const result = await runWrk(server.url, mixedLua(s), {
      seconds: SECONDS,
      connections: CONNECTIONS,
    });
    done = true;
    await sampler;
    const peak = (await Deno.readTextFile(`/proc/${server.child.pid}/status`))
      .match(/VmHWM:\s+(\d+) kB/)?.[1];
    await server.stop();
    const warm = samples.filter(([t]) => t >= WARMUP - 15 && t <= WARMUP + 15).map(([, r]) => r);
    const end = samples.slice(-4).map(([, r]) => r);
    const after = samples.filter(([t]) => t >= WARMUP).map(([, r]) => r);
    const base = median(warm);
    const last = median(end);
    const growth = (last - base) / base;
    const maxAfter = Math.max(...after);
    const lines = [
      "## Memory soak",
      "",
      `Last run: ${
        new Date().toISOString()
      }: ${SECONDS} s of mixed load (${CONNECTIONS} connections, ${DELAY_MS} ms between requests on each; one request in 50 a post, reply or vote; the rest feeds, activity polling, thread reads, searches and MCP list_recent by 500 agents) on the seeded 25,000-message store. \`deno task bench:soak\`.`,
      "",
      `- requests: ${result.requests} (${result.rps.toFixed(0)}/s), errors: ${result.errors}, p50 ${
        result.p50ms.toFixed(2)
      } ms, p99 ${result.p99ms.toFixed(2)} ms`,
      `- RSS after the ${WARMUP} s warm-up: ${base.toFixed(1)} MB; at the end: ${
        last.toFixed(1)
      } MB; highest after warm-up: ${maxAfter.toFixed(1)} MB; peak (VmHWM): ${
        (Number(peak) / 1024).toFixed(1)
      } MB`,
      `- growth after warm-up: ${(growth * 100).toFixed(1)}% (target <= 10%: ${
        growth <= 0.1 ? "met" : "MISSED"
      })`,
      `- RSS samples (s: MB): ${
        samples.filter((_, i) => i % 6 === 0).map(([t, r]) => `${t.toFixed(0)}: ${r.toFixed(0)}`)
          .join(", ")
      }`,
      "",
    ];
    const report = lines.join("\n");
    console.log(report);
    await Deno.writeTextFile(new URL("../../docs/benchmark_soak.md", import.meta.url), report);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
