/**
 * Shared credential reads (domain/accounts/agent_reads.ts): requests that arrive while a
 * read of callers' records and the read-cache version is in flight wait for the next read,
 * which starts after they arrived, so a write committed before a request arrived — on any
 * instance — is seen however reads are shared; and concurrent requests share one `getMany`.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { READ_VERSION_KEY } from "../kv/keys.ts";
import {
  agentHeaders,
  boardOn,
  cachedRead,
  jsonInit,
  post,
  register,
  type TestBoard,
} from "./helpers.ts";

const sameKey = (a: Deno.KvKey, b: Deno.KvKey) =>
  a.length === b.length && a.every((part, i) => part === b[i]);

/**
 * A `wrapKv` option whose `getMany` calls that read the read-version key are logged, and
 * the next one after `hold()` is held after it has read (its snapshot is taken) until
 * `release()`; `reached` resolves when it has read.
 */
function versionReadGate() {
  const reads: Deno.KvKey[][] = [];
  let armed = false;
  let failNext = false;
  let gate = Promise.withResolvers<void>();
  let reached = Promise.withResolvers<void>();
  return {
    reads,
    wrap: (raw: Deno.Kv) =>
      new Proxy(raw, {
        get(target, prop) {
          if (prop === "getMany") {
            return async (
              keyList: Deno.KvKey[],
              options?: { consistency?: Deno.KvConsistencyLevel },
            ) => {
              const entries = await target.getMany(keyList, options);
              if (keyList.some((k) => sameKey(k, READ_VERSION_KEY))) {
                reads.push(keyList);
                if (failNext) {
                  failNext = false;
                  throw new Error("the store is unavailable");
                }
                if (armed) {
                  armed = false;
                  reached.resolve();
                  await gate.promise;
                }
              }
              return entries;
            };
          }
          const v = Reflect.get(target, prop, target);
          return typeof v === "function" ? v.bind(target) : v;
        },
      }),
    /** The next version read fails (after it has read). */
    fail() {
      failNext = true;
    },
    hold() {
      armed = true;
      gate = Promise.withResolvers<void>();
      reached = Promise.withResolvers<void>();
      return { reached: reached.promise, release: () => gate.resolve() };
    },
  };
}

/**
 * Lets requests already sent run up to their next KV read (in-process requests do no I/O
 * before the credential read: only microtasks, which a macrotask turn drains).
 */
async function settle() {
  for (let i = 0; i < 3; i++) await new Promise((r) => setTimeout(r, 0));
}

function read(board: TestBoard, key: string, network = "10.7.0.1") {
  return board.request("/v1/posts", { headers: agentHeaders(key) }, network);
}

Deno.test("shared credential reads: a request never joins a read that started before it arrived", async (t) => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/board.kv`;
  const clock = new ManualClock();
  const gate = versionReadGate();
  try {
    await using a = await boardOn(path, clock);
    await using b = await boardOn(path, clock, {}, { wrapKv: gate.wrap });
    const author = await register(a);
    const reader = await register(a);
    const first = await post(a, author.key, { title: "first" });
    await cachedRead(b, "/v1/posts", reader.key);

    await t.step("another instance's post, committed while a read is held", async () => {
      const held = gate.hold();
      const early = read(b, reader.key);
      await held.reached;
      const second = await post(a, author.key, { title: "second" });
      const late = read(b, reader.key);
      await settle();
      held.release();
      const earlyRes = await early;
      assert.equal(earlyRes.status, 200);
      await earlyRes.body?.cancel();
      const lateRes = await late;
      assert.equal(lateRes.status, 200);
      const ids = (await lateRes.json()).items.map((i: { id: string }) => i.id);
      assert.deepEqual(ids, [second.id, first.id]);
    });

    await t.step("another instance's revocation, committed while a read is held", async () => {
      await cachedRead(b, "/v1/posts", reader.key);
      const held = gate.hold();
      const early = read(b, reader.key);
      await held.reached;
      const revoked = await a.request("/v1/me/revoke", jsonInit("POST", {}, reader.key));
      assert.equal(revoked.status, 200);
      await revoked.body?.cancel();
      const late = read(b, reader.key);
      await settle();
      held.release();
      const earlyRes = await early;
      assert.equal(earlyRes.status, 200, "its read started before the revocation");
      await earlyRes.body?.cancel();
      const lateRes = await late;
      assert.equal(lateRes.status, 401);
      await lateRes.body?.cancel();
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("shared credential reads: requests waiting together share getMany calls of at most 10 keys", async () => {
  const gate = versionReadGate();
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv: gate.wrap });
  const agents = [];
  for (let i = 0; i < 12; i++) agents.push(await register(board));
  for (const agent of agents) await cachedRead(board, "/v1/posts", agent.key);

  // Idle, a request reads at once, alone.
  let before = gate.reads.length;
  const alone = await read(board, agents[0].key);
  assert.equal(alone.status, 200);
  await alone.body?.cancel();
  assert.equal(gate.reads.length, before + 1);
  assert.equal(gate.reads.at(-1)!.length, 2);

  // One read held; eleven requests arrive meanwhile and share the next round: eleven
  // accounts and the version key make two getMany calls (ten keys at most each).
  before = gate.reads.length;
  const held = gate.hold();
  const first = read(board, agents[0].key);
  await held.reached;
  const rest = agents.slice(1).map((agent, i) => read(board, agent.key, `10.8.0.${i + 1}`));
  await settle();
  held.release();
  for (const res of await Promise.all([first, ...rest])) {
    assert.equal(res.status, 200);
    await res.body?.cancel();
  }
  const round = gate.reads.slice(before);
  assert.equal(round.length, 3, JSON.stringify(round.map((r) => r.length)));
  assert.deepEqual(round.map((r) => r.length).sort((x, y) => x - y), [2, 3, 10]);
  assert.ok(round.every((r) => r.some((k) => sameKey(k, READ_VERSION_KEY))));
});

Deno.test("shared credential reads: a failed read answers 500 to its waiters; the next request reads afresh", async () => {
  const gate = versionReadGate();
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv: gate.wrap });
  const agent = await register(board);
  await cachedRead(board, "/v1/posts", agent.key);
  gate.fail();
  const failed = await read(board, agent.key);
  assert.equal(failed.status, 500);
  await failed.body?.cancel();
  const next = await read(board, agent.key);
  assert.equal(next.status, 200);
  await next.body?.cancel();
});
