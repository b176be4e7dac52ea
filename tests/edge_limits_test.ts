/**
 * Edge limits on credential-bearing calls (in memory per instance, never KV): 300 per
 * minute per network and per credential, the authenticated API ceiling of 6,000 per
 * minute with reserved admission for moderators, and the credential lookup budget.
 */
import assert from "node:assert/strict";
import { registerAgent } from "../domain/accounts/mod.ts";
import { edgeLimiter, MinuteCounter } from "../domain/limits/mod.ts";
import type { BoardError } from "../domain/errors.ts";
import { agentHeaders, freshNetwork, getJson, register, testBoard } from "./helpers.ts";
import type { TestBoard } from "./helpers.ts";
import { assertLimit, networks } from "./limit_helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";

function me(board: TestBoard, key: string, network: string): Promise<Response> {
  return board.request("/v1/me", { headers: agentHeaders(key) }, network);
}

async function ok(res: Promise<Response>, status = 200): Promise<void> {
  const r = await res;
  assert.equal(r.status, status);
  await r.body?.cancel();
}

Deno.test("credential-bearing calls: 300 a minute per credential", async (t) => {
  await using board = await testBoard();
  const [a, b] = [await register(board), await register(board)];
  const nets = networks(3);
  const want = (retryAfter: number) => ({
    limit_name: "credential_calls_per_minute",
    limit: 300,
    scope: "credential",
    window: "60s",
    retryAfter,
  });
  await t.step("300 calls with one key from three networks pass; the 301st is 429", async () => {
    for (let i = 0; i < 300; i++) await ok(me(board, a.key, nets[i % 3]));
    await assertLimit(board, await me(board, a.key, freshNetwork()), "RATE_LIMITED", want(61));
  });
  await t.step("another credential from the same network is unaffected", async () => {
    await ok(me(board, b.key, nets[0]));
  });
  await t.step("the minute slides: refused at 60 s, admitted at 61 s", async () => {
    board.clock.advance(60);
    await assertLimit(board, await me(board, a.key, nets[0]), "RATE_LIMITED", want(1));
    board.clock.advance(1);
    await ok(me(board, a.key, nets[0]));
  });
});

Deno.test("credential-bearing calls: 300 a minute per network; failed lookups capped per network", async (t) => {
  await using board = await testBoard();
  const agents = [await register(board), await register(board), await register(board)];
  const want = {
    limit_name: "network_credential_calls_per_minute",
    limit: 300,
    scope: "network",
    window: "60s",
    retryAfter: 61,
  };
  await t.step(
    "300 calls from one network with three keys; the 301st (a fourth key) is 429",
    async () => {
      const net = freshNetwork();
      for (let i = 0; i < 300; i++) await ok(me(board, agents[i % 3].key, net));
      const fourth = await register(board);
      await assertLimit(board, await me(board, fourth.key, net), "RATE_LIMITED", want);
      await ok(me(board, fourth.key, freshNetwork()));
    },
  );
  await t.step("tokens that cannot be credentials get 401 and count nothing", async () => {
    const net = freshNetwork();
    for (let i = 0; i < 400; i++) await ok(me(board, `pb_live_not-a-key-${i}`, net), 401);
    await ok(me(board, agents[0].key, net));
  });
  await t.step(
    "30 unknown well-formed keys get 401; the 31st is refused before any lookup",
    async () => {
      const net = freshNetwork();
      await ok(me(board, agents[1].key, net)); // validated on this instance just now
      for (let i = 0; i < 30; i++) await ok(me(board, junkKey(), net), 401);
      await assertLimit(board, await me(board, junkKey(), net), "RATE_LIMITED", {
        limit_name: "network_failed_credential_lookups_per_minute",
        limit: 30,
        scope: "network",
        window: "60s",
        retryAfter: 62,
      });
      // A credential this instance validated lately needs no lookup: still served.
      await ok(me(board, agents[1].key, net));
    },
  );
});

/** A token of the API key's exact shape that no account holds. */
function junkKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return "pb_live_" + btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

Deno.test("junk bearer tokens from 12 networks (300 each) never lock out a valid key", async (t) => {
  await using board = await testBoard();
  const valid = await register(board);
  const nets = networks(12);
  await t.step("each network sends 150 malformed and 150 well-formed unknown tokens", async () => {
    for (const net of nets) {
      let limited = 0;
      for (let i = 0; i < 300; i++) {
        const token = i % 2 ? junkKey() : `garbage-${i}-${"x".repeat(i % 50)}`;
        const res = await me(board, token, net);
        await res.body?.cancel();
        if (res.status === 429) limited++;
        else assert.equal(res.status, 401);
      }
      assert.equal(limited, 120, "after 30 failed lookups the network's well-formed junk is 429");
    }
  });
  await t.step("a valid key from a fresh network is served", async () => {
    await ok(me(board, valid.key, freshNetwork()));
  });
  await t.step(
    "the junk networks' failed-lookup allowance returns as the minute slides",
    async () => {
      board.clock.advance(120);
      await ok(me(board, junkKey(), nets[0]), 401);
    },
  );
});

Deno.test("authenticated API ceiling through HTTP (BOARD_LIMIT_SCALE=0.01: 60 a minute)", async () => {
  await using board = await testBoard({ limitScale: 0.01 });
  // At this scale each credential and each network may make 3 calls a minute.
  const keys: string[] = [];
  for (let i = 0; i < 21; i++) {
    const { apiKey } = await registerAgent(board.deps, {
      name: `ceiling-${i}`,
      participation_basis: "owner_directed",
    });
    keys.push(apiKey);
  }
  for (let i = 0; i < 20; i++) {
    const net = freshNetwork();
    for (let j = 0; j < 3; j++) await ok(me(board, keys[i], net));
  }
  await assertLimit(board, await me(board, keys[20], freshNetwork()), "RATE_LIMITED", {
    limit_name: "authenticated_api_per_minute",
    limit: 60,
    scope: "instance",
    window: "60s",
    retryAfter: 61,
  });
});

Deno.test("EdgeLimiter at real size: the 6,001st call is refused by the ceiling; moderators are not", async (t) => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const limiter = edgeLimiter(board.deps);
  const refusal = (fn: () => unknown): Record<string, unknown> => {
    try {
      fn();
    } catch (e) {
      return { code: (e as BoardError).code, ...(e as BoardError).details };
    }
    throw new Error("expected a refusal");
  };
  await t.step("20 credentials x 300 calls from 20 networks: 6,000 admitted", () => {
    for (let k = 0; k < 20; k++) {
      for (let i = 0; i < 300; i++) limiter.settle(limiter.admitCall(`n${k}`, `key-${k}`), true);
    }
  });
  await t.step("the 6,001st call is 429 naming the ceiling", () => {
    const d = refusal(() => limiter.admitCall("n-fresh", "key-fresh"));
    assert.equal(d.code, "RATE_LIMITED");
    assert.equal(d.limit_name, "authenticated_api_per_minute");
    assert.equal(d.limit, 6000);
    assert.equal(d.scope, "instance");
  });
  await t.step("a moderator call is answered at the ceiling (reserved admission)", async () => {
    for (let i = 0; i < 5; i++) await ok(modRequest(board, "GET", "/mod/audit"));
  });
  await t.step("the ceiling lifts as the minute slides", () => {
    board.clock.advance(60);
    assert.equal(refusal(() => limiter.admitCall("n-fresh", "key-fresh")).retry_after, 1);
    board.clock.advance(1);
    limiter.admitCall("n-fresh", "key-fresh");
  });
});

Deno.test("EdgeLimiter: 3,000 lookups a minute of credentials this instance has not validated", async () => {
  await using board = await testBoard();
  const limiter = edgeLimiter(board.deps);
  limiter.settle(limiter.admitCall("n-known", "known-key"), true);
  for (let i = 1; i < 3000; i++) limiter.settle(limiter.admitCall(`n${i}`, `new-${i}`), true);
  try {
    limiter.admitCall("n-x", "new-x");
    throw new Error("expected a refusal");
  } catch (e) {
    assert.equal((e as BoardError).code, "RATE_LIMITED");
    assert.equal((e as BoardError).details?.limit_name, "instance_credential_lookups_per_minute");
    assert.equal((e as BoardError).details?.limit, 3000);
  }
  // A credential validated in the last minute costs no lookup and is still admitted.
  limiter.admitCall("n-known", "known-key");
});

Deno.test("EdgeLimiter: failed lookups are capped per network and never spend the instance budget", async () => {
  await using board = await testBoard();
  const limiter = edgeLimiter(board.deps);
  // 150 networks x 30 failed lookups = 4,500 failures, more than the instance budget.
  for (let n = 0; n < 150; n++) {
    for (let i = 0; i < 30; i++) limiter.settle(limiter.admitCall(`n${n}`, `bad-${n}-${i}`), false);
    assert.throws(
      () => limiter.admitCall(`n${n}`, `bad-${n}-x`),
      (e: BoardError) => e.details?.limit_name === "network_failed_credential_lookups_per_minute",
    );
  }
  // A new credential from a fresh network still gets its lookup.
  limiter.settle(limiter.admitCall("n-fresh", "good-key"), true);
  assert.equal(limiter.lookups.wait("*", board.clock.nowMs(), 2), 0, "one lookup spent, not 4,501");
});

Deno.test("edge limits: reads never write KV, and counters hold only the last two minutes", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const snapshot = async () => {
    const out: string[] = [];
    for await (const e of board.kv.list({ prefix: [] })) {
      out.push(`${JSON.stringify(e.key)}@${e.versionstamp}`);
    }
    return out.join("\n");
  };
  const before = await snapshot();
  for (let i = 0; i < 50; i++) {
    assert.equal((await getJson(board, "/v1/posts", a.key)).status, 200);
    assert.equal((await getJson(board, "/v1/me", a.key)).status, 200);
  }
  assert.equal(await snapshot(), before);
  const limiter = edgeLimiter(board.deps);
  assert.ok(limiter.networks.size > 0);
  board.clock.advance(120);
  assert.equal((await getJson(board, "/v1/me", a.key)).status, 200);
  assert.equal(limiter.networks.size, 1);
  assert.equal(limiter.credentials.size, 1);
});

Deno.test("MinuteCounter: sliding estimate over two fixed minutes", () => {
  const c = new MinuteCounter();
  const t0 = 1_800_000_000_000; // a minute boundary
  for (let i = 0; i < 10; i++) c.add("k", t0);
  assert.equal(c.wait("k", t0, 11), 0);
  assert.ok(c.wait("k", t0, 10) > 60_000);
  // Half-way through the next minute, half of the previous minute's 10 still count.
  assert.equal(c.wait("k", t0 + 90_000, 6), 0);
  assert.ok(c.wait("k", t0 + 90_000, 5) > 0);
  // Two minutes on, nothing is held.
  assert.equal(c.wait("k", t0 + 120_000, 1), 0);
  assert.equal(c.seen("k", t0 + 120_000), false);
});
