/**
 * OAuth connections at the cap and past it: `GET /v1/me/connections` and the teardown of a
 * key rotation, through the whole app on an in-memory store, timed and metered (entries
 * read, as kv_cost.ts counts them). "Past the cap" is 5,000 connections written straight
 * into KV, as a store kept them before the cap existed: every figure must stay that of a
 * bounded page or run, never grow with the account's connections.
 *
 * Run alone: `deno run -A tests/bench/connections.ts`.
 */
import { MAX_CONNECTIONS_PER_ACCOUNT, TEARDOWN_RUN_ENTRIES } from "../../domain/accounts/mod.ts";
import { ManualClock } from "../../domain/clock.ts";
import { runSweeps } from "../../domain/upkeep/mod.ts";
import { agentHeaders, boardOn, idemKey, register, type TestBoard } from "../helpers.ts";
import { seedGrants } from "../oauth_connection_helpers.ts";
import { meteredKv } from "./kv_cost.ts";

const RUNS = 9;
/** Connections stored past the cap (the old path). */
const PAST_CAP = 5000;

interface Row {
  name: string;
  ms: number;
  entriesRead: number;
}

/** A board, and the entries its KV handle has read since the last call (0 when unmetered). */
type Measured = { board: TestBoard; entriesRead: () => number };

/** A fresh in-memory board; metered (entries read) or not (for the times: the meter is slow). */
async function freshBoard(metered: boolean): Promise<Measured> {
  let meter: ReturnType<typeof meteredKv> | undefined;
  const board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: metered ? (raw) => (meter = meteredKv(raw)).kv : undefined,
  });
  return { board, entriesRead: () => meter?.take().entriesRead ?? 0 };
}

/** Runs `op` (timed) and returns its milliseconds and entries read. */
async function measure(m: Measured, op: () => Promise<void>): Promise<[number, number]> {
  m.entriesRead();
  const t0 = performance.now();
  await op();
  return [performance.now() - t0, m.entriesRead()];
}

/** The operations, in order, on a board whose account holds `count` connections. */
async function scenario(count: number, metered: boolean): Promise<Array<[number, number]>> {
  const m = await freshBoard(metered);
  try {
    const a = await register(m.board);
    await seedGrants(m.board.kv, a.id, count, m.board.clock.now());
    const out: Array<[number, number]> = [];
    for (const path of ["/v1/me/connections", "/v1/me/connections?limit=10"]) {
      const runs: Array<[number, number]> = [];
      for (let i = 0; i < RUNS; i++) {
        runs.push(
          await measure(m, async () => {
            const res = await m.board.request(path, { headers: agentHeaders(a.key) });
            await res.json();
            if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
          }),
        );
      }
      runs.sort((x, y) => x[0] - y[0]);
      out.push(runs[RUNS >> 1]);
    }
    out.push(
      await measure(m, async () => {
        const res = await m.board.request("/v1/me/rotate-key", {
          method: "POST",
          headers: agentHeaders(a.key, { "idempotency-key": idemKey() }),
        });
        await res.json();
        if (res.status !== 200) throw new Error(`rotate-key: ${res.status}`);
      }),
    );
    out.push(await measure(m, async () => void await runSweeps(m.board.deps)));
    return out;
  } finally {
    await m.board[Symbol.asyncDispose]();
  }
}

const OPERATIONS = [
  "list, default page (100)",
  "list, limit=10",
  "rotate key (ends them all; one teardown run)",
  "tidy-up sweep finishing that teardown",
];

/** The benchmark's section of docs/benchmarks.md. */
export async function run(): Promise<string> {
  const rows: Row[] = [];
  for (const count of [MAX_CONNECTIONS_PER_ACCOUNT, PAST_CAP]) {
    const timed = await scenario(count, false);
    const metered = await scenario(count, true);
    const label = `${count.toLocaleString("en-US")} connections`;
    OPERATIONS.forEach((name, i) =>
      rows.push({ name: `${name}, ${label}`, ms: timed[i][0], entriesRead: metered[i][1] })
    );
  }
  return [
    `OAuth connections (in-memory KV, through the app; listings: median of ${RUNS}): at most ` +
    `${MAX_CONNECTIONS_PER_ACCOUNT} per account; ${PAST_CAP.toLocaleString("en-US")} stored ` +
    `directly as before the cap. A teardown run reads at most ${TEARDOWN_RUN_ENTRIES} index ` +
    "entries; entries read are counted on a metered copy of the same run.",
    "",
    "| operation | ms | KV entries read |",
    "|---|---|---|",
    ...rows.map((r) => `| ${r.name} | ${r.ms.toFixed(1)} | ${r.entriesRead} |`),
  ].join("\n");
}

if (import.meta.main) console.log(await run());
