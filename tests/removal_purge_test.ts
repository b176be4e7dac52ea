/**
 * A removal answers after one commit; what would cost it another read round is finished by
 * the purge that commit marks: the removed message's seq in the sealed posting blocks, and a
 * removed reply's root's reply count. Search never finds the removed message meanwhile, its
 * Idempotency-Key record stays (a lookup goes by the id index), and a purge cut short is
 * finished by `resumePurges` (run at start and by the tidy-up cron).
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { blockSeqs } from "../domain/search/mod.ts";
import { resumePurges } from "../domain/writes/mod.ts";
import { keys } from "../kv/keys.ts";
import { listTyped } from "../kv/read_many.ts";
import { commitGate, wrapCommits } from "./commit_wrapper.ts";
import {
  agentHeaders,
  boardOn,
  freshNetwork,
  getJson,
  idemKey,
  jsonInit,
  post,
  register,
  reply,
  type TestBoard,
} from "./helpers.ts";

/** The posting blocks of `term` that hold `seq`. */
async function blockHolders(board: TestBoard, term: string, seq: number) {
  const out: Deno.KvKey[] = [];
  for await (const e of listTyped(board.kv, { prefix: keys.searchPostings.range(term) })) {
    if (blockSeqs(e.value).includes(seq)) out.push(e.key);
  }
  return out;
}

async function searchSeqs(board: TestBoard, key: string, q: string): Promise<number[]> {
  const { status, body } = await getJson(board, `/v1/search?q=${q}`, key);
  assert.equal(status, 200, JSON.stringify(body));
  return body.items.map((i: { seq: number }) => i.seq);
}

/**
 * A thread of eight messages (a sealed search batch, `searchBatch` 8 in tests) holding
 * "quokka"; the reply to remove was written with `replyKey`, its Idempotency-Key.
 */
type Agent = Awaited<ReturnType<typeof register>>;

async function sealedThread(board: TestBoard, a: Agent, b: Agent, replyKey: string) {
  const root = await post(board, a.key, { title: "Marsupials", body: "quokka" });
  const res = await board.request(
    `/v1/posts/${root.id}/replies`,
    jsonInit("POST", { body: "quokka to remove" }, b.key, { "idempotency-key": replyKey }),
    freshNetwork(),
  );
  assert.equal(res.status, 201);
  const doomed: { id: string; seq: number } = await res.json();
  for (let i = 0; i < 6; i++) await reply(board, i % 2 ? a.key : b.key, root.id, `quokka ${i}`);
  assert.deepEqual((await blockHolders(board, "quokka", doomed.seq)).length, 1, "sealed");
  return { root, doomed };
}

/**
 * A `wrapKv` whose `failCommit(n)`-th commit from now fails, as when the instance stops after
 * answering (a purge cut short).
 */
function stoppingCommits() {
  let failIn = 0;
  return {
    wrap: (raw: Deno.Kv) =>
      wrapCommits(raw, (commit) => {
        if (failIn > 0 && failIn-- === 1) return Promise.reject(new Error("the instance stopped"));
        return commit();
      }),
    failCommit: (n: number) => void (failIn = n),
  };
}

async function lookup(board: TestBoard, key: string, idem: string) {
  const res = await board.request("/v1/me/publications/lookup", {
    headers: agentHeaders(key, { "idempotency-key": idem }),
  });
  assert.equal(res.status, 200);
  return { body: await res.json() };
}

Deno.test("a removed reply is answered before its purge; search never finds it meanwhile", async () => {
  const gate = commitGate();
  await using board = await boardOn(":memory:", new ManualClock(), { backgroundPurges: true }, {
    wrapKv: gate.wrap,
  });
  const a = await register(board);
  const b = await register(board);
  const replyKey = idemKey();
  const { root, doomed } = await sealedThread(board, a, b, replyKey);
  assert.equal((await lookup(board, b.key, replyKey)).body.found, true);

  gate.holdCommit(2); // the removal's commit lands; the purge's waits
  const res = await board.request(`/v1/posts/${doomed.id}`, {
    method: "DELETE",
    headers: agentHeaders(b.key),
  });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).deleted, true);
  await gate.reached;

  // Between the answer and the purge: the blocks still hold the seq, search skips it.
  assert.equal((await blockHolders(board, "quokka", doomed.seq)).length, 1, "purge pending");
  const mark = (await board.kv.get(keys.purges("named", doomed.seq))).value;
  assert.equal(mark?.reply_of, root.seq);
  assert.ok(mark?.postings?.terms.includes("quokka"));
  assert.ok(!(await searchSeqs(board, a.key, "quokka")).includes(doomed.seq));
  assert.deepEqual(await searchSeqs(board, a.key, "remove"), []);
  const read = await getJson(board, `/v1/posts/${doomed.id}`, a.key);
  assert.equal(read.status, 404);
  assert.equal((await lookup(board, b.key, replyKey)).body.found, false, "lookup: gone");

  gate.release();
  for (let i = 0; i < 200 && (await board.kv.get(keys.purges("named", doomed.seq))).value; i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.equal((await board.kv.get(keys.purges("named", doomed.seq))).value, null);
  assert.deepEqual(await blockHolders(board, "quokka", doomed.seq), [], "the purge retracted it");
  const rootRec = (await board.kv.get(keys.messages("named", root.seq))).value;
  assert.equal(rootRec?.reply_count, 6, "the root's reply count lowered");
});

Deno.test("a removal's purge cut short is finished by resumePurges", async () => {
  const stop = stoppingCommits();
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv: stop.wrap });
  const a = await register(board);
  const b = await register(board);
  const replyKey = idemKey();
  const { root, doomed } = await sealedThread(board, a, b, replyKey);

  // The removal's commit lands; the purge's fails (as if the instance stopped after answering).
  stop.failCommit(2);
  const errors: unknown[] = [];
  const log = console.error;
  console.error = (...args: unknown[]) => void errors.push(args);
  const res = await board.request(`/v1/posts/${doomed.id}`, {
    method: "DELETE",
    headers: agentHeaders(b.key),
  }).finally(() => console.error = log);
  assert.equal(res.status, 200);
  await res.body?.cancel();
  assert.equal(errors.length, 1, "the purge failed after the answer");
  assert.ok((await board.kv.get(keys.purges("named", doomed.seq))).value, "its mark is kept");
  assert.equal((await blockHolders(board, "quokka", doomed.seq)).length, 1);
  assert.ok(!(await searchSeqs(board, a.key, "quokka")).includes(doomed.seq));

  assert.equal(await resumePurges(board.deps), 1);
  assert.equal((await board.kv.get(keys.purges("named", doomed.seq))).value, null);
  assert.deepEqual(await blockHolders(board, "quokka", doomed.seq), []);
  const rootRec = (await board.kv.get(keys.messages("named", root.seq))).value;
  assert.equal(rootRec?.reply_count, 6);
  assert.equal(await resumePurges(board.deps), 0, "nothing left, and nothing done twice");
  assert.equal((await board.kv.get(keys.messages("named", root.seq))).value?.reply_count, 6);
});

Deno.test("a replay of a removed message's write still answers its receipt", async () => {
  await using board = await boardOn(":memory:", new ManualClock());
  const a = await register(board);
  const key = idemKey();
  const send = () =>
    board.request(
      "/v1/posts",
      jsonInit("POST", { title: "Once", body: "only" }, a.key, { "idempotency-key": key }),
      freshNetwork(),
    );
  const first = await (await send()).json();
  const del = await board.request(`/v1/posts/${first.id}`, {
    method: "DELETE",
    headers: agentHeaders(a.key),
  });
  assert.equal(del.status, 200);
  await del.body?.cancel();
  const again = await send();
  const body = await again.json();
  assert.equal(body.id, first.id);
  assert.equal(body.replayed, true);
  assert.equal((await lookup(board, a.key, key)).body.found, false);
});

Deno.test("while a thread's removal purges: a poll of only its replies carries no newest_cursor, and deleting one says it went with its thread", async () => {
  const stop = stoppingCommits();
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv: stop.wrap });
  const [a, b] = [await register(board), await register(board)];
  const root = await post(board, a.key, { title: "A thread to remove", body: "root" });
  const replies = [];
  for (let i = 0; i < 3; i++) replies.push(await reply(board, b.key, root.id, `reply ${i}`));
  // The removal's commit lands; the purge's first fails: the replies stay, hidden, until it
  // is finished.
  stop.failCommit(2);
  const log = console.error;
  console.error = () => {};
  const res = await board.request(`/v1/posts/${root.id}`, {
    method: "DELETE",
    headers: agentHeaders(a.key),
  }).finally(() => console.error = log);
  assert.equal(res.status, 200, await res.text());
  assert.ok((await board.kv.get(keys.purges("named", root.seq))).value, "the purge is pending");

  // The replies are still listed, hidden with their thread: nothing is returned.
  for (const path of [`/v1/activity?after=${root.seq}`, `/v1/activity?after=${root.seq}&limit=1`]) {
    const page = await getJson(board, path, a.key);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.deepEqual(page.body.items, [], path);
    assert.equal(page.body.newest_cursor, null, `${path}: the checkpoint stays`);
  }
  // Paging still goes on past them.
  const first = await getJson(board, `/v1/activity?after=${root.seq}&limit=1`, a.key);
  assert.equal(first.body.next_after, replies[0].seq);
  // Deleting one of them meanwhile says it went with its thread, as it will once purged.
  const again = await board.request(`/v1/posts/${replies[2].id}`, {
    method: "DELETE",
    headers: agentHeaders(b.key),
  });
  assert.equal(again.status, 404);
  const { details } = (await again.json()).error;
  assert.deepEqual([details.deleted, details.kind, details.with_thread], [true, "reply", true]);
  // A vote on one of them meanwhile is 404 too, and spends nothing.
  const vote = await board.request(
    "/votes",
    jsonInit("POST", { board: "named", post_id: replies[0].id, value: 1 }, a.key),
  );
  assert.equal(vote.status, 404, await vote.clone().text());
  assert.equal((await vote.json()).error.code, "NOT_FOUND");
  const me = await getJson(board, "/v1/me", a.key);
  assert.equal(me.body.voting.used, 0);
  assert.equal(await resumePurges(board.deps), 1);
});
