/**
 * The service's handle on a store file (kv/open.ts) commits in turns through the lock file
 * beside the store (kv/commit_turns.ts): while someone else holds that lock, its commit waits,
 * and lands once the lock is let go; closing the handle closes the lock file.
 * tests/cross_process/commit_turns_test.ts shows the same between processes.
 */
import assert from "node:assert/strict";
import { openKv } from "../kv/open.ts";
import { commitLockPath, TURN_LIMIT_MS } from "../kv/commit_turns.ts";
import { transact } from "../kv/tx.ts";

/** True once someone waits (blocked) for the flock on `path` (Linux: /proc/locks). */
async function someoneWaitsFor(path: string): Promise<boolean> {
  const { ino } = await Deno.stat(path);
  const locks = await Deno.readTextFile("/proc/locks");
  return locks.split("\n").some((l) => l.includes("->") && l.includes(`:${ino} `));
}

Deno.test("a store file's commits wait while another holder has the commit lock", async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-commit-turns-" });
  const path = `${dir}/board.kv`;
  const kv = await openKv(path);
  const other = await Deno.open(commitLockPath(path), { read: true, write: true });
  try {
    await other.lock(true);
    let landed = false;
    const write = kv.set(["turns"], 1).then(() => landed = true);
    while (!await someoneWaitsFor(commitLockPath(path))) {
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(landed, false);
    assert.equal((await kv.get(["turns"])).value, null, "nothing committed while it waited");
    await other.unlock();
    await write;
    assert.equal((await kv.get(["turns"])).value, 1);
  } finally {
    other.close();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("commits waiting together go in one turn, each answered as its own", async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-commit-turns-" });
  const kv = await openKv(`${dir}/board.kv`);
  try {
    await kv.set(["taken"], 0);
    const taken = await kv.get(["taken"]);
    // Ten commits at once, each checking the same entry: one wins, nine are refused.
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => kv.atomic().check(taken).set(["taken"], i + 1).commit()),
    );
    assert.equal(results.filter((r) => r.ok).length, 1);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a handle closed just after its last commit leaves nothing open or in flight", async () => {
  // The test ends in the step that closes the handle: the resource and operation sanitizers
  // fail it if the lock file is still open or its letting go is still under way.
  const dir = Deno.makeTempDirSync({ prefix: "board-commit-turns-" });
  const kv = await openKv(`${dir}/board.kv`);
  try {
    await kv.set(["last"], 1);
  } finally {
    kv.close();
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("commits made in every step of the event loop all land, none left waiting", async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-commit-turns-" });
  const kv = await openKv(`${dir}/board.kv`);
  try {
    // Writers that read, then write, then read again: their writes start in every step of
    // the event loop, among them the one where a turn lets the lock go.
    const chain = async (name: number, n: number) => {
      for (let i = 0; i < n; i++) {
        await kv.get(["chain", name]);
        await kv.set(["chain", name], i);
      }
    };
    await Promise.all(Array.from({ length: 12 }, (_, name) => chain(name, 60)));
    const got = await kv.getMany(Array.from({ length: 10 }, (_, name) => ["chain", name]));
    assert.deepEqual(got.map((e) => e.value), Array(10).fill(59));
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a transaction on hot keys reads and commits in its turn, after what the holder wrote", async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-commit-turns-" });
  const path = `${dir}/board.kv`;
  const kv = await openKv(path);
  // Another process: it holds the commit lock and writes the hot key meanwhile.
  const other = await Deno.open(commitLockPath(path), { read: true, write: true });
  const otherKv = await Deno.openKv(path);
  let runs = 0;
  try {
    await other.lock(true);
    const hot = transact(kv, async (tx) => {
      runs++;
      const e = await tx.get<number>(["hot"]);
      tx.set(["hot"], (e.value ?? 0) + 1);
    }, { lock: "hot-keys" });
    for (let i = 0; i < 400 && !await someoneWaitsFor(commitLockPath(path)); i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(runs, 0, "nothing read before its turn");
    await otherKv.set(["hot"], 5);
    await other.unlock();
    await hot;
    assert.equal(runs, 1, "it ran once: nothing changed between its reads and its commit");
    assert.equal((await kv.get(["hot"])).value, 6);
  } finally {
    other.close();
    otherKv.close();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("transactions on the same hot keys in one turn run one after the other", async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-commit-turns-" });
  const kv = await openKv(`${dir}/board.kv`);
  let runs = 0;
  try {
    const add = () =>
      transact(kv, async (tx) => {
        runs++;
        const e = await tx.get<number>(["hot"]);
        tx.set(["hot"], (e.value ?? 0) + 1);
      }, { lock: "hot-keys" });
    await Promise.all(Array.from({ length: 20 }, add));
    assert.equal((await kv.get(["hot"])).value, 20);
    assert.equal(runs, 20, "none ran again");
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * A transaction on hot keys (it adds one to `["hot"]`) that holds its turn until `open()` is
 * called; `started` resolves once it runs.
 */
function heldInTurn(kv: Deno.Kv) {
  let open = () => {};
  const gate = new Promise<void>((r) => open = r);
  let begin = () => {};
  const started = new Promise<void>((r) => begin = r);
  const done = transact(kv, async (tx) => {
    begin();
    const e = await tx.get<number>(["hot"]);
    await gate;
    tx.set(["hot"], (e.value ?? 0) + 1);
  }, { lock: "hot-keys" });
  return { started, open, done };
}

Deno.test("a commit made while its process's turn runs a transaction goes at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-commit-turns-" });
  const kv = await openKv(`${dir}/board.kv`);
  const hot = heldInTurn(kv);
  try {
    await hot.started;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const landed = await Promise.race([
      kv.set(["plain"], 1).then(() => "landed"),
      new Promise<string>((r) => timer = setTimeout(() => r("waited for the turn to end"), 2000)),
    ]);
    clearTimeout(timer);
    hot.open();
    await hot.done;
    assert.equal(landed, "landed");
    assert.deepEqual((await kv.getMany([["hot"], ["plain"]])).map((e) => e.value), [1, 1]);
  } finally {
    hot.open();
    await hot.done.catch(() => {});
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a transaction stuck in its turn lets the other processes commit after the turn's limit", async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-commit-turns-" });
  const path = `${dir}/board.kv`;
  const kv = await openKv(path);
  // A second handle with turns of its own on the same file stands for another process.
  const other = await openKv(path);
  const stuck = heldInTurn(kv);
  try {
    await stuck.started;
    const t0 = performance.now();
    await other.set(["elsewhere"], 1);
    const waited = performance.now() - t0;
    assert.ok(waited >= TURN_LIMIT_MS * 0.9, `the other commit waited ${waited} ms`);
    assert.ok(waited < TURN_LIMIT_MS * 3, `the other commit waited ${waited} ms`);
    stuck.open();
    await stuck.done;
    assert.deepEqual((await kv.getMany([["hot"], ["elsewhere"]])).map((e) => e.value), [1, 1]);
  } finally {
    stuck.open();
    await stuck.done.catch(() => {});
    other.close();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("work a transaction starts and leaves running takes turns like any other", async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-commit-turns-" });
  const path = `${dir}/board.kv`;
  const kv = await openKv(path);
  const other = await Deno.open(commitLockPath(path), { read: true, write: true });
  let go = () => {};
  const started = new Promise<void>((r) => go = r);
  let later: Promise<unknown> = Promise.resolve();
  try {
    await transact(kv, async (tx) => {
      // A commit started in the turn that runs after the transaction is done.
      later = started.then(() => kv.set(["later"], 1));
      const e = await tx.get<number>(["hot"]);
      tx.set(["hot"], (e.value ?? 0) + 1);
    }, { lock: "hot-keys" });
    await other.lock(true);
    go();
    for (let i = 0; i < 400 && !await someoneWaitsFor(commitLockPath(path)); i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal((await kv.get(["later"])).value, null, "it waits while another holds the lock");
    await other.unlock();
    await later;
    assert.equal((await kv.get(["later"])).value, 1);
  } finally {
    other.close();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
