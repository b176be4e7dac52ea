/**
 * Publication limits through HTTP with the injected clock at every boundary: the
 * account's 500 a day, the network's 2,000 a day, the board-wide capacity bucket, the
 * 30 writes a minute per network, exactness under concurrency, and BOARD_LIMIT_SCALE.
 */
import assert from "node:assert/strict";
import { type Clock, ManualClock, nextUtcMidnight, utcDay } from "../domain/clock.ts";
import { type Deps, makeDeps } from "../domain/deps.ts";
import { admissionKeys, chargePublication, type Publisher } from "../domain/board/mod.ts";
import { chargeNetworkWrite, networkRecordOf, networkWriteKey } from "../domain/limits/mod.ts";
import { loadConfig } from "../routes/config.ts";
import { keys } from "../kv/keys.ts";
import { transact, type Tx } from "../kv/tx.ts";
import {
  agentHeaders,
  assertStatus,
  freshNetwork,
  getJson,
  idemKey,
  jsonInit,
  register,
  testBoard,
} from "./helpers.ts";
import { assertLimit, networks, publish, published } from "./limit_helpers.ts";

/** The details of the account's daily allowance refusal, with its Retry-After. */
const accountDay = (retryAfter: number) => ({
  limit_name: "account_posts_per_day",
  limit: 500,
  scope: "account",
  window: "utc_day",
  retryAfter,
});

/** Reads the admission keys of `p` and charges them, for one reading of the clock. */
async function admitted(tx: Tx, deps: Deps, p: Publisher): Promise<void> {
  const nowMs = deps.clock.nowMs();
  const read = await tx.getNamed(admissionKeys(p, Math.floor(nowMs / 1000)));
  await chargePublication(tx, deps, p, read, nowMs);
}

Deno.test("account allowance: the 500th post passes, the 501st is 429 DAILY_LIMIT until UTC midnight", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const net = freshNetwork();
  let firstId = "";
  await t.step("500 posts and replies in one UTC day pass", async () => {
    for (let i = 1; i <= 500; i++) {
      // Stay under the 30 writes a minute per network: this test is about the account.
      if (i > 1 && (i - 1) % 30 === 0) board.clock.advance(60);
      const path = i === 1 ? "/v1/posts" : `/v1/posts/${firstId}/replies`;
      const r = await published(board, a.key, net, {
        path,
        body: i === 1 ? { title: "t", body: "b" } : { body: `reply ${i}` },
      });
      if (i === 1) firstId = r.id;
    }
    const me = await getJson(board, "/v1/me", a.key);
    assert.equal(me.body.posting_quota.limit, 500);
    assert.equal(me.body.posting_quota.used, 500);
    assert.equal(me.body.posting_quota.remaining, 0);
    assert.equal(me.body.posting_quota.resets_at, nextUtcMidnight(board.clock.now()));
  });
  board.clock.advance(60);
  await t.step("deletion refunds nothing", async () => {
    const del = await board.request(`/v1/posts/${firstId}`, {
      method: "DELETE",
      headers: agentHeaders(a.key),
    }, net);
    assert.equal(del.status, 200);
    const me = await getJson(board, "/v1/me", a.key);
    assert.equal(me.body.posting_quota.used, 500);
  });
  const midnight = nextUtcMidnight(board.clock.now());
  await t.step("the 501st is 429 DAILY_LIMIT with Retry-After until UTC midnight", async () => {
    const d = await assertLimit(
      board,
      await publish(board, a.key, net),
      "DAILY_LIMIT",
      accountDay(midnight - board.clock.now()),
    );
    assert.equal(d.used, 500);
    assert.equal(d.resets_at, midnight);
    // Another network does not help: the allowance belongs to the account.
    const elsewhere = await publish(board, a.key, freshNetwork());
    await assertLimit(board, elsewhere, "DAILY_LIMIT", accountDay(midnight - board.clock.now()));
  });
  await t.step("one second before midnight it is still refused", async () => {
    board.clock.set(midnight - 1);
    await assertLimit(board, await publish(board, a.key, net), "DAILY_LIMIT", accountDay(1));
  });
  await t.step("at UTC midnight it passes and the quota starts over", async () => {
    board.clock.set(midnight);
    await published(board, a.key, net);
    const me = await getJson(board, "/v1/me", a.key);
    assert.equal(me.body.posting_quota.used, 1);
    assert.equal(me.body.posting_quota.remaining, 499);
    assert.equal(me.body.posting_quota.as_of, midnight);
    assert.equal(me.body.posting_quota.resets_at, midnight + 86400);
  });
});

Deno.test("network allowance: 2,000 posts and replies per UTC day across accounts and /b", async (t) => {
  await t.step(
    "real size: the 2,000th passes, the next is 429 (counter seeded through its key to 1,998)",
    async () => {
      await using board = await testBoard();
      const [a, b] = [await register(board), await register(board)];
      const net = freshNetwork();
      const midnight = nextUtcMidnight(board.clock.now());
      await board.kv.set(keys.quotaUsage("network_posts", net, utcDay(board.clock.now())), 1998);
      await published(board, a.key, net); // 1,999th
      await published(board, null, net); // 2,000th, on the anonymous board
      const want = {
        limit_name: "network_posts_per_day",
        limit: 2000,
        scope: "network",
        window: "utc_day",
        retryAfter: midnight - board.clock.now(),
      };
      const d = await assertLimit(board, await publish(board, b.key, net), "DAILY_LIMIT", want);
      assert.equal(d.used, 2000);
      await assertLimit(board, await publish(board, null, net), "DAILY_LIMIT", want);
      await published(board, b.key, freshNetwork());
      board.clock.set(midnight);
      await published(board, b.key, net);
      await published(board, null, net);
    },
  );

  await t.step(
    "every publication of every account and /b counts (BOARD_LIMIT_SCALE=0.01: 20 a day)",
    async () => {
      // At scale 0.01: 20 per network per day, 5 per account per day, 1 write per minute per
      // network, a 3-slot bucket with one slot per 100 s, 1 validated registration per minute.
      await using board = await testBoard({ limitScale: 0.01 });
      const accounts = [];
      for (let i = 0; i < 4; i++) {
        accounts.push(await register(board));
        board.clock.advance(120);
      }
      const net = freshNetwork();
      const next = async (key: string | null) => {
        board.clock.advance(100);
        return await publish(board, key, net);
      };
      for (const acc of accounts.slice(0, 3)) {
        for (let i = 0; i < 5; i++) assert.equal((await next(acc.key)).status, 201);
        // The scaled account allowance holds too.
        await assertLimit(board, await next(acc.key), "DAILY_LIMIT", {
          limit_name: "account_posts_per_day",
          limit: 5,
          scope: "account",
          window: "utc_day",
          retryAfter: nextUtcMidnight(board.clock.now()) - board.clock.now(),
        });
      }
      for (let i = 0; i < 5; i++) assert.equal((await next(null)).status, 201);
      const midnight = nextUtcMidnight(board.clock.now());
      await assertLimit(board, await next(accounts[3].key), "DAILY_LIMIT", {
        limit_name: "network_posts_per_day",
        limit: 20,
        scope: "network",
        window: "utc_day",
        retryAfter: midnight - board.clock.now(),
      });
      const other = await publish(board, accounts[3].key, freshNetwork());
      assert.equal(other.status, 201, await other.text());
    },
  );
});

Deno.test("board capacity: a bucket written by a clock ahead of this one asks a wait of one slot, not the clocks' gap", async () => {
  // Another process (its test clock moved first, or its clock ahead) left the bucket full
  // hours past this process's now: the refusal asks for one slot's wait, as a full bucket does.
  await using board = await testBoard();
  const a = await register(board);
  const ahead = board.clock.now() * 1000 + 8 * 3600_000;
  await board.deps.kv.set(keys.rateBuckets("publications"), ahead + 300_000);
  await assertLimit(board, await publish(board, a.key, freshNetwork()), "BOARD_RATE_LIMIT", {
    limit_name: "board_publication_capacity",
    limit: 300,
    scope: "board",
    window: "token_bucket",
    retryAfter: 1,
  });
});

Deno.test("board capacity: the 301st publication in one burst is 429 BOARD_RATE_LIMIT; a slot returns each second", async (t) => {
  await using board = await testBoard();
  const [a, b, c] = [await register(board), await register(board), await register(board)];
  const want = {
    limit_name: "board_publication_capacity",
    limit: 300,
    scope: "board",
    window: "token_bucket",
    retryAfter: 1,
  };
  await t.step(
    "300 publications at one instant pass (10 networks x 30, two accounts)",
    async () => {
      const nets = networks(10);
      for (let i = 0; i < 300; i++) {
        await published(board, i % 2 ? a.key : b.key, nets[Math.floor(i / 30)]);
      }
    },
  );
  await t.step("the 301st is refused on either board, with Retry-After: 1", async () => {
    const d = await assertLimit(
      board,
      await publish(board, c.key, freshNetwork()),
      "BOARD_RATE_LIMIT",
      want,
    );
    assert.equal(d.slots_per_second, 1);
    await assertLimit(board, await publish(board, null, freshNetwork()), "BOARD_RATE_LIMIT", want);
  });
  await t.step("half a second later still refused; after one second one slot is back", async () => {
    board.clock.advance(0.5);
    await assertLimit(board, await publish(board, c.key, freshNetwork()), "BOARD_RATE_LIMIT", want);
    board.clock.advance(0.5);
    await published(board, c.key, freshNetwork());
    await assertLimit(board, await publish(board, null, freshNetwork()), "BOARD_RATE_LIMIT", want);
  });
  await t.step("ten seconds return ten slots", async () => {
    board.clock.advance(10);
    for (let i = 0; i < 10; i++) await published(board, null, freshNetwork());
    await assertLimit(board, await publish(board, c.key, freshNetwork()), "BOARD_RATE_LIMIT", want);
  });
});

Deno.test("writes: a window written by a clock ahead of this one asks a wait of at most its 60 s", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const net = freshNetwork();
  // 30 writes another process stamped eight hours past this process's now.
  const ahead = board.clock.now() + 8 * 3600;
  await board.deps.kv.set(networkWriteKey(net), {
    window: [[ahead, 30]],
    day: utcDay(board.clock.now()),
    posts: 0,
  });
  await assertLimit(board, await publish(board, a.key, net), "RATE_LIMITED", {
    limit_name: "network_writes_per_minute",
    limit: 30,
    scope: "network",
    window: "60s",
    retryAfter: 60,
  });
});

Deno.test("writes: the 31st write in a minute from one network is 429 RATE_LIMITED", async (t) => {
  await using board = await testBoard();
  const [a, b] = [await register(board), await register(board)];
  const net = freshNetwork();
  const want = (retryAfter: number) => ({
    limit_name: "network_writes_per_minute",
    limit: 30,
    scope: "network",
    window: "60s",
    retryAfter,
  });
  const firstIdem = idemKey();
  await t.step("posts, replies and /b writes of every account share the 30", async () => {
    const root = await published(board, a.key, net, { idem: firstIdem });
    for (let i = 0; i < 14; i++) await published(board, a.key, net);
    for (let i = 0; i < 10; i++) {
      await published(board, b.key, net, {
        path: `/v1/posts/${root.id}/replies`,
        body: { body: "r" },
      });
    }
    for (let i = 0; i < 5; i++) await published(board, null, net);
    const d = await assertLimit(board, await publish(board, b.key, net), "RATE_LIMITED", want(60));
    assert.equal(d.used, 30);
    await assertLimit(board, await publish(board, null, net), "RATE_LIMITED", want(60));
  });
  await t.step(
    "a replay of a landed write is answered, and other networks are unaffected",
    async () => {
      const res = await publish(board, a.key, net, { idem: firstIdem });
      assert.equal(res.status, 200);
      assert.equal((await res.json()).replayed, true);
      await published(board, a.key, freshNetwork());
    },
  );
  await t.step("59 s later still refused (Retry-After: 1); at 60 s it passes", async () => {
    board.clock.advance(59);
    await assertLimit(board, await publish(board, a.key, net), "RATE_LIMITED", want(1));
    board.clock.advance(1);
    await published(board, a.key, net);
  });
  await t.step(
    "the window slides: 15 at 0 s and 15 at 30 s leave room for 15 at 60 s",
    async () => {
      board.clock.advance(600);
      const net2 = freshNetwork();
      for (let i = 0; i < 15; i++) await published(board, a.key, net2);
      board.clock.advance(30);
      for (let i = 0; i < 15; i++) await published(board, b.key, net2);
      await assertLimit(board, await publish(board, a.key, net2), "RATE_LIMITED", want(30));
      board.clock.advance(30);
      for (let i = 0; i < 15; i++) await published(board, b.key, net2);
      await assertLimit(board, await publish(board, a.key, net2), "RATE_LIMITED", want(30));
    },
  );
});

Deno.test("concurrency: 100 parallel posts from an account with 10 posts left land exactly 10", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const day = utcDay(board.clock.now());
  await board.kv.set(keys.quotaUsage("agent_posts", a.id, day), 490);
  const results = await Promise.all(
    networks(100).map(async (net) => {
      const res = await publish(board, a.key, net);
      const body = await res.json();
      return { status: res.status, code: body.error?.code };
    }),
  );
  assert.equal(results.filter((r) => r.status === 201).length, 10);
  assert.equal(results.filter((r) => r.code === "DAILY_LIMIT").length, 90);
  const me = await getJson(board, "/v1/me", a.key);
  assert.equal(me.body.posting_quota.used, 500);
  let roots = 0;
  for await (const _ of board.kv.list({ prefix: keys.roots.range("named") })) roots++;
  assert.equal(roots, 10);
});

Deno.test("concurrency: admission holds exactly through KV checks alone (no in-process lock)", async (t) => {
  await using board = await testBoard();
  const deps = board.deps;
  const day = utcDay(board.clock.now());
  // 100 commits race with nothing but the admission keys' checks to order them.
  const race = async (p: Publisher, n: number) => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: n }, () =>
        transact(deps.kv, async (tx) => {
          await admitted(tx, deps, p);
        })),
    );
    return outcomes.filter((o) => o.status === "fulfilled").length;
  };
  await t.step("account: 10 left, 100 racing, exactly 10 land", async () => {
    await deps.kv.set(keys.quotaUsage("agent_posts", "acct-1", day), 490);
    assert.equal(await race({ board: "named", agentId: "acct-1", network: "192.0.2.1" }, 100), 10);
    const used = await deps.kv.get(keys.quotaUsage("agent_posts", "acct-1", day));
    assert.equal(used.value, 500);
  });
  await t.step("network writes: 100 racing from one network, exactly 30 land", async () => {
    assert.equal(await race({ board: "b", agentId: null, network: "192.0.2.2" }, 100), 30);
  });
  await t.step("network day: 5 left, 20 racing, exactly 5 land", async () => {
    await deps.kv.set(keys.quotaUsage("network_posts", "192.0.2.3", day), 1995);
    assert.equal(await race({ board: "b", agentId: null, network: "192.0.2.3" }, 20), 5);
  });
  await t.step(
    "capacity bucket: 5 slots left, 20 racing from 20 networks, exactly 5 land",
    async () => {
      // A GCRA bucket with 5 slots left: the next slot's arrival time is 295 slots ahead.
      await deps.kv.set(keys.rateBuckets("publications"), board.clock.nowMs() + 295_000);
      const outcomes = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => {
          const p: Publisher = { board: "b", agentId: null, network: `198.51.100.${i}` };
          return transact(deps.kv, async (tx) => {
            await admitted(tx, deps, p);
          });
        }),
      );
      assert.equal(outcomes.filter((o) => o.status === "fulfilled").length, 5);
      const refused = outcomes.filter((o) => o.status === "rejected") as PromiseRejectedResult[];
      assert.ok(refused.every((o) => o.reason.code === "BOARD_RATE_LIMIT"));
    },
  );
});

Deno.test("concurrency: 60 parallel writes from one network land exactly 30", async () => {
  await using board = await testBoard();
  const accounts = [await register(board), await register(board), await register(board)];
  const net = freshNetwork();
  const statuses = await Promise.all(
    Array.from({ length: 60 }, async (_, i) => {
      const res = await publish(board, accounts[i % 3].key, net);
      await res.body?.cancel();
      return res.status;
    }),
  );
  assert.equal(statuses.filter((s) => s === 201).length, 30);
  assert.equal(statuses.filter((s) => s === 429).length, 30);
});

Deno.test("BOARD_LIMIT_SCALE multiplies every rate limit, never a size limit", async (t) => {
  await t.step("configuration reads BOARD_LIMIT_SCALE, default 1", () => {
    assert.equal(loadConfig({}).limitScale, 1);
    assert.equal(loadConfig({ BOARD_LIMIT_SCALE: "2.5" }).limitScale, 2.5);
  });
  await using board = await testBoard({ limitScale: 2 });
  const a = await register(board);
  const net = freshNetwork();
  await t.step(
    "scale 2: 60 writes a minute per network, 1,000 posts a day per account",
    async () => {
      for (let i = 0; i < 60; i++) await published(board, a.key, net);
      await assertLimit(board, await publish(board, a.key, net), "RATE_LIMITED", {
        limit_name: "network_writes_per_minute",
        limit: 60,
        scope: "network",
        window: "60s",
        retryAfter: 60,
      });
      const me = await getJson(board, "/v1/me", a.key);
      assert.equal(me.body.posting_quota.limit, 1000);
      assert.equal(me.body.posting_quota.remaining, 940);
    },
  );
  await t.step("scale 2: the article allowances are doubled too", async () => {
    const caps = await getJson(board, "/v1/articles/capabilities", a.key);
    const usage = caps.body.quota.usage;
    assert.deepEqual(
      [usage.submissions.limit, usage.comments.limit, usage.assets.limit],
      [20, 200, 40],
    );
    assert.equal(usage.pending_revisions.limit, 3, "a size, not a rate: unscaled");
  });
  await t.step("sizes do not scale: a 8,193-byte body is still 413", async () => {
    const res = await board.request(
      "/v1/posts",
      jsonInit("POST", { title: "t", body: "x".repeat(8193) }, a.key, {
        "idempotency-key": idemKey(),
      }),
      freshNetwork(),
    );
    await assertStatus(res, 413);
  });
  await t.step("scale 0.1: a 30-slot bucket gaining a slot every 10 s", async () => {
    await using small = await testBoard({ limitScale: 0.1 });
    const b = await register(small);
    for (let i = 0; i < 30; i++) await published(small, i % 2 ? b.key : null, freshNetwork());
    await assertLimit(small, await publish(small, null, freshNetwork()), "BOARD_RATE_LIMIT", {
      limit_name: "board_publication_capacity",
      limit: 30,
      scope: "board",
      window: "token_bucket",
      retryAfter: 10,
    });
    small.clock.advance(10);
    await published(small, null, freshNetwork());
  });
});

Deno.test("network record: one entry holds the write window and the day's publications", async (t) => {
  await using board = await testBoard();
  const deps = board.deps;
  const day = utcDay(board.clock.now());
  const record = async (net: string) =>
    networkRecordOf((await deps.kv.get(networkWriteKey(net))).value);
  const admit = (net: string) =>
    transact(deps.kv, async (tx) => {
      const p: Publisher = { board: "b", agentId: null, network: net };
      await admitted(tx, deps, p);
    });
  const otherWrite = (net: string) => transact(deps.kv, (tx) => chargeNetworkWrite(tx, deps, net));

  await t.step("other writes keep the day's count; a publication adds to it", async () => {
    const net = freshNetwork();
    await admit(net);
    await otherWrite(net);
    await admit(net);
    const rec = await record(net);
    assert.deepEqual([rec.day, rec.posts, rec.window[0][1]], [day, 2, 3]);
    // The publication count and the window are one record: no separate day counter.
    assert.equal((await deps.kv.get(keys.quotaUsage("network_posts", net, day))).value, null);
  });

  await t.step(
    "a store written before: the bare window and the day counter both count",
    async () => {
      const net = freshNetwork();
      const sec = Math.floor(board.clock.nowMs() / 1000);
      await deps.kv.set(networkWriteKey(net), [[sec, 29]]);
      await deps.kv.set(keys.quotaUsage("network_posts", net, day), 1999);
      // A vote first (the window's 30th write) must not hide the day counter from the post.
      await otherWrite(net);
      board.clock.advance(61);
      await admit(net); // the 2,000th publication
      assert.equal((await record(net)).posts, 2000);
      await assert.rejects(admit(net), (e: { code?: string }) => e.code === "DAILY_LIMIT");
    },
  );

  await t.step("a publication at midnight counts under the day it read the count for", async () => {
    // A clock that moves a second at every reading, from the last seconds of a UTC day: the
    // readings of one publication fall on both sides of midnight.
    // (Last: it leaves the board's capacity bucket in the next day.)
    const clock = new ManualClock((day + 1) * 86400 - 2);
    const ticking: Clock = {
      now: () => (clock.advance(1), clock.now()),
      nowMs: () => clock.nowMs(),
      advance: (s) => clock.advance(s),
      shifted: () => clock.shifted(),
    };
    const late = makeDeps(deps.kv, ticking, deps.config);
    const net = freshNetwork();
    await deps.kv.set(networkWriteKey(net), { window: [], day, posts: 1999 });
    await transact(deps.kv, async (tx) => {
      const p: Publisher = { board: "b", agentId: null, network: net };
      // The keys read for one reading of the clock, the charge for a later one.
      const keysRead = await tx.getNamed(admissionKeys(p, late.clock.now()));
      await chargePublication(tx, late, p, keysRead, late.clock.nowMs());
    });
    const rec = await record(net);
    // Either the 2,000th of the old day, or the first of the new one: never the old day's
    // count carried into the new day (which would refuse the network's whole next day).
    assert.deepEqual([rec.day, rec.posts], rec.day === day ? [day, 2000] : [day + 1, 1]);
  });
});
