/**
 * The service's handle on a store file (kv/open.ts) commits in turns through the lock file
 * beside the store (kv/commit_turns.ts): while someone else holds that lock, its commit waits,
 * and lands once the lock is let go; closing the handle closes the lock file.
 * tests/cross_process/commit_turns_test.ts shows the same between processes.
 */
import assert from "node:assert/strict";
import { openKv } from "../kv/open.ts";
import { commitLockPath } from "../kv/commit_turns.ts";
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

Deno.test("a transaction on hot keys commits at once, without waiting for a turn", async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-commit-turns-" });
  const path = `${dir}/board.kv`;
  const kv = await openKv(path);
  const other = await Deno.open(commitLockPath(path), { read: true, write: true });
  let polling = true;
  try {
    await other.lock(true);
    const hot = transact(kv, async (tx) => {
      const e = await tx.get<number>(["hot"]);
      tx.set(["hot"], (e.value ?? 0) + 1);
    }, { lock: "hot-keys" });
    const waited = (async () => {
      while (polling) {
        if (await someoneWaitsFor(commitLockPath(path))) return "waited for a turn";
        await new Promise((r) => setTimeout(r, 5));
      }
      return "stopped";
    })();
    const first = await Promise.race([hot.then(() => "committed"), waited]);
    polling = false;
    await other.unlock();
    await Promise.all([hot, waited]);
    assert.equal(first, "committed");
    assert.equal((await kv.get(["hot"])).value, 1);
  } finally {
    polling = false;
    other.close();
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
