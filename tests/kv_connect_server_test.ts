/**
 * The KV Connect test server (tests/kv_connect/server.ts) on the wire: what Deno's client does
 * not show (the failed checks of a refused write, the refusals of what it does not implement,
 * the tokens it checks), sent as raw protobuf.
 */
import assert from "node:assert/strict";
import { startKvConnectServer } from "./kv_connect/server.ts";
import { M_SET, M_SET_SUFFIX_VERSIONSTAMPED_KEY, VE_BYTES } from "./kv_connect/datapath.ts";
import { packedInts, readFields, Writer } from "./kv_connect/protobuf.ts";

const key = (s: string) => new TextEncoder().encode(s);

/** An AtomicWrite of `checks` (key, versionstamp) and one mutation of `type` on `k`. */
function atomicWrite(checks: [string, Uint8Array][], type: number, k: string) {
  const w = new Writer();
  for (const [ck, vs] of checks) w.message(1, new Writer().bytes(1, key(ck)).bytes(2, vs));
  const value = new Writer().bytes(1, new Uint8Array([7])).int(2, VE_BYTES);
  return w.message(2, new Writer().bytes(1, key(k)).message(2, value).int(3, type)).finish();
}

Deno.test("KV Connect test server: metadata, failed checks, refusals", async () => {
  await using server = await startKvConnectServer();
  const meta = await fetch(server.url, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}` },
    body: JSON.stringify({ supportedVersions: [1, 2, 3] }),
  });
  const m = await meta.json();
  assert.equal(m.version, 3);
  assert.deepEqual(m.endpoints, [{ url: "/data", consistency: "strong" }]);
  const wrong = await fetch(server.url, { method: "POST", headers: { authorization: "Bearer x" } });
  assert.equal(wrong.status, 401);
  await wrong.body?.cancel();

  const post = async (method: string, body: Uint8Array<ArrayBuffer>, token = m.token) => {
    const res = await fetch(`${server.url}/data/${method}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "x-denokv-version": "3",
        "x-denokv-database-id": m.databaseId,
      },
      body,
    });
    return { status: res.status, body: new Uint8Array(await res.arrayBuffer()) };
  };
  const none = new Uint8Array();
  const first = await post("atomic_write", atomicWrite([["a", none]], M_SET, "a"));
  assert.equal(first.status, 200);
  const stamp = readFields(first.body).find((f) => f.no === 2)!.bytes;
  assert.equal(stamp.length, 10);

  // "b" is absent as checked, "a" is no longer absent: check 1 failed.
  const again = await post("atomic_write", atomicWrite([["b", none], ["a", none]], M_SET, "a"));
  const fields = readFields(again.body);
  assert.equal(fields.find((f) => f.no === 1)!.int, 2n); // AW_CHECK_FAILURE
  assert.deepEqual(fields.filter((f) => f.no === 4).flatMap(packedInts), [1n]);
  const ok = await post("atomic_write", atomicWrite([["a", stamp]], M_SET, "a"));
  assert.equal(readFields(ok.body).find((f) => f.no === 1)!.int, 1n);

  const suffix = await post("atomic_write", atomicWrite([], M_SET_SUFFIX_VERSIONSTAMPED_KEY, "c"));
  assert.equal(suffix.status, 400);
  assert.equal((await post("watch", none)).status, 404);
  assert.equal((await post("snapshot_read", none, "stale")).status, 401);
  assert.equal((await post("snapshot_read", new Uint8Array([0]))).status, 400);
});
