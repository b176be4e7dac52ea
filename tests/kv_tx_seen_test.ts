/**
 * `Tx.seen` (kv/tx.ts): an entry read before a transaction answers its read at no cost, and
 * its commit depends on the entry as it was read then — a change made meanwhile fails the
 * first attempt, and the retry reads afresh.
 */
import assert from "node:assert/strict";
import { transact } from "../kv/tx.ts";

Deno.test("Tx.seen: the entry answers the read, a change since fails the commit, the retry reads afresh", async () => {
  using kv = await Deno.openKv(":memory:");
  const key = ["seen", "counter"];
  await kv.set(key, 1);
  const before = await kv.get<number>(key);
  // Another writer changes the entry after it was read.
  await kv.set(key, 10);
  let first: Deno.KvEntryMaybe<unknown> | null = before;
  const readsSeen: number[] = [];
  let kvReads = 0;
  const counting = new Proxy(kv, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop === "getMany") {
        return (...args: Parameters<Deno.Kv["getMany"]>) => {
          kvReads++;
          return target.getMany(...args);
        };
      }
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  const { value } = await transact(counting, async (tx) => {
    if (first) tx.seen(first);
    first = null;
    const n = (await tx.get<number>(key)).value!;
    readsSeen.push(n);
    tx.set(key, n + 1);
    return n + 1;
  });
  // First attempt: the stale entry, no read; its commit failed; the retry read 10.
  assert.deepEqual(readsSeen, [1, 10]);
  assert.equal(kvReads, 1);
  assert.equal(value, 11);
  assert.equal((await kv.get<number>(key)).value, 11);
});
