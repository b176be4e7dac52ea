/**
 * The API key format: `pb_live_`, the agent's id in 22 base64url characters, 43 of secret.
 * The id lets the account be read without the key-hash index; the stored hash decides.
 * Keys of the older format (no id) keep working through the index.
 */
import assert from "node:assert/strict";
import {
  agentIdOfKey,
  base64url,
  fromBase64url,
  generateApiKey,
  hashApiKey,
} from "../domain/accounts/mod.ts";
import { keys } from "../kv/keys.ts";
import { KvMeter, setMeterSource } from "../kv/meter.ts";
import { agentHeaders, assertError, getJson, register, testBoard } from "./helpers.ts";

Deno.test("a key names its agent's id, and only the secret's hash lets it in", async () => {
  const id = crypto.randomUUID();
  const key = generateApiKey(id);
  assert.match(key, /^pb_live_[A-Za-z0-9_-]{65}$/);
  assert.equal(agentIdOfKey(key), id);
  assert.equal(agentIdOfKey("pb_live_" + "A".repeat(43)), null);
  assert.equal(agentIdOfKey("not a key"), null);

  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  assert.equal(agentIdOfKey(a.key), a.id);
  // A key naming b's id with a's secret, or a made-up secret, is no credential.
  const forged = "pb_live_" + b.key.slice(8, 30) + a.key.slice(30);
  await assertError(
    board.request("/v1/me", { headers: agentHeaders(forged) }),
    401,
    "UNAUTHORIZED",
  );
  // The first request with a key reads the account in one round trip, no index read first.
  const meter = new KvMeter({ lockstep: true, trace: true });
  setMeterSource(() => meter);
  try {
    await board.request("/v1/rules", { headers: agentHeaders(b.key) });
  } finally {
    setMeterSource(() => undefined);
  }
  assert.ok(!meter.rounds.flat().some((call) => call.includes("agent_id_by_key_hash")));
});

Deno.test("base64url text decodes only in the one spelling base64url writes", async () => {
  for (const n of [0, 1, 2, 3, 16, 32]) {
    const bytes = crypto.getRandomValues(new Uint8Array(n));
    assert.deepEqual(fromBase64url(base64url(bytes)), bytes);
  }
  assert.deepEqual(fromBase64url("-_8"), Uint8Array.of(0xfb, 0xff));
  // The same bits with the unused low bits of the last character set, padding, the standard
  // alphabet, white space and a length no bytes have: no bytes.
  for (const text of ["-_9", "-_8=", "+/8", "-_ 8", "-_8\n", "AAAAA"]) {
    assert.equal(fromBase64url(text), null, text);
  }
  // An API key whose id is spelled another way names no account, and lets nobody in.
  await using board = await testBoard();
  const a = await register(board);
  // The id's last character carries two bits of the uuid and four unused ones (A, Q, g or w);
  // the next letter sets one of the unused bits.
  const last = a.key[29];
  assert.ok("AQgw".includes(last));
  const respelled = a.key.slice(0, 29) + String.fromCharCode(last.charCodeAt(0) + 1) +
    a.key.slice(30);
  assert.equal(agentIdOfKey(respelled), null);
  await assertError(
    board.request("/v1/me", { headers: agentHeaders(respelled) }),
    401,
    "UNAUTHORIZED",
  );
});

Deno.test("a key of the older format, without the id, still authenticates", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const legacy = "pb_live_" + "L".repeat(43);
  const hash = await hashApiKey(legacy);
  const record = (await board.kv.get(keys.agents(a.id))).value!;
  await board.kv.atomic()
    .set(keys.agents(a.id), { ...record, key_hash: hash })
    .set(keys.agentIdByKeyHash(hash), a.id)
    .commit();
  const me = await getJson(board, "/v1/me", legacy);
  assert.equal(me.status, 200);
  assert.equal(me.body.name, a.name);
  await assertError(board.request("/v1/me", { headers: agentHeaders(a.key) }), 401, "UNAUTHORIZED");
});
