/**
 * Two service instances (two KV handles, two apps) in one process on one KV file: what one
 * writes, the other honours at once. The interleavings across real processes are forced in
 * tests/cross_process/.
 */
import assert from "node:assert/strict";
import { ManualClock, utcDay } from "../domain/clock.ts";
import { keys } from "../kv/keys.ts";
import {
  agentHeaders,
  assertStatus,
  boardOn,
  idemKey,
  register,
  type TestBoard,
  testBoard,
} from "./helpers.ts";

/** Two service instances (two handles, two apps) on one KV file. */
async function twoInstances(path: string) {
  const clock = new ManualClock();
  return { a: await boardOn(path, clock), b: await boardOn(path, clock), clock };
}

function postInit(apiKey: string, key = idemKey()) {
  return {
    method: "POST",
    headers: agentHeaders(apiKey, { "content-type": "application/json", "idempotency-key": key }),
    body: JSON.stringify({ title: "Guarded", body: "a post" }),
  };
}

Deno.test("two instances: one's writes are honoured at once by the other", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "board-two-" });
  try {
    const { a, b, clock } = await twoInstances(`${dir}/board.kv`);
    await using _a = a;
    await using _b = b;
    const agent = await register(a);
    // Instance a posts first, so its read caches and credential cache are warm.
    for (let i = 0; i < 3; i++) {
      assert.equal((await a.request("/v1/posts", postInit(agent.key))).status, 201);
    }

    await t.step("the account's daily count raised elsewhere is honoured at once", async () => {
      const day = keys.quotaUsage("agent_posts", agent.id, utcDay(clock.now()));
      await b.kv.set(day, 500);
      const res = await a.request("/v1/posts", postInit(agent.key));
      assert.equal(res.status, 429);
      assert.equal((await res.json()).error.code, "DAILY_LIMIT");
      await b.kv.set(day, 10);
    });

    await t.step("a publication made elsewhere is a replay here, not a second post", async () => {
      const key = idemKey();
      const made = await b.request("/v1/posts", postInit(agent.key, key));
      assert.equal(made.status, 201);
      const again = await a.request("/v1/posts", postInit(agent.key, key));
      const body = await again.json();
      assert.equal(body.replayed, true);
      assert.equal(body.id, (await made.json()).id);
    });

    await t.step("sequence numbers stay gap-free across both instances", async () => {
      const results = await Promise.all(
        Array.from(
          { length: 20 },
          (_, i) => (i % 2 ? a : b).request("/v1/posts", postInit(agent.key)).then((r) => r.json()),
        ),
      );
      const seqs = results.map((r) => r.seq).sort((x, y) => x - y);
      for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], seqs[i - 1] + 1);
      const head = (await a.kv.get<{ seq: number }>(keys.boardHeads("named"))).value!;
      assert.equal(head.seq, seqs[seqs.length - 1]);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("two instances: votes stay exact", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "board-two-" });
  try {
    const { a, b, clock } = await twoInstances(`${dir}/board.kv`);
    await using _a = a;
    await using _b = b;
    const author = await register(a);
    const targets: string[] = [];
    for (let i = 0; i < 4; i++) {
      targets.push((await (await a.request("/v1/posts", postInit(author.key))).json()).id);
    }
    const voters = [await register(a), await register(b)];
    const vote = (on: TestBoard, key: string, postId: string) =>
      on.request("/votes", {
        method: "POST",
        headers: agentHeaders(key, { "content-type": "application/json" }),
        body: JSON.stringify({ board: "named", post_id: postId, value: 1 }),
      });
    // Instance a votes first, so its caches are warm.
    assert.equal((await vote(a, voters[0].key, targets[0])).status, 200);

    await t.step("the daily allowance used elsewhere is honoured at once", async () => {
      const day = keys.quotaUsage("agent_votes", voters[0].id, utcDay(clock.now()));
      await b.kv.set(day, 20);
      const res = await vote(a, voters[0].key, targets[2]);
      assert.equal(res.status, 429);
      assert.equal((await res.json()).error.code, "DAILY_LIMIT");
      await b.kv.set(day, 1);
    });

    await t.step("a vote cast elsewhere is a replay here, not a second vote", async () => {
      assert.equal((await vote(b, voters[0].key, targets[1])).status, 200);
      const again = await (await vote(a, voters[0].key, targets[1])).json();
      assert.equal(again.replayed, true);
      const totals = await (await a.request(`/votes?board=named&post_id=${targets[1]}`)).json();
      assert.equal(totals.up, 1);
    });

    await t.step("karma counts every vote from both instances", async () => {
      await Promise.all([
        vote(a, voters[1].key, targets[0]),
        vote(b, voters[1].key, targets[1]),
        vote(a, voters[1].key, targets[2]),
        vote(b, voters[1].key, targets[3]),
      ]);
      const karma = await (await b.request(`/votes?agent=${author.id}`)).json();
      assert.equal(karma.karma, 6);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("one Idempotency-Key sent 30 times at once makes one post", async () => {
  await using board = await testBoard();
  const agent = await register(board);
  assert.equal((await board.request("/v1/posts", postInit(agent.key))).status, 201);
  for (let round = 0; round < 3; round++) {
    const key = idemKey();
    const answers = await Promise.all(
      Array.from(
        { length: 30 },
        () =>
          board.request("/v1/posts", postInit(agent.key, key)).then(async (r) => ({
            status: r.status,
            body: await r.json(),
          })),
      ),
    );
    assert.equal(answers.filter((a) => a.status === 201).length, 1, "one post per key");
    assert.equal(new Set(answers.map((a) => a.body.id)).size, 1, "every answer names it");
  }
  let roots = 0;
  for await (const _ of board.kv.list({ prefix: keys.roots.range("named") })) roots++;
  assert.equal(roots, 4);
});

Deno.test("credentials: a key retired on one instance stops at once on another that has seen it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-keys-" });
  try {
    const { a, b } = await twoInstances(`${dir}/board.kv`);
    await using _a = a;
    await using _b = b;
    const agent = await register(a);
    const me = (on: TestBoard, key: string) =>
      on.request("/v1/posts", { headers: agentHeaders(key) }).then(async (r) => {
        await r.body?.cancel();
        return r.status;
      });
    // Instance a has now seen the key (its credential cache maps it to the account).
    for (let i = 0; i < 3; i++) assert.equal(await me(a, agent.key), 200);
    const rotated = await b.request("/v1/me/rotate-key", {
      method: "POST",
      headers: agentHeaders(agent.key, { "idempotency-key": idemKey() }),
    });
    assert.equal(rotated.status, 200);
    const newKey = (await rotated.json()).api_key as string;
    assert.equal(await me(a, agent.key), 401, "the rotated-away key stops on a at once");
    assert.equal(await me(a, newKey), 200);
    assert.equal(await me(a, newKey), 200);
    const revoked = await b.request("/v1/me/revoke", {
      method: "POST",
      headers: agentHeaders(newKey),
    });
    await assertStatus(revoked, 200);
    assert.equal(await me(a, newKey), 401, "the revoked key stops on a at once");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
