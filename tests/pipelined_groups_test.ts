/**
 * Group commits in a pipeline (kv/tx.ts; issue 12): while one group's commit is in flight,
 * the next group runs on what that commit writes, and commits after it, checked against
 * it; if the commit in flight fails, the group prepared beside it runs again. And the
 * second handle a file store gets for reads (kv/open.ts, kv/versioned_kv.ts).
 */
import assert from "node:assert/strict";
import { openKv } from "../kv/open.ts";
import { VOTES_GUARD } from "../kv/guards.ts";
import { transact } from "../kv/tx.ts";
import { versionedKv } from "../kv/versioned_kv.ts";
import { wrapCommits } from "./commit_wrapper.ts";
import { ManualClock } from "../domain/clock.ts";
import { boardOn, idemKey, post } from "./helpers.ts";
import { agents, namedPost, voteRequest } from "./vote_helpers.ts";

/** A versioned handle whose commits wait until the test releases them, one by one (disposable). */
async function gatedKv() {
  const raw = await Deno.openKv(":memory:");
  const held: (() => void)[] = [];
  const gated = wrapCommits(raw, async (commit) => {
    await new Promise<void>((release) => held.push(release));
    return await commit();
  });
  /** Waits until `n` commits have been made and are held. */
  const heldCommits = async (n: number) => {
    await until(() => held.length >= n);
    assert.equal(held.length, n, `${n} commits held`);
  };
  return {
    kv: versionedKv(gated),
    raw,
    held,
    heldCommits,
    [Symbol.dispose]: () => raw.close(),
  };
}

/** Waits (a second at most) until `done()` holds; the caller asserts what it needs. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 2));
}

const COUNTER = ["counters", "pipeline-demo"];

/** A group-committed increment that logs the value it read. */
function bump(kv: Deno.Kv, seen: number[]) {
  return transact(kv, async (tx) => {
    const n = (await tx.get<number>(COUNTER)).value ?? 0;
    seen.push(n);
    tx.set(COUNTER, n + 1);
    return n + 1;
  }, { lock: "pipeline-demo", group: true });
}

Deno.test("group pipeline: the next group runs on what the commit in flight writes", async () => {
  using gate = await gatedKv();
  const { kv, raw, held, heldCommits } = gate;
  const seen: number[] = [];
  const first = bump(kv, seen);
  await heldCommits(1);
  const more = [bump(kv, seen), bump(kv, seen)];
  // Both ran while the first commit is still held, on the value it writes.
  await until(() => seen.length >= 3);
  assert.deepEqual(seen, [0, 1, 2]);
  assert.equal(held.length, 1, "the second group waits for the first commit to land");
  held[0]();
  await heldCommits(2);
  held[1]();
  assert.deepEqual([(await first).value, ...(await Promise.all(more)).map((r) => r.value)], [
    1,
    2,
    3,
  ]);
  assert.equal((await raw.get(COUNTER)).value, 3);
});

Deno.test("group pipeline: when the commit in flight fails, the group beside it runs again", async () => {
  using gate = await gatedKv();
  const { kv, raw, held, heldCommits } = gate;
  const seen: number[] = [];
  const first = bump(kv, seen);
  await heldCommits(1);
  const second = bump(kv, seen);
  await until(() => seen.length >= 2);
  assert.deepEqual(seen, [0, 1]);
  await raw.set(COUNTER, 100); // another writer: the first commit's check now fails
  held[0]();
  // The failed group runs again alone on fresh reads; the other is prepared beside it.
  await heldCommits(2);
  held[1]();
  await heldCommits(3);
  held[2]();
  assert.equal((await first).value, 101);
  assert.equal((await second).value, 102);
  assert.deepEqual(seen, [0, 1, 100, 101]);
  assert.equal((await raw.get(COUNTER)).value, 102);
});

Deno.test("group pipeline: a key the commit in flight sums is read only once it has landed", async () => {
  using gate = await gatedKv();
  const { kv, held, heldCommits } = gate;
  const total = ["counters", "pipeline-sum"];
  const opts = { lock: "pipeline-demo", group: true };
  const summing = transact(kv, (tx) => {
    tx.sum(total, 5n);
    return Promise.resolve();
  }, opts);
  await heldCommits(1);
  const seen: bigint[] = [];
  const reading = transact(kv, async (tx) => {
    const n = (await tx.get<Deno.KvU64>(total)).value?.value ?? 0n;
    seen.push(n);
    tx.set(["copy"], n);
    return n;
  }, opts);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(seen, [], "its value is unknown until the sum lands");
  held[0]();
  await summing;
  await heldCommits(2);
  held[1]();
  assert.equal((await reading).value, 5n);
  assert.deepEqual(seen, [5n], "read once, after the sum landed");
});

/**
 * A group-committed write of a key the votes guard covers (kv/guards.ts), remembering what
 * it commits: `ran` logs the member as it runs.
 */
function standing(kv: Deno.Kv, id: string, ran: string[]) {
  const key = ["voting_standings", id];
  return transact(kv, async (tx) => {
    const [, entry] = await tx.getMany<unknown>([VOTES_GUARD, key]);
    ran.push(id);
    tx.set(key, ((entry.value as number | null) ?? 0) + 1);
  }, { lock: "anchor-demo", group: true, remember: true, prefetch: [VOTES_GUARD, key] });
}

Deno.test("group pipeline: after a group that read its guard from the store, the next waits for it to land", async () => {
  // A guard read from the store is not believed (nothing this process committed vouches
  // for it), and a group prepared beside that commit could believe it no more: nor could
  // any group after it while the pipeline stays full, so every member would read what the
  // guard covers from the store again. The next group waits for the landing instead and
  // reads the guard from memory; from there on groups are prepared beside each other.
  using gate = await gatedKv();
  const { kv, raw, held, heldCommits } = gate;
  const ran: string[] = [];
  const a = standing(kv, "a", ran);
  await heldCommits(1);
  const b = standing(kv, "b", ran);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(ran, ["a"], "b is not prepared beside a commit whose guard was not believed");
  held[0]();
  await a;
  await heldCommits(2);
  assert.deepEqual(ran, ["a", "b"]);
  const c = standing(kv, "c", ran);
  await until(() => ran.length >= 3);
  assert.deepEqual(
    ran,
    ["a", "b", "c"],
    "c is prepared beside b's commit, whose guard was believed",
  );
  assert.equal(held.length, 2);
  held[1]();
  await b;
  await heldCommits(3);
  held[2]();
  await c;
  const got = await raw.getMany<number[]>(["a", "b", "c"].map((id) => ["voting_standings", id]));
  assert.deepEqual(got.map((e) => e.value), [1, 1, 1]);
});

Deno.test("group pipeline: concurrent increments stay exact through many groups", async () => {
  const dir = await Deno.makeTempDir();
  const kv = await openKv(`${dir}/pipeline.kv`);
  try {
    const seen: number[] = [];
    const values = (await Promise.all(Array.from({ length: 300 }, () => bump(kv, seen))))
      .map((r) => r.value);
    assert.deepEqual(
      [...values].sort((a, b) => a - b),
      Array.from({ length: 300 }, (_, i) => i + 1),
    );
    assert.equal((await kv.get(COUNTER)).value, 300);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("board writes: posts and votes from one network never fail each other's commits", async () => {
  let failed = 0;
  await using board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: (raw) =>
      wrapCommits(raw, async (commit) => {
        const res = await commit();
        if (!res.ok) failed++;
        return res;
      }),
  });
  const [author, voter] = await agents(board, 2);
  const targets: string[] = [];
  for (let i = 0; i < 10; i++) targets.push(await namedPost(board, author, `target ${i}`));
  failed = 0;
  // Both charge the voter's network write window: in one pipeline they follow each other.
  const posts = Array.from(
    { length: 10 },
    (_, i) => post(board, voter.key, { title: `post ${i}`, body: "body" }, idemKey(), voter.net),
  );
  const votes = targets.map((t) => voteRequest(board, voter, t, 1));
  await Promise.all(posts);
  for (const res of await Promise.all(votes)) assert.equal(res.status, 200, await res.text());
  assert.equal(failed, 0, "no commit failed");
});

Deno.test("a file store reads through a second handle and writes through the first", async (t) => {
  const dir = await Deno.makeTempDir();
  const opened: Deno.Kv[] = [];
  const calls: string[] = [];
  const open = async (path?: string) => {
    const real = await Deno.openKv(path);
    const n = opened.length;
    const spy = new Proxy(real, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target);
        if (typeof v !== "function") return v;
        return (...args: unknown[]) => {
          calls.push(`${n}:${String(prop)}`);
          return v.apply(target, args);
        };
      },
    });
    opened.push(spy);
    return spy;
  };
  const kv = await openKv(`${dir}/two.kv`, open);
  try {
    await t.step("two handles on the file; reads go to the second", async () => {
      assert.equal(opened.length, 2);
      calls.length = 0;
      await kv.set(["k"], 1);
      await kv.get(["k"]);
      await kv.getMany([["k"]]);
      for await (const _ of kv.list({ prefix: ["k"] })) { /* drain */ }
      assert.deepEqual(calls, ["0:atomic", "1:get", "1:getMany", "1:list"]);
    });
    await t.step("a read made after a commit returned sees it", async () => {
      for (let i = 0; i < 300; i++) {
        const res = await kv.atomic().set(["n"], i).commit();
        const got = await kv.get<number>(["n"]);
        assert.equal(got.value, i);
        assert.equal(got.versionstamp, res.ok ? res.versionstamp : "failed");
      }
    });
  } finally {
    kv.close();
    calls.length = 0;
  }
  await t.step("close closes both", async () => {
    await assert.rejects(() => opened[0].atomic().set(["x"], 1).commit());
    await assert.rejects(() => opened[1].get(["x"]));
  });
  await t.step("so does disposal", async () => {
    opened.length = 0;
    {
      using _kv = await openKv(`${dir}/two.kv`, open);
    }
    await assert.rejects(() => opened[0].atomic().set(["x"], 1).commit());
    await assert.rejects(() => opened[1].get(["x"]));
  });
  await Deno.remove(dir, { recursive: true });
});
