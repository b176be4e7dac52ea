/**
 * Messages not sealed yet (the tail) are searched from their term filters
 * (domain/search/filters.ts): a search reads a few bytes per message there, never the texts;
 * a message a filter lets through is shown only when its exact term list holds every query
 * token; messages made to share hashes with a word cannot make a page read without end; and
 * a store from before filters is searched the same, then given filters from its next start.
 */
import assert from "node:assert/strict";
import { createThread, removeMessage } from "../domain/writes/mod.ts";
import { searchRecords } from "../domain/reads/mod.ts";
import {
  markTermFilters,
  sealSearchBatches,
  storedTerms,
  termFilterOf,
} from "../domain/search/mod.ts";
import { editRules } from "../domain/rules/mod.ts";
import { keys } from "../kv/keys.ts";
import { ManualClock } from "../domain/clock.ts";
import { meteredKv } from "./bench/kv_cost.ts";
import { boardOn, idemKey, register, type TestBoard, testBoard } from "./helpers.ts";
import { pageThrough } from "./search_helpers.ts";

/** Publishes `body` as a thread of `a` (no request limits in the way). */
async function publish(
  deps: TestBoard["deps"],
  a: { id: string; name: string },
  body: string,
  title = "t",
): Promise<number> {
  const r = await createThread(
    deps,
    "named",
    { agentId: a.id, name: a.name, network: "10.79.0.1" },
    `filters-${crypto.randomUUID()}`,
    { title, topic: "general", body },
  );
  return r.seq;
}

/** Two distinct words with the same term filter (found by trying words until two collide). */
function collidingWords(): [string, string] {
  const seen = new Map<string, string>();
  for (let i = 0;; i++) {
    const word = `w${i.toString(36)}`;
    const filter = termFilterOf([word], null).join(",");
    const other = seen.get(filter);
    if (other !== undefined) return [other, word];
    seen.set(filter, word);
  }
}

Deno.test("search: the tail is read from its term filters, not from the texts", async () => {
  let meter: ReturnType<typeof meteredKv> | undefined;
  await using board = await boardOn(":memory:", new ManualClock(), {
    limitScale: 100,
    searchBatch: 1_000, // nothing is sealed: every message is in the tail
  }, { wrapKv: (raw) => (meter = meteredKv(raw)).kv });
  const a = await register(board);
  // 40 messages of about 8 KB: distinct words, so each holds 256 indexed terms.
  const words = (i: number) => Array.from({ length: 900 }, (_, j) => `m${i}x${j}`).join(" ");
  const seqs: number[] = [];
  for (let i = 0; i < 40; i++) seqs.push(await publish(board.deps, a, words(i)));
  meter!.take();
  const page = await searchRecords(board.deps, { q: "m7x3", limit: 10 });
  const cost = meter!.take();
  assert.deepEqual(page.items.map((m) => m.seq), [seqs[7]]);
  // Listing 40 body entries of about 11 KB each would take 40 × 3 read units at least.
  assert.ok(cost.readUnits <= 12, `read units of one search: ${cost.readUnits}`);
});

Deno.test("search: a message its filter lets through is shown only if it holds the words", async () => {
  await using board = await testBoard({ limitScale: 100, searchBatch: 1_000 });
  const a = await register(board);
  const [word, twin] = collidingWords();
  const holder = await publish(board.deps, a, `${word} shared`);
  const stats = { work: 0 };
  const page = await searchRecords(board.deps, { q: twin, limit: 10 }, { stats });
  assert.deepEqual(page.items, [], `"${twin}" shares its filter with "${word}" only`);
  assert.deepEqual(page.next_before, null);
  const found = await searchRecords(board.deps, { q: `${word} shared`, limit: 10 });
  assert.deepEqual(found.items.map((m) => m.seq), [holder]);
});

Deno.test("search: messages made to share a word's hashes only shorten pages, exactly", async () => {
  await using board = await testBoard({ limitScale: 100, searchBatch: 1_000 });
  const a = await register(board);
  const [word, twin] = collidingWords();
  await publish(board.deps, a, "filler"); // paging "after" starts after seq 1
  const real: number[] = [];
  for (let i = 0; i < 3; i++) real.push(await publish(board.deps, a, `${twin} real ${i}`));
  // Newer: 60 messages holding only the word that shares the filter of `twin`.
  for (let i = 0; i < 60; i++) await publish(board.deps, a, `${word} decoy ${i}`);
  for (const direction of ["before", "after"] as const) {
    const { got, work } = await pageThrough(board, { q: twin }, direction);
    const want = direction === "after" ? real : [...real].reverse();
    assert.deepEqual(got, want, direction);
    // Each page stops within its budget (450 for one token) plus the first read it always pays.
    assert.ok(Math.max(...work) <= 450 + 100, `work per page: ${work.join(", ")}`);
    assert.ok(work.length > 1, "the decoys cost pages, not unbounded reads");
  }
});

Deno.test("search: removing or editing a message keeps its filter in step", async () => {
  await using board = await testBoard({ limitScale: 100 }, { rulesPost: true });
  const a = await register(board);
  const seq = await publish(board.deps, a, "pangolin");
  assert.notEqual((await board.kv.get(keys.searchFilters(seq))).versionstamp, null);
  const id = (await board.kv.get(keys.messages("named", seq))).value!.id;
  await removeMessage(board.deps, "named", id, { agentId: a.id });
  assert.equal((await board.kv.get(keys.searchFilters(seq))).versionstamp, null);

  await editRules(board.deps, { moderator: true }, { text: "Be kind to the okapi." }, idemKey());
  const rules = (await board.kv.get(keys.rulesCurrent())).value!;
  const body = (await board.kv.get(keys.bodies("named", rules.thread_seq))).value!;
  const terms = storedTerms(body)!;
  assert.ok(terms.terms.includes("okapi"));
  assert.deepEqual(
    (await board.kv.get(keys.searchFilters(rules.thread_seq))).value,
    termFilterOf(terms.terms, terms.topic),
  );
  const page = await searchRecords(board.deps, { q: "okapi", limit: 10 });
  assert.deepEqual(page.items.map((m) => m.seq), [rules.thread_seq]);
});

Deno.test("search: a store from before filters is searched the same, and gets them at start", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    const clock = new ManualClock();
    const config = { limitScale: 100, searchBatch: 8 };
    const old: number[] = [];
    {
      await using board = await boardOn(path, clock, config);
      const a = await register(board);
      for (let i = 0; i < 11; i++) old.push(await publish(board.deps, a, `heron ${i}`));
      await sealSearchBatches(board.deps);
      // As a version before filters left it: no filter, a marker that names none.
      const op = board.kv.atomic().set(keys.searchSealed(), { upTo: 8, batch: 8 });
      for (const seq of old) op.delete(keys.searchFilters(seq));
      assert.ok((await op.commit()).ok);
      // Searched from the body entries of the tail until a start of this version.
      const page = await searchRecords(board.deps, { q: "heron", limit: 20 });
      assert.deepEqual(page.items.map((m) => m.seq), [...old].reverse());
    }
    await using board = await boardOn(path, clock, config); // starts: `markTermFilters`
    const marker = (await board.kv.get(keys.searchSealed())).value!;
    assert.deepEqual(marker, { upTo: 8, batch: 8, filters: old[old.length - 1] + 1 });
    const a = await register(board, "late-agent");
    const late = [await publish(board.deps, a, "heron late")];
    const page = await searchRecords(board.deps, { q: "heron", limit: 20 });
    assert.deepEqual(page.items.map((m) => m.seq), [...old, ...late].reverse());
    const after = await searchRecords(board.deps, { q: "heron", after: 5, limit: 20 });
    assert.deepEqual(
      after.items.map((m) => m.seq),
      [...old, ...late].filter((s) => s > 5).reverse(),
    );
    // Sealing keeps the marker's word on filters.
    for (let i = 0; i < 8; i++) late.push(await publish(board.deps, a, `heron more ${i}`));
    await sealSearchBatches(board.deps);
    assert.equal((await board.kv.get(keys.searchSealed())).value!.filters, marker.filters);
    const all = await pageThrough(board, { q: "heron" }, "before");
    assert.deepEqual(all.got, [...old, ...late].reverse());
  } finally {
    await Deno.remove(path).catch(() => {});
  }
});

Deno.test("search: a store from before filters that has no marker yet gets one at start", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const a = await register(board);
  const seq = await publish(board.deps, a, "ibis");
  // As a version before filters left it: no marker (nothing sealed yet), no filter.
  await board.kv.atomic().delete(keys.searchSealed()).delete(keys.searchFilters(seq)).commit();
  await markTermFilters(board.deps);
  assert.equal((await board.kv.get(keys.searchSealed())).value!.filters, seq + 1);
  const page = await searchRecords(board.deps, { q: "ibis", limit: 10 });
  assert.deepEqual(page.items.map((m) => m.seq), [seq]);
  // A fresh store is left without a marker: every message it will hold has a filter.
  await using fresh = await testBoard();
  assert.equal((await fresh.kv.get(keys.searchSealed())).versionstamp, null);
});

Deno.test("search: a store this version wrote keeps reading filters after a restart", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  try {
    const clock = new ManualClock();
    const config = { limitScale: 100, searchBatch: 512 };
    const seqs: number[] = [];
    {
      await using board = await boardOn(path, clock, config);
      const a = await register(board);
      for (let i = 0; i < 3; i++) seqs.push(await publish(board.deps, a, `egret ${i}`));
    }
    // Restarted before its first batch is sealed: still no marker, every message has a filter.
    await using board = await boardOn(path, clock, config);
    assert.equal((await board.kv.get(keys.searchSealed())).versionstamp, null);
    const page = await searchRecords(board.deps, { q: "egret", limit: 10 });
    assert.deepEqual(page.items.map((m) => m.seq), [...seqs].reverse());
  } finally {
    await Deno.remove(path).catch(() => {});
  }
});
