/**
 * A search page holding replies whose threads are not on the page reads those threads (for
 * `thread_reply_count`) beside the replies' summaries: the index names each reply's root, in
 * the tail's term filters and in the sealed posting blocks (docs/search.md, "Round trips"), so
 * the page stays within two round trips, authentication included.
 */
import assert from "node:assert/strict";
import { sealSearchBatches } from "../domain/search/mod.ts";
import { keys } from "../kv/keys.ts";
import { getJson, metered, post, register, reply, type TestBoard, testBoard } from "./helpers.ts";

/** Ten threads, then replies holding "zulu" to the first three (one reply each, two on the first). */
async function repliesToOldThreads(board: TestBoard) {
  const a = await register(board);
  const threads = [];
  for (let i = 0; i < 10; i++) {
    threads.push(await post(board, a.key, { title: `Thread ${i}`, body: "filler words" }));
  }
  const replies = [];
  for (const t of [threads[0], threads[1], threads[2], threads[0]]) {
    replies.push(await reply(board, a.key, t.id, "a zulu reply"));
  }
  return { a, threads, replies };
}

/** The thread and its reply count that each item shows. */
function threadsShown(items: { root_id: string; thread_reply_count: number }[]) {
  return items.map((m) => [m.root_id, m.thread_reply_count]);
}

/** What `threadsShown` answers for the replies of `repliesToOldThreads`, newest first. */
function expectedThreads(threads: { id: string }[]) {
  return [[threads[0].id, 2], [threads[2].id, 1], [threads[1].id, 1], [threads[0].id, 2]];
}

/** A search for "zulu" (and `more`) under a lockstep meter: its items and its round trips. */
async function searchZulu(board: TestBoard, key: string, more = "") {
  const path = `/v1/search?q=zulu${more}&limit=10`;
  const { res, depth } = await metered(() => getJson(board, path, key));
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { items: res.body.items, depth };
}

Deno.test("search: replies in the tail read their threads beside their summaries", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const { a, threads, replies } = await repliesToOldThreads(board);
  const { items, depth } = await searchZulu(board, a.key);
  assert.deepEqual(items.map((m: { id: string }) => m.id), replies.map((r) => r.id).reverse());
  assert.deepEqual(threadsShown(items), expectedThreads(threads));
  assert.equal(depth, 2);
});

Deno.test("search: replies in sealed blocks read their threads beside their summaries", async () => {
  await using board = await testBoard({ limitScale: 100, searchBatch: 8 });
  const { a, threads, replies } = await repliesToOldThreads(board);
  // Seal what is complete (seqs 1 to 8: the replies are 11 to 14), then push the replies
  // into sealed batches too.
  const b = await register(board);
  for (let i = 0; i < 4; i++) await post(board, b.key, { body: "more filler" });
  await sealSearchBatches(board.deps);
  const sealed = await board.kv.get<{ upTo: number }>(keys.searchSealed());
  assert.ok(sealed.value!.upTo >= replies[replies.length - 1].seq);
  // A first search of another query: this instance has seen the sealed marker.
  assert.equal((await getJson(board, "/v1/search?q=filler", a.key)).status, 200);
  for (const more of ["", "+reply"]) {
    const { items, depth } = await searchZulu(board, a.key, more);
    assert.deepEqual(items.map((m: { id: string }) => m.id), replies.map((r) => r.id).reverse());
    assert.deepEqual(threadsShown(items), expectedThreads(threads));
    assert.equal(depth, 2, `q=zulu${more}`);
  }
});

Deno.test("search: term filters written before they named threads still answer every count", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const { a, threads, replies } = await repliesToOldThreads(board);
  // Each reply's filter as a version before wrote it: the hashes alone (an even length).
  for (const r of replies) {
    const filter = (await board.kv.get<Uint8Array>(keys.searchFilters(r.seq))).value!;
    assert.equal(filter.length % 2, 1);
    await board.kv.set(keys.searchFilters(r.seq), filter.slice(0, filter.length - 5));
  }
  const { items, depth } = await searchZulu(board, a.key);
  assert.deepEqual(items.map((m: { id: string }) => m.id), replies.map((r) => r.id).reverse());
  assert.deepEqual(threadsShown(items), expectedThreads(threads));
  assert.equal(depth, 3, "the threads are read once the summaries name them");
});
