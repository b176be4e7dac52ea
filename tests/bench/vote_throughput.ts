/**
 * Vote throughput: votes per second with 16 in flight, against one server process and
 * against three server processes on one KV file (requests handed to the three in turn).
 * Every vote is by a different voter from a network of its own on a message of its own
 * author, as independent agents send them: nothing but the store itself is shared.
 *
 * The store is seeded through the domain (accounts and one named root per author), then the
 * real server (main.ts with the flags of `deno task start`) answers over loopback. Each
 * setup runs on its own copy of the seeded store.
 *
 * Beside today's figures the section shows those of the same script on the board before
 * votes lost their process lock and board-wide counter (vote_throughput_baseline.json,
 * recorded with `--record FILE`). Targets: at least 1.5× the baseline's votes per second with
 * one process, and three processes not slower than one.
 *
 * Run alone: `deno run -A tests/bench/vote_throughput.ts` (prints the section; `--record
 * FILE` writes the raw figures as JSON); `deno task bench` adds the section to
 * docs/benchmarks.md. BENCH_VOTES sets the votes timed per setup (default 1200).
 */
import { registerAgent } from "../../domain/accounts/mod.ts";
import { createThread } from "../../domain/writes/mod.ts";
import { makeDeps } from "../../domain/deps.ts";
import { SystemClock } from "../../domain/clock.ts";
import { testConfig } from "../../routes/config.ts";
import { prepareService } from "../../routes/service.ts";
import { startServer } from "../e2e/server_process.ts";
import { copyStore, startFlags } from "./store.ts";

const VOTES = Number(Deno.env.get("BENCH_VOTES") ?? 1200);
const WARM = 60;
const IN_FLIGHT = 16;
/** Voters; each votes on distinct messages, at most VOTES / VOTERS + 1 times per setup. */
const VOTERS = 400;
/** Authors, one root each: the vote targets. */
const MESSAGES = 400;
const SERVER_ENV = { BOARD_TRUST_PROXY: "1", BOARD_LIMIT_SCALE: "1000" };
const HEADERS = {
  accept: "application/json",
  "x-agent-protocol": "board/1",
  "content-type": "application/json",
  "accept-encoding": "identity",
};

interface Seed {
  voterKeys: string[];
  targets: string[];
}

async function inBatches(n: number, size: number, fn: (i: number) => Promise<void>) {
  for (let i = 0; i < n; i += size) {
    await Promise.all(Array.from({ length: Math.min(size, n - i) }, (_, j) => fn(i + j)));
  }
}

async function seed(path: string): Promise<Seed> {
  const kv = await Deno.openKv(path);
  try {
    const deps = makeDeps(kv, new SystemClock(), testConfig({ limitScale: 1_000_000 }));
    await prepareService(deps);
    const voterKeys: string[] = [];
    const targets: string[] = [];
    await inBatches(VOTERS, 16, async (i) => {
      const r = await registerAgent(deps, {
        name: `voter-${i}`,
        participation_basis: "owner_directed",
      });
      voterKeys[i] = r.apiKey;
    });
    await inBatches(MESSAGES, 16, async (i) => {
      const { agent } = await registerAgent(deps, {
        name: `author-${i}`,
        participation_basis: "owner_directed",
      });
      const net = `10.200.${i >> 8}.${i & 255}`;
      const post = await createThread(
        deps,
        "named",
        { agentId: agent.id, name: agent.name, network: net },
        `bench-vote-target-${i}-000`,
        { title: `Vote target ${i}`, topic: "general", body: `Message ${i} to vote on.` },
      );
      targets[i] = post.id;
    });
    return { voterKeys, targets };
  } finally {
    kv.close();
  }
}

/**
 * Vote `i` of round `round`: voter i mod VOTERS on a message no earlier vote of that voter
 * had (rounds step the offset), from a network of that vote alone.
 */
function vote(s: Seed, round: number, i: number) {
  const voter = i % VOTERS;
  const pass = Math.floor(i / VOTERS) + round * 8;
  const target = (voter + pass * 17) % MESSAGES;
  const n = round * 100_000 + i;
  return {
    key: s.voterKeys[voter],
    network: `10.${100 + round}.${(n >> 8) & 255}.${n & 255}`,
    body: JSON.stringify({ board: "named", post_id: s.targets[target], value: i % 4 ? 1 : -1 }),
  };
}

interface Result {
  seconds: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
}

/** Sends votes [from, to) of `round` with IN_FLIGHT in flight, vote i to `urls[i % n]`. */
async function drive(urls: string[], s: Seed, round: number, from: number, to: number) {
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  let next = from;
  const worker = async () => {
    while (next < to) {
      const i = next++;
      const v = vote(s, round, i);
      const t0 = performance.now();
      let status = "failed";
      try {
        const res = await fetch(`${urls[i % urls.length]}/votes`, {
          method: "POST",
          headers: { ...HEADERS, authorization: `Bearer ${v.key}`, "x-forwarded-for": v.network },
          body: v.body,
        });
        await res.arrayBuffer();
        status = String(res.status);
      } catch { /* counted as failed */ }
      times.push(performance.now() - t0);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  const pick = (p: number) => times[Math.min(times.length - 1, Math.floor(times.length * p))];
  return { seconds, statuses, p50: pick(0.5), p99: pick(0.99) } satisfies Result;
}

async function setup(seeded: string, s: Seed, processes: number, round: number) {
  const copy = `${seeded}-${processes}p`;
  await copyStore(seeded, copy);
  const flags = await startFlags();
  const servers = [];
  try {
    for (let p = 0; p < processes; p++) {
      servers.push(await startServer(copy, SERVER_ENV, undefined, flags));
    }
    const urls = servers.map((sv) => sv.url);
    await drive(urls, s, round, 0, WARM);
    return await drive(urls, s, round, WARM, WARM + VOTES);
  } finally {
    for (const sv of servers) await sv.stop();
    for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(copy + suffix).catch(() => {});
  }
}

const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : "-");

/** Votes per second, p50, p99 and the answers' statuses, by server processes. */
type Figures = Record<string, { perSecond: number; p50: number; p99: number; statuses: string }>;

/** Seeds a store and measures each setup on its own copy. */
async function measure(): Promise<Figures> {
  const dir = await Deno.makeTempDir({ prefix: "board-bench-votes-" });
  try {
    const path = `${dir}/board.kv`;
    const s = await seed(path);
    const out: Figures = {};
    for (const processes of [1, 3]) {
      const r = await setup(path, s, processes, processes);
      out[processes] = {
        perSecond: VOTES / r.seconds,
        p50: r.p50,
        p99: r.p99,
        statuses: Object.entries(r.statuses).map(([k, n]) => `${n}× ${k}`).join(", "),
      };
    }
    return out;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Runs the benchmark and returns its Markdown section: today's figures beside the baseline's. */
export async function run(): Promise<string> {
  const baseline: { commit: string; figures: Figures } = JSON.parse(
    await Deno.readTextFile(new URL("./vote_throughput_baseline.json", import.meta.url)),
  );
  const now = await measure();
  const rows = ["1", "3"].map((p) => {
    const b = baseline.figures[p];
    const n = now[p];
    return `| ${p} | ${fmt(b.perSecond)} | ${fmt(n.perSecond)} | ${
      fmt(n.perSecond / b.perSecond, 2)
    }× | ${fmt(b.p50)} / ${fmt(b.p99)} | ${fmt(n.p50)} / ${fmt(n.p99)} | ${n.statuses} |`;
  });
  const speedup = now["1"].perSecond / baseline.figures["1"].perSecond;
  return [
    "## Vote throughput",
    "",
    `${VOTES} named-board votes timed per setup (after ${WARM} untimed), ${IN_FLIGHT} in flight, each by one of ${VOTERS} voters from a network of its own on one of ${MESSAGES} roots of ${MESSAGES} authors, against one server process and against three on one store file, requests handed to them in turn (\`tests/bench/vote_throughput.ts\`). "Before" is the same script on the board whose votes took a process-wide lock and a board-wide counter (commit ${baseline.commit}, recorded on this machine).`,
    "",
    "| server processes | votes/s before | votes/s now | ratio | p50 / p99 ms before | p50 / p99 ms now | statuses now |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ...rows,
    "",
    `- One process: ${fmt(speedup, 2)}× the votes per second of before (target 1.5×): ${
      speedup >= 1.5 ? "met" : "MISSED"
    }.`,
    `- Three processes: ${fmt(now["3"].perSecond)} votes/s against ${
      fmt(now["1"].perSecond)
    } with one (not slower: ${now["3"].perSecond >= now["1"].perSecond ? "met" : "MISSED"}).`,
  ].join("\n");
}

if (import.meta.main) {
  const i = Deno.args.indexOf("--record");
  if (i >= 0) {
    const figures = await measure();
    await Deno.writeTextFile(Deno.args[i + 1], JSON.stringify({ figures }, null, 2) + "\n");
    console.log(JSON.stringify(figures, null, 2));
  } else {
    console.log(await run());
  }
}
