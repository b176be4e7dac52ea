/**
 * Key rotations are limited (each is a write of its network, 10 a UTC day per account),
 * and credential lookups are capped per network, successful ones too: freshly minted,
 * valid keys from one network can never spend the instance's lookup budget.
 */
import assert from "node:assert/strict";
import { ManualClock, nextUtcMidnight } from "../domain/clock.ts";
import {
  agentHeaders,
  assertStatus,
  boardOn,
  freshNetwork,
  idemKey,
  register,
  testBoard,
} from "./helpers.ts";
import type { TestBoard } from "./helpers.ts";
import { assertLimit } from "./limit_helpers.ts";
import { commitGate } from "./commit_wrapper.ts";

function rotate(board: TestBoard, key: string, net: string): Promise<Response> {
  return board.request("/v1/me/rotate-key", {
    method: "POST",
    headers: agentHeaders(key, { "idempotency-key": idemKey() }),
  }, net);
}

/** Rotates and returns the new key, or null with the refusal's status. */
async function rotateOnce(board: TestBoard, key: string, net: string) {
  const res = await rotate(board, key, net);
  const body = await res.json();
  return res.status === 200 ? { key: body.api_key as string } : { status: res.status, body };
}

function me(board: TestBoard, key: string, net: string): Promise<Response> {
  return board.request("/v1/me", { headers: agentHeaders(key) }, net);
}

Deno.test("key rotations: 10 a UTC day per account", async () => {
  await using board = await testBoard();
  let { key } = await register(board);
  for (let i = 0; i < 10; i++) {
    board.clock.advance(61); // one rotation a minute: the network's writes never refuse
    const r = await rotateOnce(board, key, freshNetwork());
    assert.ok("key" in r, `rotation ${i + 1}: ${JSON.stringify(r)}`);
    key = r.key!;
  }
  const now = board.clock.now();
  await assertLimit(board, await rotate(board, key, freshNetwork()), "DAILY_LIMIT", {
    limit_name: "account_key_rotations_per_day",
    limit: 10,
    scope: "account",
    window: "utc_day",
    retryAfter: nextUtcMidnight(now) - now,
  });
  // The published description of the operation names this limit.
  const op = (await (await board.request("/openapi.json")).json()).paths["/v1/me/rotate-key"].post;
  assert.ok(op["x-limits"].includes("key rotations"), JSON.stringify(op["x-limits"]));
  // The refused rotation changed nothing: the key still works, and rotates the next day.
  await assertStatus(await me(board, key, freshNetwork()), 200);
  board.clock.advance(nextUtcMidnight(board.clock.now()) - board.clock.now());
  assert.ok("key" in await rotateOnce(board, key, freshNetwork()));
});

Deno.test("key rotations are writes: 30 a minute per network with the other writes", async () => {
  await using board = await testBoard();
  const net = freshNetwork();
  const keys: string[] = [];
  for (let i = 0; i < 4; i++) keys.push((await register(board)).key);
  let done = 0;
  for (let round = 0; done < 30; round++) {
    const i = round % keys.length;
    const r = await rotateOnce(board, keys[i], net);
    assert.ok("key" in r, `rotation ${done + 1}: ${JSON.stringify(r)}`);
    keys[i] = r.key!;
    done++;
  }
  await assertLimit(board, await rotate(board, keys[0], net), "RATE_LIMITED", {
    limit_name: "network_writes_per_minute",
    limit: 30,
    scope: "network",
    window: "60s",
    retryAfter: 60,
  });
});

Deno.test("credential lookups: 150 a minute per network, successful ones too; one network cannot drain the instance budget", async (t) => {
  await using board = await testBoard();
  await t.step(
    "rotation chains from one network: bounded, and a fresh key elsewhere works",
    async () => {
      const net = freshNetwork();
      const chains: string[] = [];
      for (let i = 0; i < 11; i++) chains.push((await register(board)).key);
      let rotations = 0;
      let refused = 0;
      // As fast as it is allowed, for three minutes: every new key costs a lookup.
      for (let minute = 0; minute < 3; minute++) {
        for (let attempt = 0; attempt < 200; attempt++) {
          const i = attempt % chains.length;
          const r = await rotateOnce(board, chains[i], net);
          if ("key" in r) {
            chains[i] = r.key!;
            rotations++;
          } else {
            assert.equal(r.status, 429, JSON.stringify(r.body));
            refused++;
          }
        }
        board.clock.advance(60);
      }
      assert.ok(rotations <= 3 * 30, `at most 30 rotations a minute: ${rotations}`);
      assert.ok(refused > 0);
      const fresh = await register(board);
      const res = await me(board, fresh.key, freshNetwork());
      assert.equal(res.status, 200, await res.clone().text());
      await res.body?.cancel();
    },
  );
  await t.step(
    "the 151st valid, never-used key from one network in a minute is refused",
    async () => {
      board.clock.advance(120);
      const fresh: string[] = [];
      for (let i = 0; i < 151; i++) {
        if (i % 60 === 59) board.clock.advance(120); // 120 validated registrations a minute
        fresh.push((await register(board)).key);
      }
      board.clock.advance(120);
      const net = freshNetwork();
      for (let i = 0; i < 150; i++) {
        const res = await me(board, fresh[i], net);
        assert.equal(res.status, 200, `key ${i + 1}`);
        await res.body?.cancel();
      }
      await assertLimit(board, await me(board, fresh[150], net), "RATE_LIMITED", {
        limit_name: "network_credential_lookups_per_minute",
        limit: 150,
        scope: "network",
        window: "60s",
        retryAfter: 61,
      });
      // Keys already validated still work from that network; the key itself works elsewhere.
      await assertStatus(await me(board, fresh[0], net), 200);
      await assertStatus(await me(board, fresh[150], freshNetwork()), 200);
    },
  );
});

Deno.test("a revocation racing a rotation that replaced its key is 401, and the new key works", async () => {
  const gate = commitGate();
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv: gate.wrap });
  const { key } = await register(board);
  // Both requests authenticated with the same key; the revocation decided, its commit held.
  gate.holdCommit(1);
  const revocation = board.request("/v1/me/revoke", {
    method: "POST",
    headers: agentHeaders(key, { "idempotency-key": idemKey() }),
  }, freshNetwork());
  await gate.reached;
  const rotated = await rotateOnce(board, key, freshNetwork());
  assert.ok("key" in rotated, JSON.stringify(rotated));
  gate.release();
  const refused = await revocation;
  assert.equal(refused.status, 401);
  assert.equal((await refused.json()).error.code, "UNAUTHORIZED");
  // The rotation's answer holds: the new key works, the old one does not.
  await assertStatus(await me(board, rotated.key!, freshNetwork()), 200);
  await assertStatus(await me(board, key, freshNetwork()), 401);
});
