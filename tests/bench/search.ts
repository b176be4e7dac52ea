/**
 * Search benchmark: p50/p99 latency of 1-, 2- and 4-token queries through
 * GET /v1/search (`app.request`, full JSON response) on an embedded KV file, with
 * 1,000 and 25,000 retained messages of generated text whose words follow a Zipf
 * distribution. Seeding bypasses HTTP: it writes the same records and index keys the
 * publish commit and the sealing of search batches write (summary, listing entries, body,
 * id index, term lists, posting blocks, sealed marker), many per atomic.
 *
 * Run alone: `deno run -A tests/bench/search.ts`.
 */
import { ManualClock } from "../../domain/clock.ts";
import { testConfig } from "../../routes/config.ts";
import { type Deps, makeDeps } from "../../domain/deps.ts";
import {
  type BoardHead,
  EMPTY_HEAD,
  type MessageRecord,
  POINTER,
  pointerKeys,
} from "../../domain/board/mod.ts";
import {
  batchFirst,
  bodyEntries,
  encodeBlock,
  type IndexedTerms,
  listsOf,
  type SealedState,
  storedTerms,
  tokenize,
} from "../../domain/search/mod.ts";
import { previewOf, utf8Length } from "../../domain/text.ts";
import { keys } from "../../kv/keys.ts";
import { listTyped } from "../../kv/read_many.ts";
import { KV_LIMITS } from "../../kv/atomic_limits.ts";
import { createApp } from "../../routes/app.ts";
import { prepareService } from "../../routes/service.ts";

const SIZES = [1_000, 25_000];
const QUERIES_PER_KIND = 400;
const WARMUP = 60;
const PASSES = 3;
const VOCABULARY = 20_000;
const ZIPF_EXPONENT = 1.05;
/** The service's default sealed batch (routes/config.ts). */
const SEARCH_BATCH = 512;
const TOPICS = ["general", "rust", "deno", "agents", "tooling", "ops", "ml", "web", "data", "meta"];

/** Small deterministic PRNG (mulberry32) so every run generates the same board. */
export function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A Zipf-distributed vocabulary of pronounceable pseudo-words. */
class Corpus {
  readonly words: string[] = [];
  readonly #cumulative: Float64Array;
  constructor(readonly random: () => number) {
    const syllables = ["ka", "lo", "mi", "ten", "ra", "vo", "shi", "el", "dan", "qu", "or", "bex"];
    const seen = new Set<string>();
    while (this.words.length < VOCABULARY) {
      const n = 1 + Math.floor(random() * 4);
      let w = "";
      for (let i = 0; i < n; i++) w += syllables[Math.floor(random() * syllables.length)];
      if (random() < 0.05) w += String(Math.floor(random() * 100));
      if (!seen.has(w)) {
        seen.add(w);
        this.words.push(w);
      }
    }
    this.#cumulative = new Float64Array(VOCABULARY);
    let sum = 0;
    for (let r = 0; r < VOCABULARY; r++) {
      sum += 1 / Math.pow(r + 1, ZIPF_EXPONENT);
      this.#cumulative[r] = sum;
    }
  }
  word(): string {
    const x = this.random() * this.#cumulative[VOCABULARY - 1];
    let lo = 0;
    let hi = VOCABULARY - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo];
  }
  /** Sentences with capitals and punctuation, about `n` words. */
  text(n: number): string {
    const out: string[] = [];
    let sentence: string[] = [];
    for (let i = 0; i < n; i++) {
      sentence.push(this.word());
      if (sentence.length > 4 + this.random() * 12 || i === n - 1) {
        sentence[0] = sentence[0][0].toUpperCase() + sentence[0].slice(1);
        out.push(
          sentence.join(this.random() < 0.1 ? ", " : " ") + (this.random() < 0.1 ? "?" : "."),
        );
        sentence = [];
      }
    }
    return out.join(" ");
  }
  length(min: number, max: number): number {
    // Skewed towards short messages, like real boards.
    return Math.round(min + (max - min) * Math.pow(this.random(), 2));
  }
}

export interface Seeded {
  size: number;
  deps: Deps;
  app: ReturnType<typeof createApp>;
  apiKey: string;
  /** Distinct tokens of each seeded message, for picking realistic queries. */
  tokens: string[][];
  seedMs: number;
  close: () => Promise<void>;
}

export async function seedBoard(n: number): Promise<Seeded> {
  const dir = await Deno.makeTempDir({ prefix: "board-search-bench-" });
  const kv = await Deno.openKv(`${dir}/board.kv`);
  const deps = makeDeps(
    kv,
    new ManualClock(),
    testConfig({ limitScale: 1_000_000, searchBatch: SEARCH_BATCH }),
  );
  await prepareService(deps);
  const app = createApp(deps);
  const res = await app.request("/v1/agents", {
    method: "POST",
    headers: {
      accept: "application/json",
      "content-type": "application/json",
      "x-agent-protocol": "board/1",
    },
    body: JSON.stringify({ name: "bench-reader", participation_basis: "owner_directed" }),
  }, { remoteAddr: { hostname: "127.0.0.1" } });
  const apiKey = (await res.json()).api_key as string;

  const started = performance.now();
  const corpus = new Corpus(rng(n));
  const random = corpus.random;
  const head = (await kv.get<BoardHead>(keys.boardHeads("named"))).value ?? EMPTY_HEAD;
  const authors = Array.from({ length: 200 }, () => crypto.randomUUID());
  const records: MessageRecord[] = [];
  const bodies: string[] = [];
  const roots: MessageRecord[] = [];
  const now = deps.clock.now();
  for (let i = 0; i < n; i++) {
    const seq = head.seq + 1 + i;
    const id = crypto.randomUUID();
    const isRoot = roots.length === 0 || random() < 0.25;
    const root = isRoot ? null : roots[Math.floor(roots.length * Math.pow(random(), 0.3))];
    const body = corpus.text(isRoot ? corpus.length(20, 250) : corpus.length(5, 120));
    const agent = authors[Math.floor(random() * authors.length)];
    const rec: MessageRecord = {
      board: "named",
      seq,
      id,
      kind: isRoot ? "root" : "reply",
      thread_id: root ? root.id : null,
      root_id: root ? root.id : id,
      root_seq: root ? root.seq : seq,
      reply_to_id: null,
      agent_id: agent,
      author: `author-${agent.slice(0, 6)}`,
      topic: root ? root.topic : TOPICS[Math.floor(TOPICS.length * Math.pow(random(), 2))],
      title: isRoot ? corpus.text(corpus.length(3, 10)).slice(0, 160) : null,
      ...previewOf(body),
      body_bytes: utf8Length(body),
      created_at: now - (n - i),
      reply_count: 0,
      score: 0,
      up: 0,
      down: 0,
    };
    if (root) root.reply_count++;
    else roots.push(rec);
    records.push(rec);
    bodies.push(body);
  }

  // Same keys as the publish commit and the sealing of complete batches. Bulk-load order:
  // messages by seq, then posting blocks list by list (sequential B-tree inserts).
  const writer = new BulkWriter(kv);
  const entries = new Map<number, IndexedTerms>();
  for await (const e of listTyped(kv, { prefix: keys.bodies.range("named") })) {
    const terms = storedTerms(e.value); // the rules thread
    if (terms) entries.set(e.key[2] as number, terms);
  }
  const tokens: string[][] = [];
  for (let i = 0; i < n; i++) {
    const rec = records[i];
    const stored = bodyEntries(rec, bodies[i]);
    entries.set(rec.seq, stored.terms!);
    await writer.set(keys.messages("named", rec.seq), rec);
    for (const k of pointerKeys(rec)) await writer.set(k, POINTER);
    await writer.set(keys.bodies("named", rec.seq), stored.body);
    if (stored.filter) await writer.set(keys.searchFilters(rec.seq), stored.filter);
    await writer.set(keys.messageSeqById("named", rec.id), rec.seq);
    tokens.push([...new Set([...tokenize(rec.title ?? ""), ...tokenize(bodies[i])])]);
  }
  const upTo = Math.floor((head.seq + n) / SEARCH_BATCH) * SEARCH_BATCH;
  const lists = new Map<string, { prefix: Deno.KvKey; seqs: number[] }>();
  for (const [seq, entry] of [...entries].sort((a, b) => a[0] - b[0])) {
    if (seq > upTo) break;
    for (const prefix of listsOf(entry)) {
      const id = JSON.stringify(prefix);
      const list = lists.get(id) ?? { prefix, seqs: [] };
      list.seqs.push(seq);
      lists.set(id, list);
    }
  }
  for (const { prefix, seqs } of [...lists.values()].sort((a, b) => cmpKeys(a.prefix, b.prefix))) {
    let total = 0;
    for (let i = 0; i < seqs.length;) {
      const first = batchFirst(seqs[i], SEARCH_BATCH);
      let j = i;
      while (j < seqs.length && seqs[j] < first + SEARCH_BATCH) j++;
      total += j - i;
      await writer.set(
        [...prefix, first],
        encodeBlock({ seqs: seqs.slice(i, j), total }),
      );
      i = j;
    }
  }
  const marker: SealedState = { upTo, batch: SEARCH_BATCH, filters: 1 };
  await writer.set(keys.searchSealed(), marker);
  await writer.flush();
  const retained = (await kv.get<number>(keys.counters("posts"))).value ?? 0;
  await kv.atomic()
    .set(keys.boardHeads("named"), { ...head, seq: head.seq + n })
    .set(keys.counters("posts"), retained + n)
    .commit();
  return {
    size: n,
    deps,
    app,
    apiKey,
    tokens,
    seedMs: performance.now() - started,
    close: async () => {
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

function cmpKeys(a: Deno.KvKey, b: Deno.KvKey): number {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Writes keys in atomics of up to the portable mutation limit. */
class BulkWriter {
  #op: Deno.AtomicOperation;
  #count = 0;
  constructor(readonly kv: Deno.Kv) {
    this.#op = kv.atomic();
  }
  async set(key: Deno.KvKey, value: unknown): Promise<void> {
    if (this.#count === KV_LIMITS.mutationsPerAtomic) await this.flush();
    this.#op.set(key, value);
    this.#count++;
  }
  async flush(): Promise<void> {
    if (this.#count === 0) return;
    if (!(await this.#op.commit()).ok) throw new Error("seed commit failed");
    this.#op = this.kv.atomic();
    this.#count = 0;
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

interface Row {
  size: number;
  kind: string;
  p50: number;
  p99: number;
  meanItems: number;
  /** Share of first pages the work budget cut short (fewer items, cursor set). */
  cutShare: number;
}

/** Queries of `k` distinct tokens taken from one random seeded message (what a reader saw). */
export function queriesFrom(tokens: string[][], k: number, random: () => number): string[] {
  const out: string[] = [];
  while (out.length < QUERIES_PER_KIND) {
    const pool = tokens[Math.floor(random() * tokens.length)];
    if (pool.length < k) continue;
    const picked = new Set<string>();
    while (picked.size < k) picked.add(pool[Math.floor(random() * pool.length)]);
    out.push([...picked].join(" "));
  }
  return out;
}

/**
 * Queries of `k` words drawn independently from the Zipf distribution, keeping only words
 * the board holds (so every query runs an intersection; many have few or no matches).
 */
export function independentQueries(board: Seeded, size: number, k: number): string[] {
  const corpus = new Corpus(rng(size));
  const present = new Set(board.tokens.flat());
  return Array.from({ length: QUERIES_PER_KIND }, () => {
    const picked = new Set<string>();
    while (picked.size < k) {
      const w = corpus.word();
      if (present.has(w)) picked.add(w);
    }
    return [...picked].join(" ");
  });
}

interface Sample {
  ms: number;
  items: number;
  cut: boolean;
}

async function timeQuery(board: Seeded, q: string): Promise<Sample> {
  const headers = {
    accept: "application/json",
    "x-agent-protocol": "board/1",
    authorization: `Bearer ${board.apiKey}`,
  };
  const t0 = performance.now();
  const res = await board.app.request(`/v1/search?q=${encodeURIComponent(q)}`, { headers }, {
    remoteAddr: { hostname: "127.0.0.1" },
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`search failed: ${JSON.stringify(body)}`);
  const items = body.items.length as number;
  return { ms: performance.now() - t0, items, cut: items < 10 && body.next_before !== null };
}

/** Median of a query's runs (one per pass). */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** A row from each query's runs (`runs[i]`: the PASSES samples of query i). */
function summarise(size: number, kind: string, runs: Sample[][]): Row {
  const times = runs.map((r) => median(r.map((x) => x.ms))).sort((a, b) => a - b);
  const first = runs.map((r) => r[0]);
  return {
    size,
    kind,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    meanItems: first.reduce((n, x) => n + x.items, 0) / first.length,
    cutShare: first.filter((x) => x.cut).length / first.length,
  };
}

/**
 * p50/p99 of one kind of query on every board. Queries alternate between the boards, so
 * both sizes see the same load from other processes on this shared machine. The set runs
 * PASSES times; a query's time is the median of its runs, so a one-off stall that has
 * nothing to do with the query (another process taking the core, a GC pause) does not
 * count, while a query that is slow is slow in every pass. The percentiles are over the
 * queries, as before.
 */
async function measure(boards: Seeded[], kind: string, sets: string[][]): Promise<Row[]> {
  for (let i = 0; i < WARMUP; i++) {
    for (const [b, board] of boards.entries()) await timeQuery(board, sets[b][i]);
  }
  const runs: Sample[][][] = boards.map(() => sets[0].map(() => []));
  for (let pass = 0; pass < PASSES; pass++) {
    for (let i = 0; i < QUERIES_PER_KIND; i++) {
      for (const [b, board] of boards.entries()) {
        runs[b][i].push(await timeQuery(board, sets[b][i]));
      }
    }
  }
  return boards.map((board, b) => summarise(board.size, kind, runs[b]));
}

/** Runs the benchmark and returns a Markdown section with the figures. */
export async function run(): Promise<string> {
  const rows: Row[] = [];
  const boards: Seeded[] = [];
  try {
    for (const size of SIZES) boards.push(await seedBoard(size));
    for (const k of [1, 2, 4]) {
      const sets = boards.map((b) => queriesFrom(b.tokens, k, rng(7 * b.size + k)));
      rows.push(...await measure(boards, `${k} token(s) from a message`, sets));
    }
    for (const k of [2, 4]) {
      const sets = boards.map((b) => independentQueries(b, b.size, k));
      rows.push(...await measure(boards, `${k} independent Zipf words`, sets));
    }
  } finally {
    for (const b of boards) await b.close();
  }
  rows.sort((x, y) => x.size - y.size);
  const seeding = boards.map((b) =>
    `${b.size.toLocaleString("en")} messages seeded in ${(b.seedMs / 1000).toFixed(1)} s`
  );
  const fmt = (x: number) => x.toFixed(2);
  const lines = [
    "## Search (`GET /v1/search`)",
    "",
    `Embedded KV file, \`app.request\` through the full middleware stack, ${QUERIES_PER_KIND} queries per row after ${WARMUP} warm-up queries, queries alternating between the two boards, ${PASSES} passes, a query's time the median of its ${PASSES} runs (percentiles over the queries), default page size 10. Text: ${
      VOCABULARY.toLocaleString("en")
    }-word vocabulary, Zipf exponent ${ZIPF_EXPONENT}; 25% roots, replies spread over threads. ${
      seeding.join("; ")
    }.`,
    "",
    "| messages | query | p50 ms | p99 ms | mean items | pages cut by budget |",
    "|---:|---|---:|---:|---:|---:|",
    ...rows.map((r) =>
      [
        "",
        r.size.toLocaleString("en"),
        r.kind,
        fmt(r.p50),
        fmt(r.p99),
        r.meanItems.toFixed(1),
        `${(100 * r.cutShare).toFixed(1)}%`,
        "",
      ].join(" | ").trim()
    ),
    "",
    "Ratio 25,000 / 1,000 (p50, p99):",
    "",
  ];
  for (const kind of [...new Set(rows.map((r) => r.kind))]) {
    const small = rows.find((r) => r.kind === kind && r.size === SIZES[0])!;
    const large = rows.find((r) => r.kind === kind && r.size === SIZES[1])!;
    lines.push(
      `- ${kind}: ${(large.p50 / small.p50).toFixed(2)}x, ${(large.p99 / small.p99).toFixed(2)}x`,
    );
  }
  lines.push(
    "",
    "Targets: p50 < 5 ms and p99 < 25 ms at 25,000 messages; 25,000 within 2x of 1,000.",
  );
  return lines.join("\n");
}

if (import.meta.main) console.log(await run());
