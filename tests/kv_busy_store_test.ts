/**
 * A commit refused because another process holds the embedded store's write lock
 * (`database is locked`) was never checked: `transact` sends the same commit again instead
 * of running the whole transaction (its reads) again. What changed meanwhile still fails a
 * check, and then the transaction runs again on fresh reads.
 */
import assert from "node:assert/strict";
import { transact } from "../kv/tx.ts";
import { KvMeter, setMeterSource } from "../kv/meter.ts";
import { wrapCommits } from "./commit_wrapper.ts";

const KEY = ["busy-store-counter"];

/** A store whose next `refuse` commits throw `database is locked`, `meanwhile` run first. */
async function busyStore(meanwhile: (raw: Deno.Kv) => Promise<unknown> = async () => {}) {
  const raw = await Deno.openKv(":memory:");
  const state = { refuse: 0, commits: 0 };
  const kv = wrapCommits(raw, async (commit) => {
    state.commits++;
    if (state.refuse > 0) {
      state.refuse--;
      await meanwhile(raw);
      throw new TypeError("database is locked");
    }
    return await commit();
  });
  return { raw, kv, state };
}

/** Adds one to the counter through `transact`, counting how often its function ran. */
async function increment(kv: Deno.Kv, runs: { n: number }) {
  return await transact(kv, async (tx) => {
    runs.n++;
    const e = await tx.get<number>(KEY);
    tx.set(KEY, (e.value ?? 0) + 1);
    return e.value ?? 0;
  });
}

async function metered<T>(fn: () => Promise<T>): Promise<{ value: T; meter: KvMeter }> {
  const meter = new KvMeter();
  setMeterSource(() => meter);
  try {
    return { value: await fn(), meter };
  } finally {
    setMeterSource(() => undefined);
  }
}

Deno.test("a commit the busy store refused goes again without running the transaction again", async () => {
  const { raw, kv, state } = await busyStore();
  try {
    state.refuse = 2;
    const runs = { n: 0 };
    const { value, meter } = await metered(() => increment(kv, runs));
    assert.equal(value.value, 0);
    assert.equal(runs.n, 1, "the reads and decisions ran once");
    assert.equal(state.commits, 3, "the same commit was sent three times");
    assert.equal((await raw.get(KEY)).value, 1);
    assert.deepEqual(
      { busy: meter.busy, retries: meter.retries, conflicts: meter.conflicts },
      { busy: 2, retries: 2, conflicts: 0 },
    );
  } finally {
    raw.close();
  }
});

Deno.test("a commit sent again after a busy store still fails when what it read changed", async () => {
  // While the store is busy, another process adds 10 to the counter.
  const { raw, kv, state } = await busyStore((store) => store.set(KEY, 10));
  try {
    await raw.set(KEY, 1);
    state.refuse = 1;
    const runs = { n: 0 };
    const { value, meter } = await metered(() => increment(kv, runs));
    assert.equal(runs.n, 2, "the refused check made the transaction run again");
    assert.equal(value.value, 10, "the second run read the other process's write");
    assert.equal((await raw.get(KEY)).value, 11, "nothing was lost");
    assert.deepEqual(
      { busy: meter.busy, retries: meter.retries, conflicts: meter.conflicts },
      { busy: 1, retries: 2, conflicts: 1 },
    );
  } finally {
    raw.close();
  }
});

Deno.test("a transaction on hot keys runs again on fresh reads after a busy store", async () => {
  const { raw, kv, state } = await busyStore();
  try {
    state.refuse = 1;
    const runs = { n: 0 };
    const { meter } = await metered(() =>
      transact(kv, async (tx) => {
        runs.n++;
        const e = await tx.get<number>(KEY);
        tx.set(KEY, (e.value ?? 0) + 1);
      }, { lock: "busy-store-hot" })
    );
    assert.equal(runs.n, 2, "read again: what it read may have changed while the store was busy");
    assert.equal((await raw.get(KEY)).value, 1);
    assert.deepEqual(
      { busy: meter.busy, retries: meter.retries, conflicts: meter.conflicts },
      { busy: 1, retries: 1, conflicts: 0 },
    );
  } finally {
    raw.close();
  }
});
