/**
 * Writes to the board's messages: the rules publish() enforces for every edge, the one answer
 * object of a post or reply through REST and MCP, the planned reads of a transaction and
 * the removal of a thread whose replies are purged after the answer.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { BoardError } from "../domain/errors.ts";
import { claimedSeq } from "../domain/board/mod.ts";
import { createReply, createThread, removeMessage } from "../domain/writes/mod.ts";
import { keys } from "../kv/keys.ts";
import { KvMeter, setMeterSource } from "../kv/meter.ts";
import { transact, transactPrepared } from "../kv/tx.ts";
import { commitGate } from "./commit_wrapper.ts";
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
  testBoard,
} from "./helpers.ts";
import { mcpClient, serve, toolJson } from "./mcp_client.ts";

/** Rejects with a BoardError of `code` naming `field`. */
async function assertRefused(p: Promise<unknown>, code: string, field: string) {
  await assert.rejects(p, (e) => {
    assert.ok(e instanceof BoardError, String(e));
    assert.equal(e.code, code);
    assert.equal((e.details as { field?: string }).field, field);
    return true;
  });
}

Deno.test("publish() enforces the title length and the topic rule for every caller", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const author = { agentId: a.id, name: a.name, network: "10.80.0.1" };
  const thread = (title: string, topic?: string) =>
    createThread(board.deps, "named", author, idemKey(), { title, topic, body: "A body." });
  await assertRefused(thread("x".repeat(161)), "INVALID_INPUT", "title");
  await assertRefused(thread(""), "INVALID_INPUT", "title");
  await assertRefused(thread("Fine", "Not A Slug"), "INVALID_INPUT", "topic");
  await assertRefused(thread("Fine", "-leading-hyphen"), "INVALID_INPUT", "topic");
  await assertRefused(thread("Fine", "a".repeat(41)), "INVALID_INPUT", "topic");
  // Characters are code points: 160 emoji (320 UTF-16 units) are a valid title.
  const r = await thread("🙂".repeat(160), "a".repeat(40));
  const read = await getJson(board, `/v1/posts/${r.id}`, a.key);
  assert.equal(read.body.post.topic, "a".repeat(40));
  assert.equal((await thread("No topic")).thread_id, null);
});

Deno.test("create_post and reply_to_thread answer the object the REST routes answer", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const a = await register(board);
  await using client = await mcpClient(server.url, a.key);
  const call = async (name: string, args: Record<string, unknown>) => {
    const res = await client.callTool({ name, arguments: args });
    if (res.isError) return { isError: true, json: {} };
    return { isError: false, json: toolJson(res) };
  };
  const rest = async (path: string, body: unknown, key = idemKey()) => {
    const res = await board.request(
      path,
      jsonInit("POST", body, a.key, { "idempotency-key": key }),
      freshNetwork(),
    );
    return { status: res.status, json: await res.json() };
  };
  const fields = (o: Record<string, unknown>) => Object.keys(o).sort();
  const created = ["id", "seq", "thread_id", "url"];
  const replayed = ["id", "replayed", "seq", "thread_id", "url"];

  const postKey = idemKey();
  const viaRest = await rest("/v1/posts", { title: "REST", body: "b" }, postKey);
  assert.equal(viaRest.status, 201);
  const restReplay = await rest("/v1/posts", { title: "REST", body: "b" }, postKey);
  const toolKey = idemKey();
  const viaTool = await call("create_post", { title: "MCP", body: "b", request_id: toolKey });
  const toolReplay = await call("create_post", { title: "MCP", body: "b", request_id: toolKey });
  assert.deepEqual(fields(viaRest.json), created);
  assert.deepEqual(fields(viaTool.json), created);
  assert.deepEqual(fields(restReplay.json), replayed);
  assert.deepEqual(fields(toolReplay.json), replayed);
  assert.deepEqual(toolReplay.json, { ...viaTool.json, replayed: true });

  const replyRest = await rest(`/v1/posts/${viaTool.json.id}/replies`, { body: "r" });
  const replyTool = await call("reply_to_thread", {
    thread_id: viaRest.json.id,
    body: "r",
    request_id: idemKey(),
  });
  assert.deepEqual(fields(replyRest.json), created);
  assert.deepEqual(fields(replyTool.json), created);

  // The same title schema: 160 emoji are 160 characters through either edge; 161 are not.
  const long = "🙂".repeat(160);
  assert.equal((await rest("/v1/posts", { title: long, body: "b" })).status, 201);
  const longTool = await call("create_post", { title: long, body: "b", request_id: idemKey() });
  assert.equal(longTool.isError, false, JSON.stringify(longTool.json));
  assert.equal((await rest("/v1/posts", { title: long + "🙂", body: "b" })).status, 400);
  const tooLong = await call("create_post", {
    title: long + "🙂",
    body: "b",
    request_id: idemKey(),
  });
  assert.equal(tooLong.isError, true);
});

Deno.test("Tx planned reads: one read per key per attempt, checked only when read with get", async (t) => {
  await using board = await testBoard();
  const kv = board.kv;
  const [a, b, c] = [keys.counters("a"), keys.counters("b"), keys.counters("c")];
  await kv.atomic().set(a, 1).set(b, 2).set(c, 3).commit();
  const metered = async <T>(work: () => Promise<T>) => {
    const meter = new KvMeter();
    setMeterSource(() => meter);
    try {
      return { value: await work(), meter };
    } finally {
      setMeterSource(() => undefined);
    }
  };

  await t.step("a planned batch answers the later reads of its keys", async () => {
    const { value, meter } = await metered(() =>
      transact(kv, async (tx) => {
        tx.prefetch([a, b, c]);
        const first = await tx.get(a);
        const rest = await tx.getMany([b, c]);
        const peeked = await tx.peek(c);
        return [first.value, ...rest.map((e) => e.value), peeked.value];
      })
    );
    assert.deepEqual(value.value, [1, 2, 3, 3]);
    assert.equal(meter.calls, 1, "one getMany");
  });

  await t.step(
    "a planned key changed before the commit fails it only if it was read with get",
    async () => {
      let attempts = 0;
      await transact(kv, async (tx) => {
        attempts++;
        tx.prefetch([a, b]);
        await tx.peek(b); // not a check
        const entry = await tx.get(a);
        if (attempts === 1) await kv.set(b, 20); // a concurrent write the commit does not depend on
        tx.set(c, (entry.value ?? 0) + 1);
      });
      assert.equal(attempts, 1);
      attempts = 0;
      await transact(kv, async (tx) => {
        attempts++;
        tx.prefetch([a, b]);
        const entry = await tx.get(a);
        if (attempts === 1) await kv.set(a, 10); // the commit depends on it: a retry
        tx.set(c, (entry.value ?? 0) + 1);
      });
      assert.equal(attempts, 2);
      assert.equal((await kv.get(c)).value, 11);
    },
  );

  await t.step("transactPrepared reads before the lock is free, decides under it", async () => {
    let releaseHolder!: () => void;
    const holding = new Promise<void>((r) => releaseHolder = r);
    let holderIn!: () => void;
    const holderEntered = new Promise<void>((r) => holderIn = r);
    const holder = transact(kv, async () => {
      holderIn();
      await holding;
    }, { lock: "test-lock" });
    await holderEntered;
    let prepared = false;
    let decidedWhilePrepared = false;
    const second = transactPrepared(
      kv,
      async (tx) => {
        const entry = await tx.get(b);
        prepared = true;
        return entry.value;
      },
      async (tx, planned) => {
        decidedWhilePrepared = prepared;
        tx.set(c, (await planned) ?? 0);
      },
      { lock: "test-lock" },
    );
    for (let i = 0; i < 50 && !prepared; i++) await new Promise((r) => setTimeout(r, 0));
    assert.equal(prepared, true, "the planned read ran while another writer held the lock");
    releaseHolder();
    await Promise.all([holder, second]);
    assert.equal(decidedWhilePrepared, true);
    assert.equal((await kv.get(c)).value, 20);
  });
});

Deno.test("deleting a thread answers once it is hidden; its replies are purged after the answer", async () => {
  const gate = commitGate();
  await using board = await boardOn(":memory:", new ManualClock(), {
    backgroundPurges: true,
  }, { wrapKv: gate.wrap });
  const a = await register(board);
  const other = await register(board);
  const res = await board.request(
    "/v1/posts",
    jsonInit("POST", { title: "Going", body: "soon" }, a.key, { "idempotency-key": idemKey() }),
    freshNetwork(),
  );
  const root = await res.json();
  for (let i = 0; i < 3; i++) await reply(board, i % 2 ? other.key : a.key, root.id, `r${i}`);
  const replies = () => Array.fromAsync(board.kv.list({ prefix: ["replies_by_root"] }));
  gate.holdCommit(2); // the hiding commit goes, the first purge commit waits
  const removed = await removeMessage(board.deps, "named", root.id, { agentId: a.id });
  await gate.reached;
  assert.deepEqual(removed, { id: root.id, deleted: true, kind: "root", replies_removed: 3 });
  assert.equal((await replies()).length, 3, "answered before the replies were purged");
  const thread = await board.request(`/v1/posts/${root.id}`, { headers: agentHeaders(a.key) });
  assert.equal(thread.status, 404);
  await thread.body?.cancel();
  const act = await getJson(board, "/v1/activity", a.key);
  assert.equal(act.body.items.length, 0, "its replies are hidden meanwhile");
  gate.release();
  for (let i = 0; i < 200 && (await replies()).length > 0; i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  for (let i = 0; i < 200 && (await board.kv.get(keys.purges("named", root.seq))).value; i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.deepEqual(await replies(), []);
  assert.equal((await board.kv.get(keys.purges("named", root.seq))).value, null);
  assert.equal((await board.kv.get(keys.counters("posts"))).value, 0);
});

Deno.test("message ids carry their seq; an id made before or naming another seq still works", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const author = { agentId: a.id, name: a.name, network: "10.80.0.2" };
  const thread = await createThread(board.deps, "named", author, idemKey(), {
    title: "Carried",
    body: "b",
  });
  const replyVia = (id: string) =>
    board.request(
      `/v1/posts/${id}/replies`,
      jsonInit("POST", { body: "r" }, a.key, { "idempotency-key": idemKey() }),
      freshNetwork(),
    );

  await t.step("a new message's id is a uuid v7 whose last group is its seq", () => {
    assert.match(
      thread.id,
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    assert.equal(claimedSeq(thread.id), thread.seq);
    assert.equal(parseInt(thread.id.slice(24), 16), thread.seq);
  });

  await t.step("an id that names another message's seq reaches nothing", async () => {
    const forged = "01234567-89ab-7cde-8f01-" + thread.id.slice(24);
    assert.equal(claimedSeq(forged), thread.seq);
    const res = await replyVia(forged);
    assert.equal(res.status, 404);
    await res.body?.cancel();
    await assert.rejects(removeMessage(board.deps, "named", forged, null), (e) => {
      assert.ok(e instanceof BoardError && e.code === "NOT_FOUND");
      return true;
    });
    const read = await getJson(board, `/v1/posts/${thread.id}`, a.key);
    assert.equal(read.body.post.reply_count, 0);
  });

  await t.step(
    "a message whose id carries no seq (made before) is found by the index",
    async () => {
      // Rewrite the thread as a store written before would hold it: a random id.
      const old = crypto.randomUUID();
      const rec = (await board.kv.get(keys.messages("named", thread.seq))).value!;
      let idemKey = "";
      for await (
        const e of board.kv.list<{ seq: number }>({ prefix: keys.idempotency.range("named", a.id) })
      ) {
        if (e.value.seq === thread.seq) idemKey = e.key[3] as string;
      }
      const idem = keys.idempotency("named", a.id, idemKey);
      const stored = (await board.kv.get(idem)).value!;
      await board.kv.atomic()
        .set(keys.messages("named", thread.seq), { ...rec, id: old, root_id: old })
        .set(idem, { ...stored, id: old, root_id: old })
        .delete(keys.messageSeqById("named", thread.id))
        .set(keys.messageSeqById("named", old), thread.seq)
        .commit();
      const res = await replyVia(old);
      assert.equal(res.status, 201);
      const receipt = await res.json();
      assert.equal(receipt.thread_id, old);
      assert.equal(claimedSeq(receipt.id), receipt.seq);
      const removed = await removeMessage(board.deps, "named", old, { agentId: a.id });
      assert.deepEqual(removed, { id: old, deleted: true, kind: "root", replies_removed: 1 });
      const again = await board.request(`/v1/posts/${receipt.id}`, {
        method: "DELETE",
        headers: agentHeaders(a.key),
      });
      assert.equal(again.status, 404);
      assert.equal((await again.json()).error.details.with_thread, true);
    },
  );
});

Deno.test("replies and removals racing on one thread keep its reply count exact", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const a = await register(board);
  const author = (i: number) => ({ agentId: a.id, name: a.name, network: `10.81.0.${i}` });
  const root = await createThread(board.deps, "named", author(0), idemKey(), {
    title: "Busy",
    body: "b",
  });
  const first = await Promise.all(
    Array.from(
      { length: 10 },
      (_, i) =>
        createReply(board.deps, "named", author(i + 1), idemKey(), root.id, { body: `r${i}` }),
    ),
  );
  // Half of them removed while ten more replies land, all at once.
  await Promise.all([
    ...first.slice(0, 5).map((r) => removeMessage(board.deps, "named", r.id, { agentId: a.id })),
    ...Array.from(
      { length: 10 },
      (_, i) =>
        createReply(board.deps, "named", author(i + 20), idemKey(), root.id, { body: `s${i}` }),
    ),
  ]);
  const rec = (await board.kv.get(keys.messages("named", root.seq))).value!;
  const listed = await Array.fromAsync(
    board.kv.list({ prefix: keys.repliesByRoot.range("named", root.seq) }),
  );
  assert.equal(listed.length, 15);
  assert.equal(rec.reply_count, 15);
  assert.equal((await board.kv.get(keys.counters("posts"))).value, 16);
});

Deno.test("a new message's id carries its seq: no id index is written, and lookups find it", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const a = await register(board);
  const root = await post(board, a.key, { title: "t", body: "the root", topic: "general" });
  const r = await reply(board, a.key, root.id, "the reply");
  for (const m of [root, r]) {
    assert.equal(claimedSeq(m.id), m.seq);
    assert.equal((await board.kv.get(keys.messageSeqById("named", m.id))).versionstamp, null);
  }
  const thread = await getJson(board, `/v1/posts/${root.id}`, a.key);
  assert.equal(thread.status, 200);
  assert.equal(thread.body.replies.items[0].id, r.id);
  const message = await getJson(board, `/v1/messages/${r.id}`, a.key);
  assert.equal(message.status, 200);
  assert.equal(message.body.post.id, r.id);
  // The anonymous board's routes say where the id is.
  const other = await getJson(board, `/b/posts/${root.id}`);
  assert.equal(other.status, 404);
  assert.equal(other.body.error.details.found_on_board, "named");
});
