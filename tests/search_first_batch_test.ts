/**
 * A newest-first search decides its page from the posting blocks listed in its first read
 * batch, beside the sealed marker (domain/reads/search_page.ts, `blocksFirst`): pages past
 * what those blocks reach go on with the scan below, blocks sealed by another instance are
 * covered by the term filters, and a first search that has seen no marker yet still finds
 * a tail longer than its first listing.
 */
import assert from "node:assert/strict";
import { createThread } from "../domain/writes/mod.ts";
import { searchRecords } from "../domain/reads/mod.ts";
import { prefetchBlocks, sealSearchBatches } from "../domain/search/mod.ts";
import { keys } from "../kv/keys.ts";
import { ManualClock } from "../domain/clock.ts";
import { boardOn, register, type TestBoard, testBoard } from "./helpers.ts";
import { pageThrough } from "./search_helpers.ts";

/** Publishes `body` as a thread of `a` (no request limits in the way). */
async function publish(
  deps: TestBoard["deps"],
  a: { id: string; name: string },
  body: string,
): Promise<number> {
  const r = await createThread(
    deps,
    "named",
    { agentId: a.id, name: a.name, network: "10.78.0.1" },
    `first-batch-${crypto.randomUUID()}`,
    { title: "t", topic: "general", body },
  );
  return r.seq;
}

Deno.test("search: pages past the blocks listed first go on with the scan, exactly", async (t) => {
  const batch = 8;
  await using board = await testBoard({ limitScale: 100, searchBatch: batch });
  const a = await register(board);
  // "common" everywhere; "rare" in the oldest messages and a few recent ones: the listing of
  // "common" reaches back `prefetchBlocks(batch)` blocks, the older "rare" ones lie below.
  const reach = prefetchBlocks(batch) * batch;
  const rare: number[] = [];
  for (let i = 0; i < reach + 60; i++) {
    const isRare = i < 25 || i % 97 === 0;
    const seq = await publish(board.deps, a, isRare ? "common rare" : "common plain");
    if (isRare) rare.push(seq);
  }
  const newest = [...rare].reverse();
  for (const direction of ["before", "after"] as const) {
    for (const budget of [40, undefined]) {
      await t.step(`${direction}, budget ${budget ?? "default"}`, async () => {
        const { got } = await pageThrough(board, { q: "rare common" }, direction, budget);
        const want = direction === "after" ? rare.filter((s) => s > 1) : newest;
        assert.deepEqual(got, want);
      });
    }
  }
  await t.step("a full page from the blocks listed first costs one read after them", async () => {
    const stats = { work: 0, trips: 0 };
    const page = await searchRecords(board.deps, { q: "common", limit: 20 }, { stats });
    assert.equal(page.items.length, 20);
    assert.equal(stats.trips, 1);
  });
});

Deno.test("search: a batch sealed by another instance is found from its term filters", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    const clock = new ManualClock();
    const config = { limitScale: 100, searchBatch: 8 };
    await using one = await boardOn(path, clock, config);
    await using two = await boardOn(path, clock, config);
    const a = await register(one);
    const seqs: number[] = [];
    for (let i = 0; i < 12; i++) seqs.push(await publish(one.deps, a, `word${i % 2} shared`));
    // `one` has seen the marker at 8; `two` publishes and seals the next batch.
    assert.deepEqual((await searchRecords(one.deps, { q: "shared", limit: 50 })).items.length, 12);
    for (let i = 12; i < 20; i++) seqs.push(await publish(two.deps, a, `word${i % 2} shared`));
    await sealSearchBatches(two.deps);
    assert.equal((await two.kv.get<{ upTo: number }>(keys.searchSealed())).value?.upTo, 16);
    const page = await searchRecords(one.deps, { q: "shared word1", limit: 50 });
    assert.deepEqual(page.items.map((m) => m.seq), seqs.filter((_, i) => i % 2 === 1).reverse());
  } finally {
    await Deno.remove(path).catch(() => {});
  }
});

Deno.test("search: a first search finds a tail longer than its first listing", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    const clock = new ManualClock();
    // Published without sealing: the whole board is the tail, longer than a batch and some.
    const config = { limitScale: 100, searchBatch: 8 };
    await using writer = await boardOn(path, clock, { ...config, searchBatch: 1_000_000 });
    const a = await register(writer);
    const seqs: number[] = [];
    for (let i = 0; i < 60; i++) seqs.push(await publish(writer.deps, a, `lone${i % 3} pad`));
    await using reader = await boardOn(path, clock, config); // has seen no marker
    const page = await searchRecords(reader.deps, { q: "lone2", limit: 50 });
    assert.deepEqual(page.items.map((m) => m.seq), seqs.filter((_, i) => i % 3 === 2).reverse());
  } finally {
    await Deno.remove(path).catch(() => {});
  }
});

Deno.test("search: an instance lists the unsealed tail for at most two searches at once", async () => {
  // Every `list` of the tail (term filters, or body entries) is counted while it runs; each page it reads waits a moment,
  // so that searches sent together would overlap.
  let running = 0;
  let most = 0;
  const slowBodyLists = (raw: Deno.Kv) =>
    new Proxy(raw, {
      get(target, prop) {
        if (prop !== "list") {
          const v = Reflect.get(target, prop, target);
          return typeof v === "function" ? v.bind(target) : v;
        }
        return (selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
          const inner = target.list(selector, options);
          const key = "prefix" in selector ? selector.prefix : selector.start;
          const tail = [keys.searchFilters.range()[0], keys.bodies.range("named")[0]];
          if (!tail.includes(key?.[0] as string)) return inner;
          return (async function* () {
            most = Math.max(most, ++running);
            try {
              for await (const e of inner) {
                await new Promise((r) => setTimeout(r, 2));
                yield e;
              }
            } finally {
              running--;
            }
          })();
        };
      },
    });
  await using board = await boardOn(":memory:", new ManualClock(), {
    limitScale: 100,
    searchBatch: 1_000, // nothing is sealed: every message is in the tail
  }, { wrapKv: slowBodyLists });
  const a = await register(board);
  const seqs: number[] = [];
  for (let i = 0; i < 6; i++) seqs.push(await publish(board.deps, a, `shared word${i}`));
  const pages = await Promise.all(
    Array.from({ length: 8 }, () => searchRecords(board.deps, { q: "shared", limit: 30 })),
  );
  assert.ok(most >= 1 && most <= 2, `tail listings at once: ${most}`);
  for (const page of pages) {
    assert.deepEqual(page.items.map((m) => m.seq), [...seqs].reverse(), "each search finds all");
  }
});
