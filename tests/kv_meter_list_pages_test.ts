/**
 * A `list` costs one round trip per page it reads: the meter counts each page (`batchSize`
 * entries, by default `limit` or 100), as a networked store sends each page apart.
 */
import assert from "node:assert/strict";
import { versionedKv } from "../kv/versioned_kv.ts";
import { metered } from "./helpers.ts";

Deno.test("the KV meter counts every page a list reads, not only the first", async (t) => {
  using kv = versionedKv(await Deno.openKv(":memory:"));
  const atomic = kv.atomic();
  for (let i = 0; i < 250; i++) atomic.set(["items", i], i);
  await atomic.commit();
  const depthOf = async (options?: Deno.KvListOptions) => {
    const { res, depth } = await metered(async () => {
      let n = 0;
      for await (const _ of kv.list({ prefix: ["items"] }, options)) n++;
      return n;
    });
    return { n: res, depth };
  };
  await t.step("250 entries at the default 100 a page: 3 pages", async () => {
    assert.deepEqual(await depthOf(), { n: 250, depth: 3 });
  });
  await t.step("batchSize 50: 5 full pages and the empty one that ends the list", async () => {
    assert.deepEqual(await depthOf({ batchSize: 50 }), { n: 250, depth: 6 });
  });
  await t.step("limit 30: one page", async () => {
    assert.deepEqual(await depthOf({ limit: 30 }), { n: 30, depth: 1 });
  });
  await t.step("limit 120, batchSize 100: two pages", async () => {
    assert.deepEqual(await depthOf({ limit: 120, batchSize: 100 }), { n: 120, depth: 2 });
  });
});
