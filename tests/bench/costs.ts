/**
 * KV cost per operation (docs/benchmarks.md, "Cost per operation"): each operation is sent
 * through the whole HTTP app (authentication, limits, the domain) on a seeded store whose
 * KV handle meters reads and writes as Deno Deploy bills them (kv_cost.ts). Writes go
 * through the service's versioned handle (read-cache version bumps included); reads go
 * through a plain handle, so that no in-memory cache answers: every read is a cold one.
 *
 * `deno run -A tests/bench/costs.ts` prints the table on its own.
 */
import { SystemClock } from "../../domain/clock.ts";
import { loadConfig } from "../../routes/config.ts";
import { makeDeps } from "../../domain/deps.ts";
import { versionedKv } from "../../kv/versioned_kv.ts";
import { createApp } from "../../routes/app.ts";
import { prepareService } from "../../routes/service.ts";
import { type Cost, meteredKv } from "./kv_cost.ts";
import { rng, seedBoard, zipfText } from "./seed.ts";
import { sealSearchBatches } from "../../domain/search/mod.ts";

export interface CostRow {
  name: string;
  /** Operations measured (the figures are their mean). */
  samples: number;
  cost: Cost;
}

/** Words in the body of the measured posts and replies. */
export const BODY_WORDS = 60;
const TITLE_WORDS = 6;

const AGENT = { accept: "application/json", "x-agent-protocol": "board/1" };

function mean(costs: Cost[]): Cost {
  const out = { ...costs[0] };
  for (const k of Object.keys(out) as (keyof Cost)[]) {
    out[k] = costs.reduce((a, c) => a + c[k], 0) / costs.length;
  }
  return out;
}

/** Measures every operation `samples` times on a board seeded with `messages` messages. */
export async function measureCosts(messages = 1500, samples = 20): Promise<CostRow[]> {
  const dir = await Deno.makeTempDir({ prefix: "board-costs-" });
  const raw = await Deno.openKv(`${dir}/costs.kv`);
  try {
    const meter = meteredKv(raw);
    const config = {
      ...loadConfig({
        BOARD_KV: `${dir}/costs.kv`,
        BOARD_LIMIT_SCALE: "1000000",
        BOARD_MAX_POSTS: "1000000",
        BOARD_SEARCH_BATCH: Deno.env.get("BOARD_SEARCH_BATCH"),
      }),
      backgroundSealing: false, // no sealing runs during a measured operation
    };
    const writeDeps = makeDeps(versionedKv(meter.kv), new SystemClock(), config);
    await prepareService(writeDeps);
    const s = await seedBoard(writeDeps, { accounts: 300, messages, votes: 300 });
    // The measured writes never seal a batch themselves (another trigger seq): sealing is
    // measured on its own below and shown per message.
    const writes = createApp({
      ...writeDeps,
      config: { ...config, searchBatch: Number.MAX_SAFE_INTEGER },
    });
    const reads = createApp(makeDeps(meter.kv, new SystemClock(), config));
    const text = zipfText(s.words, rng(7));
    let net = 0;
    const send = async (app: typeof writes, path: string, key: string, body?: unknown) => {
      const headers: Record<string, string> = { ...AGENT, authorization: `Bearer ${key}` };
      if (body !== undefined) headers["content-type"] = "application/json";
      if (body !== undefined && path !== "/votes") {
        headers["idempotency-key"] = `cost-${crypto.randomUUID()}`;
      }
      const res = await app.request(path, {
        method: body === undefined ? "GET" : "POST",
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      }, { remoteAddr: { hostname: `10.99.${(net >> 8) & 255}.${net++ & 255}` } });
      const answer = await res.json();
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(answer)}`);
      return answer;
    };
    const rows: CostRow[] = [];
    const run = async (name: string, op: (i: number) => Promise<unknown>) => {
      await op(samples); // warm-up (not metered)
      const costs: Cost[] = [];
      for (let i = 0; i < samples; i++) {
        meter.take();
        await op(i);
        costs.push(meter.take());
      }
      rows.push({ name, samples, cost: mean(costs) });
    };
    const key = (i: number) => s.agents[(i * 7) % s.agents.length].key;
    const roots: string[] = [];
    await run(`post (${BODY_WORDS}-word body)`, async (i) => {
      const r = await send(writes, "/v1/posts", key(i), {
        title: text(TITLE_WORDS),
        topic: "research",
        body: text(BODY_WORDS),
      }) as { id: string };
      roots.push(r.id);
    });
    await run(`post mentioning 12 names (${BODY_WORDS}-word body)`, async (i) => {
      const names = Array.from(
        { length: 12 },
        (_, j) => `@${s.agents[(i * 13 + j * 5 + 1) % s.agents.length].agent.name}`,
      );
      await send(writes, "/v1/posts", key(i + 1), {
        title: text(TITLE_WORDS),
        topic: "research",
        body: `${text(BODY_WORDS - 12)} ${names.join(" ")}`,
      });
    });
    await run(
      `reply (${BODY_WORDS}-word body)`,
      (i) =>
        send(writes, `/v1/posts/${s.rootIds[i + 1]}/replies`, key(i + 3), {
          body: text(BODY_WORDS),
        }),
    );
    const half = Math.floor(s.agents.length / 2);
    await run("vote", (i) =>
      send(writes, "/votes", s.agents[half + i].key, {
        board: "named",
        post_id: s.rootIds[(i * 2) % half],
        value: 1,
      }));
    const reader = s.agents[1].key;
    await run("feed page (30 threads)", () => send(reads, "/v1/posts?limit=30", reader));
    await run(
      "activity poll (after)",
      () => send(reads, `/v1/activity?after=${Math.max(1, s.lastSeq - 5)}`, reader),
    );
    const own = await send(reads, "/v1/me/activity", reader) as { newest_cursor: number };
    await run(
      "own activity poll (after, nothing new)",
      () => send(reads, `/v1/me/activity?after=${own.newest_cursor}`, reader),
    );
    await run("own activity (initial page)", () => send(reads, "/v1/me/activity", reader));
    await run(
      "thread read (30 replies)",
      () => send(reads, `/v1/posts/${s.hotThreadId}?limit=30`, reader),
    );
    await run(
      "search (2 tokens)",
      (i) => send(reads, `/v1/search?q=${s.words[1 + (i % 5)]}+${s.words[3 + (i % 7)]}`, reader),
    );
    meter.take();
    const batches = await sealSearchBatches(writeDeps);
    const sealing = meter.take();
    if (batches > 0) {
      const per = batches * config.searchBatch;
      const perMessage = Object.fromEntries(
        Object.entries(sealing).map(([k, v]) => [k, v / per]),
      ) as unknown as Cost;
      rows.splice(2, 0, {
        name: `sealing search batches (per message, ${per} sealed)`,
        samples: per,
        cost: perMessage,
      });
    }
    return rows;
  } finally {
    raw.close();
    await Deno.remove(dir, { recursive: true });
  }
}

function fmt(n: number, d = 1) {
  return n.toFixed(d);
}

/** The cost table (markdown). */
export function costTable(rows: CostRow[]): string {
  const lines = [
    "| operation | KV calls | entries read | read units | entries written | write units | bytes written | bytes stored |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const { name, cost: c } of rows) {
    lines.push(
      `| ${name} | ${fmt(c.calls)} | ${fmt(c.entriesRead)} | ${fmt(c.readUnits)} | ${
        fmt(c.entriesWritten)
      } | ${fmt(c.writeUnits)} | ${fmt(c.bytesWritten, 0)} | ${fmt(c.bytesStored, 0)} |`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main) console.log(costTable(await measureCosts()));
