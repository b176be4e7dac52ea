/**
 * Publication and registration limits across processes, with the limits scaled down
 * (BOARD_LIMIT_SCALE 0.01: 5 posts per account and 20 per network a day, a burst of 3
 * publications refilled one per 100 s, 1 write per network a minute, 1 registration per
 * network a day) and 40 retained posts. One process's commit is held just before the
 * store while the other writes; the limit holds once it is released. The processes share no
 * commit lock file (as on Deno Deploy), so that the other process can write meanwhile.
 */
import assert from "node:assert/strict";
import { registerAgent } from "../../domain/accounts/mod.ts";
import { networkRecordOf, networkWriteKey } from "../../domain/limits/mod.ts";
import { utcDay } from "../../domain/clock.ts";
import { keys } from "../../kv/keys.ts";
import { assertError, freshNetwork, idemKey } from "../helpers.ts";
import { publish, published, registerFrom } from "../limit_helpers.ts";
import { cluster, whileHeld } from "./instances.ts";

const POSTS = { body: { title: "A title", body: "A body" } };

Deno.test("cross-process: publication and registration limits", async (t) => {
  await using c = await cluster(2, { limitScale: 0.01, maxPosts: 40 }, { turns: false });
  const [a, b] = c.instances;
  let n = 0;
  /** An account registered through the domain (registration limits stay out of the way). */
  const account = async () => {
    const name = `limits-${n++}-${crypto.randomUUID().slice(0, 6)}`;
    const r = await registerAgent(c.deps, { name, participation_basis: "owner_directed" });
    return { id: r.agent.id, key: r.apiKey };
  };
  /** Moves past the publication bucket's refill and the per-network write window. */
  const tick = () => c.clock.advance(101);
  const retained = async () => (await c.kv.get<number>(keys.counters("posts"))).value ?? 0;

  await t.step("Idempotency-Key: replay of the publication that landed, or conflict", async () => {
    const p = await account();
    const key = idemKey();
    const replay = await whileHeld(
      a,
      ["idempotency"],
      () => publish(a, p.key, freshNetwork(), { idem: key, ...POSTS }),
      () => published(b, p.key, freshNetwork(), { idem: key, ...POSTS }),
    );
    const body = await replay.json();
    assert.equal(replay.status, 200, JSON.stringify(body));
    assert.equal(body.replayed, true);
    tick();
    const other = idemKey();
    const conflict = await whileHeld(
      a,
      ["idempotency"],
      () => publish(a, p.key, freshNetwork(), { idem: other, ...POSTS }),
      () => published(b, p.key, freshNetwork(), { idem: other, body: { title: "B", body: "b" } }),
    );
    await assertError(conflict, 409, "IDEMPOTENCY_CONFLICT");
    assert.equal(await retained(), 2);
  });

  await t.step("an account's daily publications stop at the limit", async () => {
    tick();
    const p = await account();
    for (let i = 0; i < 4; i++) {
      tick();
      await published(i % 2 ? a : b, p.key, freshNetwork());
    }
    tick();
    const res = await whileHeld(
      a,
      ["idempotency"],
      () => publish(a, p.key, freshNetwork()),
      () => published(b, p.key, freshNetwork()),
    );
    await assertError(res, 429, "DAILY_LIMIT");
    const day = utcDay(c.clock.now());
    assert.equal((await c.kv.get(keys.quotaUsage("agent_posts", p.id, day))).value, 5);
  });

  await t.step("a network's daily publications stop at the limit", async () => {
    const net = freshNetwork();
    const ps = [await account(), await account(), await account(), await account()];
    for (let i = 0; i < 19; i++) {
      tick();
      await published(i % 2 ? a : b, ps[Math.floor(i / 5)].key, net);
    }
    tick();
    const extra = await account();
    const res = await whileHeld(
      a,
      ["idempotency"],
      () => publish(a, extra.key, net),
      () => published(b, ps[3].key, net),
    );
    const details = await assertError(res, 429, "DAILY_LIMIT");
    assert.equal(details.scope, "network");
    const rec = networkRecordOf((await c.kv.get(networkWriteKey(net))).value);
    assert.deepEqual([rec.day, rec.posts], [utcDay(c.clock.now()), 20]);
  });

  await t.step("the board's publication burst is shared by both processes", async () => {
    for (let i = 0; i < 4; i++) tick(); // the bucket is full again: 3 slots
    const ps = [await account(), await account(), await account(), await account()];
    await published(a, ps[0].key, freshNetwork());
    await published(b, ps[1].key, freshNetwork());
    const res = await whileHeld(
      a,
      ["idempotency"],
      () => publish(a, ps[2].key, freshNetwork()),
      () => published(b, ps[3].key, freshNetwork()),
    );
    await assertError(res, 429, "BOARD_RATE_LIMIT");
  });

  await t.step(
    "retained posts stop at the board's capacity; a removal elsewhere frees one",
    async () => {
      const ps = [await account(), await account(), await account()];
      const made: { id: string }[] = [];
      for (let i = 0; (await retained()) < 39; i++) {
        tick();
        made.push(await published(i % 2 ? a : b, ps[Math.floor(i / 4)].key, freshNetwork()));
      }
      tick();
      const last = await account();
      const res = await whileHeld(
        a,
        ["idempotency"],
        () => publish(a, last.key, freshNetwork()),
        () => published(b, ps[2].key, freshNetwork()),
      );
      assert.equal((await assertError(res, 503, "CAPACITY")).limit, 40);
      assert.equal(await retained(), 40);
      const removed = await b.request(`/v1/posts/${made[0].id}`, {
        method: "DELETE",
        headers: {
          accept: "application/json",
          "x-agent-protocol": "board/1",
          authorization: `Bearer ${ps[0].key}`,
        },
      }, freshNetwork());
      assert.equal(removed.status, 200, await removed.text());
      tick();
      await published(a, last.key, freshNetwork());
      assert.equal(await retained(), 40);
      tick();
      await assertError(await publish(a, last.key, freshNetwork()), 503, "CAPACITY");
    },
  );

  await t.step("a name is registered once", async () => {
    c.clock.advance(61);
    const name = `taken-${crypto.randomUUID().slice(0, 8)}`;
    let landed = "";
    const res = await whileHeld(
      a,
      ["agents"],
      () => registerFrom(a, freshNetwork(), name),
      async () => {
        const r = await registerFrom(b, freshNetwork(), name);
        const body = await r.json();
        assert.equal(r.status, 201, JSON.stringify(body));
        landed = body.id;
      },
    );
    await assertError(res, 409, "NAME_TAKEN");
    // The name points at the account that landed, and no other account holds it.
    assert.equal((await c.kv.get<string>(keys.agentIdByName(name))).value, landed);
    const holders = [];
    for await (const e of c.kv.list<{ name: string }>({ prefix: keys.agents.range() })) {
      if (e.value.name === name) holders.push(e.key.at(-1));
    }
    assert.deepEqual(holders, [landed]);
  });

  await t.step("a network's daily registrations stop at the limit", async () => {
    c.clock.advance(121); // past each instance's sliding minute of validated registrations
    const net = freshNetwork();
    const res = await whileHeld(a, ["agents"], () => registerFrom(a, net), async () => {
      c.clock.advance(61); // past the network's attempt window (one a minute at this scale)
      const r = await registerFrom(b, net);
      assert.equal(r.status, 201, await r.text());
    });
    const details = await assertError(res, 429, "DAILY_LIMIT");
    assert.equal(details.limit, 1);
    const day = utcDay(c.clock.now());
    assert.equal((await c.kv.get(keys.quotaUsage("network_registrations", net, day))).value, 1);
  });
});
