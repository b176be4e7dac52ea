/**
 * Read plans (docs/read_plans.md): a read's first batch goes out before its
 * caller is known, and the read cache keeps such an answer only when the versions it is kept
 * under cannot be newer than what it read; a thread lists its replies by the root's id, and a
 * root stored before that listing existed is still read in full.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { versionedKv } from "../kv/versioned_kv.ts";
import { ManualClock } from "../domain/clock.ts";
import { cachedReadEarly, readCache } from "../domain/read_cache.ts";
import { boardOn, getJson, keysRead, post, register, reply, testBoard } from "./helpers.ts";

type Reader = { id: string };

/** Two versioned handles on one store file, as two instances have. */
async function twoHandles() {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/board.kv`;
  const a = versionedKv(await Deno.openKv(path));
  const b = versionedKv(await Deno.openKv(path));
  return {
    a,
    b,
    async [Symbol.asyncDispose]() {
      a.close();
      b.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("early reads: kept only under versions known before they went out", async () => {
  await using store = await twoHandles();
  const deps = { kv: store.b, clock: new ManualClock() };
  const key = keys.boardHeads("named");
  let computed = 0;
  const compute = async (viewer: Promise<Reader | null>) => {
    computed++;
    const entry = await deps.kv.get(key);
    await viewer;
    return entry.value?.seq ?? 0;
  };
  const read = () => cachedReadEarly(deps, null, "heads", compute);

  // Another instance's write: the first read sees it but cannot be kept (its read may have
  // gone out before the versions this instance knew), the next one is.
  await store.a.set(key, { seq: 1, purging: [] });
  assert.equal(await read(), "1");
  assert.equal(readCache(deps).size, 0, "not kept: the versions were new to this instance");
  assert.equal(await read(), "1");
  assert.equal(readCache(deps).size, 1, "kept: the versions were known before its reads");
  assert.equal(await read(), "1");
  assert.equal(
    computed,
    3,
    "the third read was a hit (its first reads were started, then dropped)",
  );
  assert.equal(readCache(deps).stats.hits, 1);

  // This instance's own write makes its versions known at once: the next read is kept.
  await store.b.set(key, { seq: 2, purging: [] });
  assert.equal(await read(), "2");
  assert.equal(readCache(deps).size, 1);
  const hits = readCache(deps).stats.hits;
  assert.equal(await read(), "2");
  assert.equal(readCache(deps).stats.hits, hits + 1);
});

Deno.test("early reads: they start before the caller is known; a refusal wins; a probable hit reads nothing", async () => {
  await using store = await twoHandles();
  const deps = { kv: store.b, clock: new ManualClock() };
  const me: Reader = { id: "reader-1" };
  await store.b.set(keys.boardHeads("named"), { seq: 7, purging: [] });
  let started = 0;
  const compute = async (viewer: Promise<Reader | null>) => {
    started++;
    const entry = await deps.kv.get(keys.boardHeads("named"));
    return `${(await viewer)?.id}:${entry.value?.seq}`;
  };

  let release!: (r: Reader) => void;
  const pending = new Promise<Reader>((resolve) => release = resolve);
  const answer = cachedReadEarly(deps, pending, "mine", compute);
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(started, 1, "the computation started while the caller was unknown");
  release(me);
  assert.equal(await answer, JSON.stringify("reader-1:7"));

  // A refused credential: its error is the answer, and the started computation stays quiet.
  const refused = Promise.reject(new Error("refused"));
  await assert.rejects(cachedReadEarly(deps, refused, "other", compute), /refused/);

  // The cache holds the probable caller's answer: nothing is started before the caller is
  // known, and the answer comes from the cache.
  const before = started;
  const hits = readCache(deps).stats.hits;
  assert.equal(
    await cachedReadEarly(deps, Promise.resolve(me), "mine", compute, me.id),
    JSON.stringify("reader-1:7"),
  );
  assert.equal(started, before, "a probable hit starts no reads");
  assert.equal(readCache(deps).stats.hits, hits + 1);
});

Deno.test("thread reads list replies by the root's id; a root stored before that is read in full", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const root = await post(board, a.key, { title: "listed by id" });
  const replies = [];
  for (let i = 0; i < 3; i++) replies.push(await reply(board, a.key, root.id, `reply ${i}`));
  const listed = async () => {
    const seqs: number[] = [];
    for await (const e of board.kv.list({ prefix: keys.repliesByRootId.range("named", root.id) })) {
      seqs.push(e.key[e.key.length - 1] as number);
    }
    return seqs;
  };
  assert.deepEqual(await listed(), replies.map((r) => r.seq));
  const ids = (body: { replies: { items: { id: string }[] } }) =>
    body.replies.items.map((i) => i.id);
  let read = await getJson(board, `/v1/posts/${root.id}?limit=2`, a.key);
  assert.deepEqual(ids(read.body), [replies[2].id, replies[1].id]);

  // As a store written before: the root is not marked and its replies are not listed by id.
  const stored = (await board.kv.get(keys.messages("named", root.seq))).value!;
  const { replies_by_id: _, ...unmarked } = stored;
  const old = board.kv.atomic().set(keys.messages("named", root.seq), unmarked);
  for (const seq of await listed()) old.delete(keys.repliesByRootId("named", root.id, seq));
  assert.ok((await old.commit()).ok);
  read = await getJson(board, `/v1/posts/${root.id}?limit=2`, a.key);
  assert.deepEqual(ids(read.body), [replies[2].id, replies[1].id]);
  assert.equal(read.body.replies.next_before, replies[1].seq);
  read = await getJson(board, `/v1/posts/${root.id}?before=${replies[1].seq}`, a.key);
  assert.deepEqual(ids(read.body), [replies[0].id]);
});

Deno.test("a thread read reads the body entry only of a reply longer than its preview", async () => {
  const { read, wrapKv } = keysRead();
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv });
  const a = await register(board);
  const root = await post(board, a.key, { title: "short and long", body: "The root's body." });
  const long = "A long reply. ".repeat(40).trim();
  const short = await reply(board, a.key, root.id, "A short reply.");
  const longer = await reply(board, a.key, root.id, long);
  read.length = 0;
  const thread = await getJson(board, `/v1/posts/${root.id}`, a.key);
  const bodies = Object.fromEntries(
    thread.body.replies.items.map((i: { id: string; body: string }) => [i.id, i.body]),
  );
  assert.deepEqual(bodies, { [short.id]: "A short reply.", [longer.id]: long });
  assert.equal(thread.body.post.body, "The root's body.");
  const bodySeqs = read.filter((k) => k[0] === "bodies").map((k) => k[2]);
  assert.deepEqual(bodySeqs.sort(), [root.seq, longer.seq].sort());
});
