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
  assertStatus,
  boardOn,
  cachedRead,
  jsonInit,
  post,
  register,
  registerMany,
  type TestBoard,
} from "./helpers.ts";

const sameKey = (a: Deno.KvKey, b: Deno.KvKey) =>
  a.length === b.length && a.every((part, i) => part === b[i]);

/**
 * A `wrapKv` option whose `getMany` calls that read the read-version key are logged; each
 * `hold()` holds one coming version read after it has read (its snapshot is taken) until
 * its `release()`, and its `reached` resolves when that read has read.
 */
function versionReadGate() {
  const reads: Deno.KvKey[][] = [];
  const holds: { reached: PromiseWithResolvers<void>; gate: PromiseWithResolvers<void> }[] = [];
  let failNext = false;
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
                const hold = holds.shift();
                if (hold) {
                  hold.reached.resolve();
                  await hold.gate.promise;
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
      const hold = { reached: Promise.withResolvers<void>(), gate: Promise.withResolvers<void>() };
      holds.push(hold);
      return { reached: hold.reached.promise, release: () => hold.gate.resolve() };
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
    // The first read after another instance's write is served, not kept: its first reads
    // went out before `b` knew the new versions (domain/read_cache.ts `cachedReadEarly`).
    await read(b, reader.key).then((res) => res.body?.cancel());
    await cachedRead(b, "/v1/posts", reader.key);

    /**
     * Two requests by `key` whose reads have read and are held (as many as may be in flight),
     * so the next request must wait for a read of its own.
     */
    const heldReads = async (key: string) => {
      const holds = [gate.hold(), gate.hold()];
      const early = [read(b, key)];
      await holds[0].reached;
      early.push(read(b, key));
      await holds[1].reached;
      return {
        async release() {
          await settle();
          for (const h of holds) h.release();
          for (const res of await Promise.all(early)) {
            assert.equal(res.status, 200, "their reads started before the write");
            await res.body?.cancel();
          }
        },
      };
    };

    await t.step("another instance's post, committed while reads are held", async () => {
      const held = await heldReads(reader.key);
      const second = await post(a, author.key, { title: "second" });
      const late = read(b, reader.key);
      await held.release();
      const lateRes = await late;
      assert.equal(lateRes.status, 200);
      const ids = (await lateRes.json()).items.map((i: { id: string }) => i.id);
      assert.deepEqual(ids, [second.id, first.id]);
    });

    await t.step("another instance's revocation, committed while reads are held", async () => {
      await cachedRead(b, "/v1/posts", reader.key);
      const held = await heldReads(reader.key);
      await assertStatus(await a.request("/v1/me/revoke", jsonInit("POST", {}, reader.key)), 200);
      const late = read(b, reader.key);
      await held.release();
      await assertStatus(await late, 401);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("shared credential reads: requests waiting together share getMany calls of at most 10 keys", async () => {
  const gate = versionReadGate();
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv: gate.wrap });
  const agents = await registerMany(board, 12);
  for (const agent of agents) await cachedRead(board, "/v1/posts", agent.key);

  // Idle, a request reads at once, alone.
  let before = gate.reads.length;
  await assertStatus(await read(board, agents[0].key), 200);
  assert.equal(gate.reads.length, before + 1);
  assert.equal(gate.reads.at(-1)!.length, 2);

  // Two reads held (the second request starts its own: two may be in flight); ten requests
  // arrive meanwhile and share the next round: ten accounts and the version key make two
  // getMany calls (ten keys at most each).
  before = gate.reads.length;
  const holds = [gate.hold(), gate.hold()];
  const first = read(board, agents[0].key);
  await holds[0].reached;
  const second = read(board, agents[1].key, "10.8.0.1");
  await holds[1].reached;
  const rest = agents.slice(2).map((agent, i) => read(board, agent.key, `10.8.0.${i + 2}`));
  await settle();
  assert.equal(gate.reads.length, before + 2, "the others wait while two reads are in flight");
  for (const h of holds) h.release();
  for (const res of await Promise.all([first, second, ...rest])) {
    await assertStatus(res, 200);
  }
  const round = gate.reads.slice(before);
  assert.deepEqual(round.map((r) => r.length).sort((x, y) => x - y), [2, 2, 2, 10]);
  assert.ok(round.every((r) => r.some((k) => sameKey(k, READ_VERSION_KEY))));
});

Deno.test("shared credential reads: a failed read answers 500 to its waiters; the next request reads afresh", async () => {
  const gate = versionReadGate();
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv: gate.wrap });
  const agent = await register(board);
  await cachedRead(board, "/v1/posts", agent.key);
  gate.fail();
  await assertStatus(await read(board, agent.key), 500);
  await assertStatus(await read(board, agent.key), 200);
});
