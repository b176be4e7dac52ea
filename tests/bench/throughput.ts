/**
 * Write throughput: votes and posts per second with 16 in flight, against one server
 * process and against three server processes on one KV file (requests handed to the three
 * in turn). Every write is by an agent from a network of that write alone, as independent
 * agents send them: a vote by one of many voters on a root of its own author, a post
 * (`POST /v1/posts`) by one of many agents. Nothing but the store itself is shared.
 *
 * The store is seeded through the domain (accounts and one named root per author), then the
 * real server (main.ts with the flags of `deno task start`) answers over loopback. Each
 * setup (kind × processes) runs on its own copy of the seeded store, with fresh servers.
 *
 * Beside today's figures the section shows those of the same script run on the board before
 * the read plans (throughput_baseline.json, recorded with `--record FILE` on that commit).
 * Targets: at least 1.5× the baseline's votes per second with one process, and three
 * processes not slower than one, for votes and for posts.
 *
 * Beside the rates, the CPU time the servers and the load generator used per timed write
 * (Linux /proc): on a machine with few cores, what three processes cost is what limits them.
 *
 * Run alone: `deno run -A tests/bench/throughput.ts` (prints the section; `--record FILE`
 * writes the raw figures as JSON; `--section FILE` prints the section from figures recorded
 * earlier, such as the median of alternating rounds combined by recordings.ts); `deno task bench` adds the section to docs/benchmarks.md.
 * BENCH_WRITES sets the writes timed per setup (default 1200); BENCH_ROUNDS the rounds of the
 * four setups, one or three processes first in turn, whose medians are recorded (default 1).
 */
import { registerAgent } from "../../domain/accounts/mod.ts";
import { createThread } from "../../domain/writes/mod.ts";
import { makeDeps } from "../../domain/deps.ts";
import { SystemClock } from "../../domain/clock.ts";
import { testConfig } from "../../routes/config.ts";
import { prepareService } from "../../routes/service.ts";
import { startServer } from "../e2e/server_process.ts";
import { medianOf, readRecording } from "./recordings.ts";
import { copyStore, startFlags } from "./store.ts";

const WRITES = Number(Deno.env.get("BENCH_WRITES") ?? 1200);
/**
 * Rounds of the four setups, one process first and three first in turn, each number the
 * median of the rounds': a machine whose load drifts favours neither.
 */
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 1);
/** Untimed writes per server process before the timed ones (each process equally warm). */
const WARM = 60;
const IN_FLIGHT = 16;
/** Voters (who also post); each votes on distinct messages, at most WRITES / AGENTS + 1 times. */
const AGENTS = 400;
/** Authors, one root each: the vote targets. */
const MESSAGES = 400;
const KINDS = ["votes", "posts"] as const;
type Kind = typeof KINDS[number];
const SERVER_ENV = { BOARD_TRUST_PROXY: "1", BOARD_LIMIT_SCALE: "1000" };
const HEADERS = {
  accept: "application/json",
  "x-agent-protocol": "board/1",
  "content-type": "application/json",
  "accept-encoding": "identity",
};

interface Seed {
  agentKeys: string[];
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
    const agentKeys: string[] = [];
    const targets: string[] = [];
    await inBatches(AGENTS, 16, async (i) => {
      const r = await registerAgent(deps, {
        name: `voter-${i}`,
        participation_basis: "owner_directed",
      });
      agentKeys[i] = r.apiKey;
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
    return { agentKeys, targets };
  } finally {
    kv.close();
  }
}

interface Write {
  path: string;
  key: string;
  network: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Write `i` of `kind` in round `round`, from a network of that write alone: a vote by agent
 * i mod AGENTS on a message no earlier vote of that agent had (rounds step the offset), or a
 * post by agent i mod AGENTS.
 */
function write(kind: Kind, s: Seed, round: number, i: number): Write {
  const agent = i % AGENTS;
  const n = round * 100_000 + i;
  const network = `10.${100 + round}.${(n >> 8) & 255}.${n & 255}`;
  if (kind === "posts") {
    return {
      path: "/v1/posts",
      key: s.agentKeys[agent],
      network,
      headers: { "idempotency-key": `bench-${crypto.randomUUID()}` },
      body: JSON.stringify({
        title: `Throughput post ${round}-${i}`,
        topic: "general",
        body: `A post sent by agent ${agent} while fifteen others are in flight.`,
      }),
    };
  }
  const pass = Math.floor(i / AGENTS) + round * 8;
  const target = (agent + pass * 17) % MESSAGES;
  return {
    path: "/votes",
    key: s.agentKeys[agent],
    network,
    headers: {},
    body: JSON.stringify({ board: "named", post_id: s.targets[target], value: i % 4 ? 1 : -1 }),
  };
}

interface Result {
  seconds: number;
  /** CPU time per timed write, ms: of the server processes together, of the load generator. */
  serverCpuMs: number;
  clientCpuMs: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
}

/** CPU time (user and system) a process has used so far, ms (Linux: /proc). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => "");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10; // utime, stime: 100 ticks a second
}

/** Sends writes [from, to) of `round` with IN_FLIGHT in flight, write i to `urls[i % n]`. */
async function drive(
  urls: string[],
  kind: Kind,
  s: Seed,
  round: number,
  from: number,
  to: number,
): Promise<Omit<Result, "serverCpuMs" | "clientCpuMs">> {
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  let next = from;
  const worker = async () => {
    while (next < to) {
      const i = next++;
      const w = write(kind, s, round, i);
      const t0 = performance.now();
      let status = "failed";
      try {
        const res = await fetch(`${urls[i % urls.length]}${w.path}`, {
          method: "POST",
          headers: {
            ...HEADERS,
            ...w.headers,
            authorization: `Bearer ${w.key}`,
            "x-forwarded-for": w.network,
          },
          body: w.body,
        });
        const text = await res.text();
        status = String(res.status);
        if (res.status >= 300 && !statuses[status]) console.error(`${kind} ${status}: ${text}`);
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
  return { seconds, statuses, p50: pick(0.5), p99: pick(0.99) };
}

/** One setup: `processes` fresh servers on a fresh copy of the seeded store. */
async function setup(seeded: string, s: Seed, kind: Kind, processes: number, round: number) {
  const copy = `${seeded}-${kind}-${processes}p`;
  await copyStore(seeded, copy);
  const flags = await startFlags();
  const servers = [];
  try {
    for (let p = 0; p < processes; p++) {
      servers.push(await startServer(copy, SERVER_ENV, undefined, flags));
    }
    const urls = servers.map((sv) => sv.url);
    const warm = WARM * processes;
    await drive(urls, kind, s, round, 0, warm);
    const pids = servers.map((sv) => sv.child.pid);
    const cpu = () => Promise.all([...pids, Deno.pid].map(cpuMs));
    const before = await cpu();
    const r = await drive(urls, kind, s, round, warm, warm + WRITES);
    const used = (await cpu()).map((ms, i) => ms - before[i]);
    const client = used.pop()!;
    const server = used.reduce((a, b) => a + b, 0);
    return { ...r, serverCpuMs: server / WRITES, clientCpuMs: client / WRITES };
  } finally {
    for (const sv of servers) await sv.stop();
    for (const suffix of ["", "-wal", "-shm", "-commits.lock"]) {
      await Deno.remove(copy + suffix).catch(() => {});
    }
  }
}

const fmt = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : "-");

/** Per kind, by server processes: writes per second, p50, p99 and the answers' statuses. */
export type Figures = Record<
  Kind,
  Record<string, {
    perSecond: number;
    p50: number;
    p99: number;
    statuses: string;
    /** CPU ms per write: the server processes together, the load generator (later recordings). */
    serverCpuMs?: number;
    clientCpuMs?: number;
  }>
>;

/** Seeds a store and measures each kind with each number of processes on its own copy. */
export async function measureThroughput(): Promise<Figures> {
  const dir = await Deno.makeTempDir({ prefix: "board-bench-throughput-" });
  try {
    const path = `${dir}/board.kv`;
    const s = await seed(path);
    const rounds: Figures[] = [];
    for (let n = 0; n < ROUNDS; n++) {
      const out = { votes: {}, posts: {} } as Figures;
      for (const kind of KINDS) {
        // One process first in even rounds, three first in odd ones.
        for (const processes of n % 2 ? [3, 1] : [1, 3]) {
          const round = processes + (kind === "posts" ? 10 : 0);
          const r = await setup(path, s, kind, processes, round);
          out[kind][processes] = {
            perSecond: WRITES / r.seconds,
            p50: r.p50,
            p99: r.p99,
            serverCpuMs: r.serverCpuMs,
            clientCpuMs: r.clientCpuMs,
            statuses: Object.entries(r.statuses).map(([k, n]) => `${n}× ${k}`).join(", "),
          };
        }
      }
      rounds.push(out);
    }
    return medianOf(rounds) as Figures;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

const verdict = (ok: boolean) => ok ? "met" : "MISSED";

/**
 * Runs the benchmark (or takes `now`, figures recorded earlier) and returns its Markdown
 * section: today's figures beside the baseline's.
 */
export async function run(recorded?: { writes: number; figures: Figures }): Promise<string> {
  const baseline = await readRecording<Figures>(
    new URL("./throughput_baseline.json", import.meta.url),
  );
  const writes = recorded?.writes ?? WRITES;
  const now = recorded?.figures ?? await measureThroughput();
  const rows = KINDS.flatMap((kind) =>
    ["1", "3"].map((p) => {
      const b = baseline.figures[kind][p];
      const n = now[kind][p];
      return `| ${kind} | ${p} | ${fmt(b.perSecond)} | ${fmt(n.perSecond)} | ${
        fmt(n.perSecond / b.perSecond, 2)
      }× | ${fmt(b.p50)} / ${fmt(b.p99)} | ${fmt(n.p50)} / ${fmt(n.p99)} | ${
        fmt(n.serverCpuMs ?? NaN, 2)
      } + ${fmt(n.clientCpuMs ?? NaN, 2)} | ${n.statuses} |`;
    })
  );
  const speedup = now.votes["1"].perSecond / baseline.figures.votes["1"].perSecond;
  return [
    "## Write throughput",
    "",
    `${writes} writes of each kind timed per setup${
      recorded
        ? ""
        : ROUNDS > 1
        ? ` (medians of ${ROUNDS} rounds, one or three processes first in turn)`
        : ""
    } (after ${WARM} untimed per server process), ${IN_FLIGHT} in flight, against one server process and against three on one store file, requests handed to them in turn (\`tests/bench/throughput.ts\`): named-board votes, each by one of ${AGENTS} voters from a network of its own on one of ${MESSAGES} roots of ${MESSAGES} authors; posts (\`POST /v1/posts\`), each by one of the same ${AGENTS} agents from a network of its own. "Before" is the same script on the board before the read plans (commit ${baseline.commit}, recorded on this machine). CPU ms per write: the CPU time (user and system) the server processes together and the load generator used during the timed writes, divided by the writes; with two cores, about 2,000 ms of CPU a second are there to share.`,
    "",
    "| writes | server processes | per second before | per second now | ratio | p50 / p99 ms before | p50 / p99 ms now | CPU ms per write now: servers + load generator | statuses now |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ...rows,
    "",
    `- Votes, one process: ${fmt(speedup, 2)}× the votes per second of before (target 1.5×): ${
      verdict(speedup >= 1.5)
    }.`,
    ...KINDS.map((kind) =>
      `- ${kind === "votes" ? "Votes" : "Posts"}, three processes: ${
        fmt(now[kind]["3"].perSecond)
      }/s against ${fmt(now[kind]["1"].perSecond)}/s with one (not slower: ${
        verdict(now[kind]["3"].perSecond >= now[kind]["1"].perSecond)
      }).`
    ),
    "",
    "The spread between runs, and why three processes on one store file are where they are: [benchmark_notes.md](benchmark_notes.md#writes-from-several-processes-on-one-store-file).",
  ].join("\n");
}

if (import.meta.main) {
  const i = Deno.args.indexOf("--record");
  if (i >= 0) {
    const figures = await measureThroughput();
    const commit = new TextDecoder().decode(
      (await new Deno.Command("git", { args: ["rev-parse", "--short", "HEAD"] }).output()).stdout,
    ).trim();
    await Deno.writeTextFile(
      Deno.args[i + 1],
      JSON.stringify({ commit, writes: WRITES, figures }, null, 2) + "\n",
    );
    console.log(JSON.stringify(figures, null, 2));
  } else {
    const from = Deno.args.indexOf("--section");
    const recorded = from >= 0
      ? { writes: WRITES, ...await readRecording<Figures>(Deno.args[from + 1]) }
      : undefined;
    console.log(await run(recorded));
  }
}
