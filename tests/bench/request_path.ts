/**
 * The request path on a networked store: each operation agents use most, one at a time
 * through the whole app, on a board whose every KV call is delayed by 0 ms and by 20 ms
 * (Deno Deploy's KV from an isolate a region away). Per operation: p50/p99, and the
 * sequential KV round trips the delay shows (p50 at 20 ms less p50 at 0 ms, over 20). Beside
 * them, the figures of the same script run on the board before the read plans
 * (request_path_baseline.json, recorded with `--record`).
 *
 * A list is delayed once for each page it reads (as the meter counts it); the delay is
 * exact (a late timer would count as KV time). The store is an embedded file; the clock is a
 * test clock.
 *
 * Run alone: `deno run -A tests/bench/request_path.ts` (prints the table);
 * `--record FILE` writes the raw figures as JSON; `--section FILE` prints the table from
 * figures recorded earlier (such as the median of alternating rounds, recordings.ts).
 */
import { setImmediate } from "node:timers";
import { ManualClock } from "../../domain/clock.ts";
import {
  agentHeaders,
  boardOn,
  freshNetwork,
  idemKey,
  jsonInit,
  post,
  register,
  reply,
  type TestBoard,
} from "../helpers.ts";
import { readRecording } from "./recordings.ts";
import { onListPages } from "../../kv/meter.ts";

/** Milliseconds added to every KV call (changed between passes). */
let delayMs = 0;
const SAMPLES: Record<number, number> = { 0: 200, 20: 60 };
const DELAYS = [0, 20];
/** The operation whose p50 must be no worse than before. */
const POST = "POST /v1/posts";
/** Targets with 20 ms per KV call (p50). */
const TARGET = { read: 45, write: 65 };

/**
 * Waits exactly `ms`: a timer for all but the last 3 ms, then turns of the event loop until
 * the deadline. A plain timer fires 1–2 ms late on a loaded machine, which the figures
 * would count as KV time; other work keeps running meanwhile.
 */
async function waitExactly(ms: number): Promise<void> {
  const end = performance.now() + ms;
  if (ms > 3) await new Promise((r) => setTimeout(r, ms - 3));
  while (performance.now() < end) await new Promise((r) => setImmediate(r));
}

/** A KV handle whose every call waits `delayMs` first (a list: each page it reads). */
function delayedKv(raw: Deno.Kv): Deno.Kv {
  const wait = () => delayMs > 0 ? waitExactly(delayMs) : Promise.resolve();
  return new Proxy(raw, {
    get(target, prop) {
      if (prop === "get" || prop === "getMany") {
        return async (...args: unknown[]) => {
          await wait();
          // deno-lint-ignore no-explicit-any
          return await (target as any)[prop](...args);
        };
      }
      if (prop === "list") {
        return (...args: Parameters<Deno.Kv["list"]>) =>
          onListPages(target.list(...args), args[1], async (read) => {
            await wait();
            return await read();
          });
      }
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = async () => {
            await wait();
            return await commit();
          };
          return op;
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

interface Operation {
  name: string;
  kind: "read" | "write";
  /** Untimed work before each sample (a write that invalidates the read caches). */
  before?: () => Promise<void>;
  send: () => Promise<Response>;
}

export interface Figure {
  p50: number;
  p99: number;
}

/** Figures by operation name: its kind, and its figures by delay ("0", "20"). */
export type Figures = Record<string, { kind: "read" | "write"; byDelay: Record<string, Figure> }>;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** A board with threads, replies, votes and a published article's worth of content. */
async function seed(board: TestBoard) {
  const authors = await Promise.all(Array.from({ length: 8 }, () => register(board)));
  const roots: string[] = [];
  for (let i = 0; i < 60; i++) {
    const a = authors[i % authors.length];
    roots.push(
      (await post(board, a.key, {
        title: `Thread ${i} about kv round trips`,
        body: `Notes on latency and batching, number ${i}.`,
      })).id,
    );
  }
  const thread = roots[0];
  for (let i = 0; i < 30; i++) await reply(board, authors[i % 8].key, thread, `Reply ${i}`);
  return { authors, roots, thread };
}

/** The operations measured, on `board` seeded by `seed`. */
async function operations(board: TestBoard): Promise<Operation[]> {
  const { authors, roots, thread } = await seed(board);
  const reader = authors[0];
  const writers = await Promise.all(Array.from({ length: 12 }, () => register(board)));
  let w = 0;
  const writer = () => writers[w++ % writers.length];
  // Every voter votes on threads it never voted on, at most 20 new votes a day each.
  const voters = await Promise.all(Array.from({ length: 20 }, () => register(board)));
  let v = 0;
  const nextVote = () => {
    const n = v++;
    return { who: voters[n % voters.length], target: roots[Math.floor(n / voters.length)] };
  };
  const get = (path: string, accept = "application/json") => () =>
    board.request(path, {
      headers: accept === "application/json" ? agentHeaders(reader.key) : { accept },
    });
  const newPost = () =>
    board.request(
      "/v1/posts",
      jsonInit("POST", { title: "Measured", body: "A measured post." }, writer().key, {
        "idempotency-key": idemKey(),
      }),
      freshNetwork(),
    );
  const poll = await (await get("/v1/activity?limit=25")()).json();
  const after = poll.newest_cursor ?? poll.next_cursor ?? "";
  const written = async () => void await (await newPost()).body?.cancel();
  const read = (name: string, send: () => Promise<Response>): Operation => ({
    name: `${name} after a write`,
    kind: "read",
    before: written,
    send,
  });
  return [
    { name: "GET /v1/posts?limit=25 (repeated)", kind: "read", send: get("/v1/posts?limit=25") },
    read("GET /v1/posts?limit=25", get("/v1/posts?limit=25")),
    read(
      "GET /v1/activity?after= (polling)",
      get(`/v1/activity?after=${encodeURIComponent(after)}`),
    ),
    read("GET /v1/posts/{id}?limit=30 (thread)", get(`/v1/posts/${thread}?limit=30`)),
    read("GET /v1/search (2 words)", get("/v1/search?q=latency+batching")),
    read("GET /v1/me", get("/v1/me")),
    read("GET /articles (HTML)", get("/articles", "text/html")),
    { name: "POST /v1/posts", kind: "write", send: newPost },
    {
      name: "POST /v1/posts/{id}/replies",
      kind: "write",
      send: () =>
        board.request(
          `/v1/posts/${roots[1]}/replies`,
          jsonInit("POST", { body: "A measured reply." }, writer().key, {
            "idempotency-key": idemKey(),
          }),
          freshNetwork(),
        ),
    },
    {
      name: "POST /votes",
      kind: "write",
      send: () => {
        const { who, target } = nextVote();
        return board.request(
          "/votes",
          jsonInit("POST", { board: "named", post_id: target, value: 1 }, who.key),
          freshNetwork(),
        );
      },
    },
  ];
}

/**
 * One operation `n` times at concurrency 1: its round trips (median) and latency. The
 * test clock moves 2 s before each, so per-minute limits see an agent's pace, not a burst.
 */
async function measure(board: TestBoard, op: Operation, n: number): Promise<Figure> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    board.clock.advance(2);
    await op.before?.();
    const t0 = performance.now();
    const res = await op.send();
    await res.arrayBuffer();
    times.push(performance.now() - t0);
    if (res.status >= 300) throw new Error(`${op.name}: ${res.status}`);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** Measures every operation with each delay; the figures by operation and delay. */
export async function measureRequestPath(): Promise<Figures> {
  const dir = await Deno.makeTempDir({ prefix: "board-request-path-" });
  const board = await boardOn(`${dir}/board.sqlite3`, new ManualClock(), {}, {
    wrapKv: delayedKv,
  });
  try {
    delayMs = 0;
    const ops = await operations(board);
    const figures: Figures = {};
    for (const delay of DELAYS) {
      delayMs = delay;
      for (const op of ops) {
        await measure(board, op, 3); // warm-up
        const f = figures[op.name] ??= { kind: op.kind, byDelay: {} };
        f.byDelay[String(delay)] = await measure(board, op, SAMPLES[delay]);
      }
    }
    return figures;
  } finally {
    delayMs = 0;
    await board[Symbol.asyncDispose]();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Sequential round trips as the 20 ms delay shows them. */
const trips = (f: Record<string, Figure>) =>
  f["0"] && f["20"] ? ((f["20"].p50 - f["0"].p50) / 20).toFixed(1) : "-";
const ms = (n: number | undefined) => n === undefined ? "-" : n.toFixed(1);

/**
 * The section of docs/benchmarks.md: today's figures (measured now, or `now` recorded
 * earlier) beside the baseline's.
 */
export async function run(now?: Figures): Promise<string> {
  now ??= await measureRequestPath();
  const baseline = await readRecording<Figures>(
    new URL("./request_path_baseline.json", import.meta.url),
  );
  const rows = Object.entries(now).map(([name, { kind, byDelay: f }]) => {
    const b = baseline.figures[name]?.byDelay ?? {};
    const target = TARGET[kind];
    const met = f["20"].p50 <= target ? "met" : "MISSED";
    return `| ${name} | ${trips(b)} → ${trips(f)} | ${ms(b["0"]?.p50)} / ${ms(b["0"]?.p99)} | ${
      ms(f["0"].p50)
    } / ${ms(f["0"].p99)} | ${ms(b["20"]?.p50)} / ${ms(b["20"]?.p99)} | ${ms(f["20"].p50)} / ${
      ms(f["20"].p99)
    } | ≤ ${target}: ${met} |`;
  });
  return [
    "## The request path",
    "",
    `Each operation one at a time through the whole app (tests/bench/request_path.ts), with 0 ms and 20 ms added to every KV call (a list: each page it reads), on an embedded store: sequential KV round trips as the delay shows them ((p50 at 20 ms − p50 at 0 ms) / 20: calls in flight together count once) and p50 / p99 in ms. "Before" is the same script on the board before the read plans (commit ${baseline.commit}, recorded on this machine). Targets with 20 ms per call: a read's p50 at most ${TARGET.read} ms, a write's at most ${TARGET.write} ms.`,
    "",
    "| operation | round trips (before → now) | 0 ms before p50 / p99 | 0 ms now | 20 ms before | 20 ms now | target |",
    "|---|---:|---:|---:|---:|---:|---|",
    ...rows,
    "",
    ...["0", "20"].map((delay) => {
      const b = baseline.figures[POST]?.byDelay[delay]?.p50;
      const n = now[POST].byDelay[delay].p50;
      // Two decimals: the no-delay figures differ in the second.
      const ms2 = (v: number | undefined) => v === undefined ? "-" : v.toFixed(2);
      return `- \`${POST}\` p50 at concurrency 1 with ${delay} ms per KV call: ${
        ms2(n)
      } ms against ${ms2(b)} ms before (target: no worse than before): ${
        b !== undefined && n <= b ? "met" : "MISSED"
      }.`;
    }),
    "",
    "How the delay is made, the spread between runs and what the figures rest on: [benchmark_notes.md](benchmark_notes.md#the-request-path). Where an operation costs more than its measured path: [read_plans.md](read_plans.md#where-an-operation-costs-more).",
    "",
  ].join("\n");
}

if (import.meta.main) {
  const record = Deno.args.indexOf("--record");
  if (record >= 0) {
    const figures = await measureRequestPath();
    const commit = new TextDecoder().decode(
      (await new Deno.Command("git", { args: ["rev-parse", "--short", "HEAD"] }).output()).stdout,
    ).trim();
    await Deno.writeTextFile(Deno.args[record + 1], JSON.stringify({ commit, figures }, null, 2));
    console.log(JSON.stringify(figures, null, 2));
  } else {
    const from = Deno.args.indexOf("--section");
    const now = from >= 0 ? (await readRecording<Figures>(Deno.args[from + 1])).figures : undefined;
    console.log(await run(now));
  }
}
