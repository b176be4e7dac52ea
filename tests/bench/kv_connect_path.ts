/**
 * The request path on a real networked store: one main.ts process on the KV Connect test
 * server (tests/kv_connect/server.ts), whose every data path call takes `--delay` ms more
 * (20 by default: a store a region away), timed over HTTP one request at a time. Prints p50
 * and p99 per operation and the KV calls each made (from the server's counts), beside the
 * targets of docs/benchmarks.md (a read's p50 at most 45 ms, a write's at most 65 ms).
 *
 * Unlike tests/bench/request_path.ts the delay is real time on the wire (half before the
 * server serves a call, half after), and Deno's own KV Connect client is in the path.
 *
 * Run: `deno run -A tests/bench/kv_connect_path.ts [--delay MS] [--samples N]`.
 */
import { freePort, registerAt, startServer } from "../e2e/server_process.ts";
import { type KvConnectCalls, startKvConnectServer } from "../kv_connect/server.ts";

const arg = (name: string, fallback: number) => {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
};
const DELAY = arg("delay", 20);
const SAMPLES = arg("samples", 20);
const TARGET = { read: 45, write: 65 };

let net = 0;
/** A network of its own for each write (the server trusts X-Forwarded-For). */
const freshNetwork = () => `10.77.${(++net >> 8) & 255}.${net & 255}`;

const headers = (key: string, extra: Record<string, string> = {}) => ({
  accept: "application/json",
  "x-agent-protocol": "board/1",
  "content-type": "application/json",
  authorization: `Bearer ${key}`,
  "x-forwarded-for": freshNetwork(),
  ...extra,
});

async function timed(url: string, init: RequestInit, expect: number): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, init);
  const text = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== expect) {
    throw new Error(`${init.method ?? "GET"} ${url}: ${res.status} ${text}`);
  }
  return ms;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};

/** The KV calls made between two counts: reads and writes. */
const diff = (a: KvConnectCalls, b: KvConnectCalls) => ({
  reads: b.snapshotRead - a.snapshotRead,
  writes: b.atomicWrite - a.atomicWrite,
});

await using kv = await startKvConnectServer({ delayMs: 0 });
await using board = await startServer(kv.url, {
  DENO_KV_ACCESS_TOKEN: kv.token,
  BOARD_TRUST_PROXY: "1",
}, freePort());
const base = board.url;
const author = await registerAt(base, "bench-author");
const voters = [await registerAt(base, "bench-voter-a"), await registerAt(base, "bench-voter-b")];
const newPost = (i: number) => ({
  method: "POST",
  headers: headers(author.key, { "idempotency-key": `bench-post-${crypto.randomUUID()}` }),
  body: JSON.stringify({ title: `Bench ${i}`, topic: "general", body: `post ${i}` }),
});
// Warm up: the first requests compile code paths and open connections.
for (let i = 0; i < 5; i++) {
  await timed(`${base}/v1/posts`, newPost(-i), 201);
  await timed(`${base}/v1/posts?limit=25`, { headers: headers(author.key) }, 200);
}
kv.delayMs = DELAY;

const rows: { op: string; kind: "read" | "write"; ms: number[]; calls: string }[] = [];
async function measure(op: string, kind: "read" | "write", run: (i: number) => Promise<number>) {
  const ms: number[] = [];
  const before = { ...kv.calls };
  for (let i = 0; i < SAMPLES; i++) ms.push(await run(i));
  const { reads, writes } = diff(before, kv.calls);
  rows.push({ op, kind, ms, calls: `${reads / SAMPLES} reads, ${writes / SAMPLES} writes` });
}

const ids: string[] = [];
await measure("POST /v1/posts", "write", async (i) => {
  const init = newPost(i);
  const t0 = performance.now();
  const res = await fetch(`${base}/v1/posts`, init);
  const body = await res.json();
  if (res.status !== 201) throw new Error(JSON.stringify(body));
  ids.push(body.id);
  return performance.now() - t0;
});
await measure(
  "GET /v1/posts?limit=25 (repeated)",
  "read",
  () => timed(`${base}/v1/posts?limit=25`, { headers: headers(author.key) }, 200),
);
await measure("POST /votes", "write", (i) =>
  timed(`${base}/votes`, {
    method: "POST",
    headers: headers(voters[i % 2].key),
    body: JSON.stringify({ board: "named", post_id: ids[i], value: 1 }),
  }, 200));
await measure("GET /v1/posts?limit=25 after a post", "read", async (i) => {
  await timed(`${base}/v1/posts`, newPost(SAMPLES + i), 201);
  return timed(`${base}/v1/posts?limit=25`, { headers: headers(author.key) }, 200);
});

console.log(`KV Connect, ${DELAY} ms per data path call, ${SAMPLES} samples each:`);
console.log("| operation | p50 ms | p99 ms | KV calls per request | target p50 |");
console.log("|---|---:|---:|---:|---|");
for (const r of rows) {
  const p50 = pct(r.ms, 0.5);
  const target = TARGET[r.kind];
  const calls = r.op.includes("after a post") ? `${r.calls} (with the post)` : r.calls;
  console.log(
    `| ${r.op} | ${p50.toFixed(1)} | ${pct(r.ms, 0.99).toFixed(1)} | ${calls} | ≤ ${target}: ${
      p50 <= target ? "met" : "missed"
    } |`,
  );
}
