/**
 * Group commit and write guards (kv/tx.ts, kv/guards.ts; issue 12): concurrent
 * transactions under one lock share one atomic, each with its own result, within the
 * portable limits; a guard stands for the checks of the keys it covers, and a write from
 * another instance to any of them is still seen.
 */
import assert from "node:assert/strict";
import { ManualClock, utcDay } from "../domain/clock.ts";
import { guardOf, PUBLICATIONS_GUARD, VOTES_GUARD } from "../kv/guards.ts";
import { keys } from "../kv/keys.ts";
import { transact } from "../kv/tx.ts";
import { versionedKv } from "../kv/versioned_kv.ts";
import { wrapCommits } from "./commit_wrapper.ts";
import { agentHeaders, boardOn, idemKey, register, type TestBoard, testBoard } from "./helpers.ts";

/** A versioned handle that counts commits and the checks of each. */
async function countingKv() {
  const raw = await Deno.openKv(":memory:");
  const stats = { commits: 0, maxChecks: 0 };
  const counted = new Proxy(raw, {
    get(target, prop) {
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          let checks = 0;
          const check = op.check.bind(op);
          op.check = (...c: Deno.AtomicCheck[]) => {
            checks += c.length;
            return check(...c);
          };
          const commit = op.commit.bind(op);
          op.commit = () => {
            stats.commits++;
            stats.maxChecks = Math.max(stats.maxChecks, checks);
            return commit();
          };
          return op;
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { kv: versionedKv(counted), raw, stats };
}

Deno.test("group commit: waiting transactions share one atomic, each with its own result", async (t) => {
  const { kv, raw, stats } = await countingKv();
  try {
    const counter = ["counters", "group-demo"];
    const bump = () =>
      transact(kv, async (tx) => {
        const n = (await tx.get<number>(counter)).value ?? 0;
        tx.set(counter, n + 1);
        return n + 1;
      }, { lock: "group-demo", group: true });

    await t.step("50 concurrent increments: exact, in far fewer commits", async () => {
      const values = (await Promise.all(Array.from({ length: 50 }, bump))).map((r) => r.value);
      assert.deepEqual(
        [...values].sort((a, b) => a - b),
        Array.from({ length: 50 }, (_, i) => i + 1),
      );
      assert.equal((await kv.get(counter)).value, 50);
      assert.ok(stats.commits < 10, `${stats.commits} commits for 50 transactions`);
    });

    await t.step("a member that throws is rolled back alone; the others land", async () => {
      const before = (await kv.get<number>(counter)).value!;
      const outcomes = await Promise.allSettled(
        Array.from({ length: 9 }, (_, i) =>
          transact(kv, async (tx) => {
            const n = (await tx.get<number>(counter)).value ?? 0;
            tx.set(counter, n + 1).set(["members", i], true);
            if (i % 3 === 1) throw new Error(`refused ${i}`);
            return n + 1;
          }, { lock: "group-demo", group: true })),
      );
      const refused = outcomes.filter((o) => o.status === "rejected") as PromiseRejectedResult[];
      assert.deepEqual(refused.map((o) => o.reason.message).sort(), [
        "refused 1",
        "refused 4",
        "refused 7",
      ]);
      assert.equal((await kv.get(counter)).value, before + 6);
      for (const i of [1, 4, 7]) assert.equal((await kv.get(["members", i])).value, null);
      for (const i of [0, 2, 3, 5, 6, 8]) assert.equal((await kv.get(["members", i])).value, true);
    });

    await t.step("a read of a key an earlier member summed waits for the next group", async () => {
      const total = ["counters", "summed"];
      const results = await Promise.all([
        transact(kv, (tx) => Promise.resolve(void tx.sum(total, 5n)), {
          lock: "group-demo",
          group: true,
        }),
        transact(kv, async (tx) => {
          const v = (await tx.get<Deno.KvU64>(total)).value;
          tx.set(["seen-sum"], v ? v.value : 0n);
          return v?.value ?? 0n;
        }, { lock: "group-demo", group: true }),
      ]);
      assert.equal(results[1].value, 5n, "the reader saw the committed sum");
    });

    await t.step(
      "a member reading a key it summed itself reads the store, as outside a group",
      async () => {
        const own = ["counters", "own-sum"];
        await kv.set(own, new Deno.KvU64(10n));
        const { value } = await transact(kv, async (tx) => {
          tx.sum(own, 5n);
          return (await tx.get<Deno.KvU64>(own)).value!.value;
        }, { lock: "group-demo", group: true });
        assert.equal(value, 10n, "the stored value, before this commit's sum");
        assert.equal((await kv.get<Deno.KvU64>(own)).value!.value, 15n);
      },
    );

    await t.step("groups stay within ten checks: members that do not fit wait", async () => {
      stats.maxChecks = 0;
      const commitsBefore = stats.commits;
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          transact(kv, async (tx) => {
            // Three checks each: only three members fit one atomic.
            await tx.getMany([["own", i, 0], ["own", i, 1], ["own", i, 2]]);
            tx.set(["own", i, 0], i);
            return i;
          }, { lock: "group-demo", group: true })),
      );
      assert.deepEqual(results.map((r) => r.value), Array.from({ length: 12 }, (_, i) => i));
      assert.ok(stats.maxChecks <= 10, `${stats.maxChecks} checks`);
      assert.ok(stats.commits - commitsBefore >= 4, "12 members of 3 checks need 4 commits");
    });

    await t.step(
      "a write from elsewhere fails the group's check: every member re-runs",
      async () => {
        await bump(); // the next first attempt believes the remembered counter
        const remembered = (await kv.get<number>(counter)).value!;
        await kv.set(counter, 1000);
        const values = (await Promise.all(Array.from({ length: 5 }, bump))).map((r) => r.value);
        assert.deepEqual([...values].sort((a, b) => a - b), [1001, 1002, 1003, 1004, 1005]);
        assert.ok(remembered < 1000);
      },
    );
  } finally {
    raw.close();
  }
});

Deno.test("write guards: every commit that changes a covered key writes its guard", async (t) => {
  await using kv = versionedKv(await Deno.openKv(":memory:"));
  const stamp = async (guard: Deno.KvKey) => (await kv.get(guard)).versionstamp;
  const day = 20000;
  const covered: [Deno.KvKey, Deno.KvKey][] = [
    [keys.boardHeads("named"), PUBLICATIONS_GUARD],
    [keys.boardHeads("b"), PUBLICATIONS_GUARD],
    [keys.counters("posts"), PUBLICATIONS_GUARD],
    [keys.rateBuckets("publications"), PUBLICATIONS_GUARD],
    [keys.quotaUsage("agent_posts", "acct", day), PUBLICATIONS_GUARD],
    [keys.quotaUsage("network_posts", "192.0.2.1", day), PUBLICATIONS_GUARD],
    [keys.idempotency("named", "acct", "key-1"), PUBLICATIONS_GUARD],
    [keys.votes("named", 7, "acct"), VOTES_GUARD],
    [keys.votingStandings("acct"), VOTES_GUARD],
    [keys.veterans("acct"), VOTES_GUARD],
    [keys.quotaUsage("agent_votes", "acct", day), VOTES_GUARD],
    [keys.counters("votes"), VOTES_GUARD],
  ];
  for (const [key, guard] of covered) {
    await t.step(`${key.join("/")} is covered by ${guard.join("/")}`, async () => {
      assert.deepEqual(guardOf(key), guard);
      const other = guard === VOTES_GUARD ? PUBLICATIONS_GUARD : VOTES_GUARD;
      for (const write of ["set", "atomic set", "atomic delete", "atomic sum"]) {
        const before = await stamp(guard);
        const untouched = await stamp(other);
        if (write === "set") await kv.set(key, 1);
        else if (write === "atomic set") await kv.atomic().set(key, 2).commit();
        else if (write === "atomic delete") await kv.atomic().delete(key).commit();
        else await kv.atomic().sum(key, 1n).commit();
        assert.notEqual(await stamp(guard), before, `${write} wrote the guard`);
        assert.equal(await stamp(other), untouched, `${write} left the other guard alone`);
      }
    });
  }
  await t.step("keys outside the guards leave them alone", async () => {
    for (
      const key of [
        keys.rateWindows("network_writes", "192.0.2.1"),
        keys.counters("accounts"),
        keys.messages("named", 7),
      ]
    ) {
      assert.equal(guardOf(key), null);
      const before = [await stamp(PUBLICATIONS_GUARD), await stamp(VOTES_GUARD)];
      await kv.set(key, 1);
      assert.deepEqual([await stamp(PUBLICATIONS_GUARD), await stamp(VOTES_GUARD)], before);
    }
  });
});

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

Deno.test("write guards: entries one instance remembers never hide another instance's writes", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "board-guards-" });
  try {
    const { a, b, clock } = await twoInstances(`${dir}/board.kv`);
    await using _a = a;
    await using _b = b;
    const agent = await register(a);
    // Instance a posts, so its memory holds the account's day, the head and the counters.
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

Deno.test("write guards: votes on two instances stay exact", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "board-guards-" });
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
    // Instance a votes, so its memory holds the voter's allowance and the author's standing.
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

Deno.test("group commit: a key read ahead for the next group is dropped when the commit in flight writes it", async () => {
  await using board = await testBoard();
  const agent = await register(board);
  // One post first, so the publications guard is remembered and covered keys are read ahead.
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
  for await (const _ of board.kv.list({ prefix: keys.rootsPrefix("named") })) roots++;
  assert.equal(roots, 4);
});

Deno.test("group commit: what the commit in flight writes is never answered by a read made ahead", async () => {
  const raw = await Deno.openKv(":memory:");
  let delay = 0;
  const slow = wrapCommits(raw, async (commit) => {
    if (delay) await new Promise((r) => setTimeout(r, delay));
    return await commit();
  });
  const kv = versionedKv(slow);
  try {
    const covered = keys.idempotency("named", "scope", "same-key");
    // As publications do: write-once records are not remembered, so only reads answer them.
    const notIdempotency = (k: Deno.KvKey) => k[0] !== "idempotency";
    const claim = (who: string) =>
      transact(kv, async (tx) => {
        const [, entry] = await tx.getMany<string>([PUBLICATIONS_GUARD, covered]);
        // The first member takes its time, so the second is waiting when its commit starts
        // (and the second's keys are read ahead, during that commit).
        if (who === "first") await new Promise((r) => setTimeout(r, 20));
        if (entry.value !== null) return `${who} saw ${entry.value}`;
        tx.set(covered, who);
        return `${who} claimed`;
      }, {
        lock: "ahead-demo",
        group: true,
        remember: notIdempotency,
        prefetch: [PUBLICATIONS_GUARD, covered],
      });
    // A first commit under the lock, so its guard is remembered and covered keys are read ahead.
    await transact(kv, async (tx) => {
      await tx.get(PUBLICATIONS_GUARD);
      tx.set(keys.counters("posts"), 1);
    }, { lock: "ahead-demo", group: true, remember: notIdempotency });
    delay = 30;
    const first = claim("first");
    await new Promise((r) => setTimeout(r, 5)); // the first member is running
    const second = claim("second");
    assert.equal((await first).value, "first claimed");
    assert.equal((await second).value, "second saw first");
    assert.equal((await kv.get(covered)).value, "first");
  } finally {
    raw.close();
  }
});

Deno.test("credentials: a key retired on one instance stops at once on another that remembers it", async () => {
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
    // Instance a now remembers the key's record (and reads only the version for it).
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
    assert.equal(revoked.status, 200);
    await revoked.body?.cancel();
    assert.equal(await me(a, newKey), 401, "the revoked key stops on a at once");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
