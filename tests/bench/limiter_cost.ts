/**
 * Limiter benchmark: the cost per request of the edge limiter (the in-memory work every
 * authenticated call does: per-network, per-credential, ceiling and lookup-budget
 * counters) measured alone, as a share of a whole authenticated `GET /v1/posts`
 * (`app.request`, full JSON response) on an embedded KV file, in the same run. Also the
 * publication admission's own CPU work (limits checked on entries already read) as a
 * share of a whole `POST /v1/posts`. `BOARD_LIMIT_SCALE` is raised so no limit refuses:
 * the limiter code path still runs in full.
 *
 * Run alone: `deno run -A tests/bench/limiter_cost.ts`.
 */
import { registerAgent } from "../../domain/accounts/mod.ts";
import { admissionKeys, chargePublication, type Publisher } from "../../domain/board/mod.ts";
import { edgeLimiter } from "../../domain/limits/mod.ts";
import { SystemClock } from "../../domain/clock.ts";
import { testConfig } from "../../routes/config.ts";
import { makeDeps } from "../../domain/deps.ts";
import { transact, Tx } from "../../kv/tx.ts";
import { readNamed } from "../../kv/read_many.ts";
import { createApp } from "../../routes/app.ts";
import { prepareService } from "../../routes/service.ts";

const SEED_POSTS = 300;
const REQUESTS = 1500;
const WARMUP = 150;
const LIMITER_CALLS = 200_000;
const ADMISSIONS = 50_000;

function stats(samplesMs: number[]) {
  const s = [...samplesMs].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { mean, p50: s[Math.floor(s.length * 0.5)], p99: s[Math.floor(s.length * 0.99)] };
}

const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
const pct = (x: number) => `${(x * 100).toFixed(2)} %`;

/** Runs the benchmark and returns its Markdown section. */
export async function run(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "board-bench-limits-" });
  const kv = await Deno.openKv(`${dir}/board.kv`);
  try {
    const deps = makeDeps(kv, new SystemClock(), testConfig({ limitScale: 1_000_000 }));
    await prepareService(deps);
    const app = createApp(deps);
    const conn = { remoteAddr: { hostname: "192.0.2.10" } };
    const { apiKey } = await registerAgent(deps, {
      name: "bench-limits",
      participation_basis: "owner_directed",
    });
    const headers = {
      accept: "application/json",
      "x-agent-protocol": "board/1",
      authorization: `Bearer ${apiKey}`,
    };
    const postOnce = async (i: number) => {
      const res = await app.request("/v1/posts", {
        method: "POST",
        headers: {
          ...headers,
          "content-type": "application/json",
          "idempotency-key": `bench-limits-${i}-${crypto.randomUUID()}`,
        },
        body: JSON.stringify({
          title: `Bench thread ${i}`,
          body: `Body of thread ${i}. `.repeat(8),
        }),
      }, conn);
      if (res.status !== 201) throw new Error(`seed post: ${res.status} ${await res.text()}`);
      await res.body?.cancel();
    };

    // Whole POST /v1/posts requests (these also seed the feed).
    const postMs: number[] = [];
    for (let i = 0; i < SEED_POSTS; i++) {
      const t0 = performance.now();
      await postOnce(i);
      postMs.push(performance.now() - t0);
    }

    // Whole authenticated GET /v1/posts requests.
    const getOnce = async () => {
      const res = await app.request("/v1/posts", { headers }, conn);
      if (res.status !== 200) throw new Error(`feed: ${res.status}`);
      await res.arrayBuffer();
    };
    for (let i = 0; i < WARMUP; i++) await getOnce();
    const getMs: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      await getOnce();
      getMs.push(performance.now() - t0);
    }

    // The edge limiter alone: what requireAgent adds before the credential lookup.
    const limiter = edgeLimiter(deps);
    const nets = Array.from({ length: 64 }, (_, i) => `198.51.100.${i}`);
    const creds = Array.from({ length: 64 }, () => `pb_live_${crypto.randomUUID()}xxxxxxx`);
    for (let i = 0; i < 10_000; i++) {
      limiter.settle(limiter.admitCall(nets[i & 63], creds[i & 63]), true);
    }
    const l0 = performance.now();
    for (let i = 0; i < LIMITER_CALLS; i++) {
      limiter.settle(limiter.admitCall(nets[i & 63], creds[(i * 7) & 63]), true);
    }
    const limiterMs = (performance.now() - l0) / LIMITER_CALLS;

    // Publication admission alone: limit checks and staged increments on entries read.
    const p: Publisher = { board: "named", agentId: "bench-agent", network: "192.0.2.99" };
    // A network that published today: its record holds today's count (no older-store read).
    await transact(kv, async (tx) => {
      const nowMs = deps.clock.nowMs();
      const read = await tx.getNamed(admissionKeys(p, Math.floor(nowMs / 1000)));
      await chargePublication(tx, deps, p, read, nowMs);
    });
    const nowMs = deps.clock.nowMs();
    const entries = await readNamed(kv, admissionKeys(p, Math.floor(nowMs / 1000)));
    const charge = () => chargePublication(new Tx(kv), deps, p, entries, nowMs);
    for (let i = 0; i < 5000; i++) await charge();
    const a0 = performance.now();
    for (let i = 0; i < ADMISSIONS; i++) await charge();
    const admissionMs = (performance.now() - a0) / ADMISSIONS;

    const get = stats(getMs);
    const post = stats(postMs);
    const share = limiterMs / get.mean;
    const writeShare = admissionMs / post.mean;
    return [
      "## Limiter cost",
      "",
      `Embedded KV file, ${SEED_POSTS} retained threads, \`app.request\` in process, ` +
      `BOARD_LIMIT_SCALE=1e6 (no refusals; every limiter path runs). Target: under 20 %.`,
      "",
      "| measurement | mean | p50 | p99 |",
      "|---|---|---|---|",
      `| whole authenticated GET /v1/posts (${REQUESTS} requests) | ${us(get.mean)} | ${
        us(get.p50)
      } | ${us(get.p99)} |`,
      `| edge limiter alone, per request (${LIMITER_CALLS} calls) | ${us(limiterMs)} | | |`,
      `| whole POST /v1/posts (${SEED_POSTS} requests) | ${us(post.mean)} | ${us(post.p50)} | ${
        us(post.p99)
      } |`,
      `| publication admission alone, per write (${ADMISSIONS} runs) | ${us(admissionMs)} | | |`,
      "",
      `- Edge limiter share of an authenticated GET /v1/posts: **${pct(share)}** ` +
      `(${
        share < 0.2 ? "meets" : "misses"
      } the 20 % target). Reads cost no KV operation for limits.`,
      `- Publication admission CPU share of a POST /v1/posts: ${pct(writeShare)}; its KV ` +
      `reads ride in the publish commit's existing getMany (a network's first publication of a ` +
      `UTC day reads one more key: the day counter older stores kept apart).`,
      "",
    ].join("\n");
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) console.log(await run());
