/**
 * Load shedding by memory (routes/load_shedding.ts), through the whole app with a heap gauge
 * the test sets: new requests are refused with 503 UNAVAILABLE only while the heap is at or
 * past its share and enough requests are under way, and every request, answered or failed,
 * leaves the count. The real process under a flood: tests/reliability/memory_flood_test.ts.
 */
import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { SHED_HEAP_SHARE, SHED_MIN_IN_FLIGHT } from "../routes/load_shedding.ts";
import { ManualClock } from "../domain/clock.ts";
import { agentHeaders, assertError, boardOn, getsThrough, register, testBoard } from "./helpers.ts";

const LIMIT = 100_000_000;

/** A board whose app watches a heap at `share` of its limit (changeable through `set`). */
async function shedBoard(share: number) {
  const board = await testBoard();
  let used = share * LIMIT;
  const app = createApp(board.deps, { used: () => used, limit: LIMIT });
  const agent = await register(board);
  /** `n` feed reads sent at once (every one is under way before any is answered). */
  const reads = (n: number, path = "/v1/posts?limit=5", headers = agentHeaders(agent.key)) =>
    Promise.all(
      Array.from({ length: n }, () =>
        app.request(path, { headers }, {
          remoteAddr: { hostname: "127.0.0.1" },
        })),
    );
  return { board, reads, set: (s: number) => (used = s * LIMIT) };
}

const statuses = async (responses: Response[]) => {
  const counts: Record<number, number> = {};
  for (const r of responses) {
    counts[r.status] = (counts[r.status] ?? 0) + 1;
    if (r.status !== 503) await r.body?.cancel();
  }
  return counts;
};

Deno.test("with the heap at its share, requests past the ones under way are refused 503", async () => {
  const { board, reads } = await shedBoard(SHED_HEAP_SHARE);
  await using _ = board;
  const answers = await reads(SHED_MIN_IN_FLIGHT + 8);
  const refused = answers.filter((r) => r.status === 503);
  assert.deepEqual(await statuses(answers), { 200: SHED_MIN_IN_FLIGHT, 503: 8 });
  for (const r of refused) {
    assert.equal(r.headers.get("retry-after"), "1");
    await assertError(r, 503, "UNAVAILABLE");
  }
});

Deno.test("below the heap's share, or with few requests under way, nothing is shed", async () => {
  const { board, reads, set } = await shedBoard(SHED_HEAP_SHARE - 0.01);
  await using _ = board;
  assert.deepEqual(await statuses(await reads(SHED_MIN_IN_FLIGHT * 3)), {
    200: SHED_MIN_IN_FLIGHT * 3,
  });
  set(1);
  assert.deepEqual(await statuses(await reads(SHED_MIN_IN_FLIGHT)), { 200: SHED_MIN_IN_FLIGHT });
});

Deno.test("every request leaves the count of those under way, refusals and failures too", async () => {
  const { board, reads } = await shedBoard(1);
  await using _ = board;
  // Unknown paths (404) and bad queries (400) end in the app's error handler.
  assert.deepEqual(await statuses(await reads(SHED_MIN_IN_FLIGHT + 4, "/v1/nowhere")), {
    404: SHED_MIN_IN_FLIGHT,
    503: 4,
  });
  assert.deepEqual(await statuses(await reads(SHED_MIN_IN_FLIGHT + 4, "/v1/posts?limit=0")), {
    400: SHED_MIN_IN_FLIGHT,
    503: 4,
  });
  // Had any of them stayed counted, these would be refused.
  assert.deepEqual(await statuses(await reads(SHED_MIN_IN_FLIGHT)), { 200: SHED_MIN_IN_FLIGHT });
});

Deno.test("a browser shed from a page is shown a page saying the site is busy", async () => {
  const { board, reads } = await shedBoard(SHED_HEAP_SHARE);
  await using _ = board;
  const browser = {
    accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36",
  };
  const answers = await reads(SHED_MIN_IN_FLIGHT + 2, "/articles", browser);
  const refused = answers.filter((r) => r.status === 503);
  assert.equal(refused.length, 2);
  for (const r of answers.filter((r) => r.status !== 503)) await r.body?.cancel();
  for (const r of refused) {
    assert.equal(r.headers.get("retry-after"), "1");
    assert.match(r.headers.get("content-type") ?? "", /^text\/html/);
    assert.match(await r.text(), /The site is busy/);
  }
});

Deno.test("a request waiting on its first store read counts as under way: with the test clock on too", async () => {
  // The test clock's stored shift is the first read of a request on a staging board; a store
  // that stops answering holds it there. Those requests count, so the ones past them are shed
  // (and a stop answers them before it exits) instead of waiting behind them uncounted.
  let hanging = false;
  const comeBack: (() => void)[] = [];
  await using board = await boardOn(":memory:", new ManualClock(), { testClock: true }, {
    wrapKv: getsThrough((get) =>
      hanging ? new Promise((r) => comeBack.push(() => r(get()))) : get()
    ),
  });
  const app = createApp(board.deps, { used: () => SHED_HEAP_SHARE * LIMIT, limit: LIMIT });
  const send = () => app.request("/robots.txt", {}, { remoteAddr: { hostname: "127.0.0.1" } });
  hanging = true;
  const held = Array.from({ length: SHED_MIN_IN_FLIGHT }, send);
  let limit: ReturnType<typeof setTimeout> | undefined;
  const next = await Promise.race([
    send(),
    new Promise<never>((_, reject) => {
      limit = setTimeout(() => reject(new Error("not shed: it waited behind the others")), 3_000);
    }),
  ]).finally(() => clearTimeout(limit));
  await assertError(next, 503, "UNAVAILABLE");
  hanging = false;
  for (const back of comeBack) back();
  assert.deepEqual(await statuses(await Promise.all(held)), { 200: SHED_MIN_IN_FLIGHT });
});
