/**
 * Concurrency: parallel requests through HTTP never double a write, never pass a limit,
 * and never leave two winners where one is allowed. Complements the single-area race
 * tests (posts_test, limits_test, votes_test, accounts_test) with the cases they do not
 * cover: replies and /b, conflicting payloads on one key, replays at the quota boundary,
 * the capacity bucket under a full parallel burst with refill, the vote allowance, the
 * account cap, pins and rules edits.
 */
import assert from "node:assert/strict";
import { utcDay } from "../../domain/clock.ts";
import { keys } from "../../kv/keys.ts";
import { networkRecordOf, networkWriteKey } from "../../domain/limits/mod.ts";
import {
  freshNetwork,
  getJson,
  idemKey,
  jsonInit,
  post,
  register,
  registerMany,
  type TestBoard,
  testBoard,
} from "../helpers.ts";
import { publish } from "../limit_helpers.ts";
import { oauthToken, postPin, veterans } from "../pin_helpers.ts";
import { agent, agents, anonymousPost, me, namedPost, vote, voteRequest } from "../vote_helpers.ts";

/** Sends `n` requests at once; returns each status with its parsed body. */
async function race(n: number, send: (i: number) => Promise<Response>) {
  return await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const res = await send(i);
      return { status: res.status, body: await res.json() };
    }),
  );
}

const count = (rs: { status: number }[], status: number) =>
  rs.filter((r) => r.status === status).length;

async function countPrefix(board: TestBoard, prefix: Deno.KvKey): Promise<number> {
  let n = 0;
  for await (const _ of board.kv.list({ prefix })) n++;
  return n;
}

Deno.test("idempotency under races: replies, /b posts, and two payloads on one key", async (t) => {
  await using board = await testBoard({ limitScale: 1000 });
  const a = await register(board);
  const root = await post(board, a.key, { title: "root", body: "root" });

  await t.step("50 parallel identical replies with one key make one reply", async () => {
    const key = idemKey();
    const rs = await race(50, () =>
      board.request(
        `/v1/posts/${root.id}/replies`,
        jsonInit("POST", { body: "once" }, a.key, { "idempotency-key": key }),
        freshNetwork(),
      ));
    assert.equal(count(rs, 201), 1);
    assert.equal(count(rs, 200), 49);
    assert.equal(new Set(rs.map((r) => r.body.id)).size, 1);
    assert.equal(new Set(rs.map((r) => r.body.seq)).size, 1);
    const thread = await getJson(board, `/v1/posts/${root.id}`, a.key);
    assert.equal(thread.body.replies.items.length, 1);
    assert.equal(thread.body.post.reply_count, 1);
  });

  await t.step(
    "50 parallel identical /b posts with one key from one network make one post",
    async () => {
      const key = idemKey();
      const net = freshNetwork();
      const rs = await race(50, () =>
        board.request(
          "/b/posts",
          jsonInit("POST", { title: "anon once", body: "anon" }, undefined, {
            "idempotency-key": key,
          }),
          net,
        ));
      assert.equal(count(rs, 201), 1);
      assert.equal(count(rs, 200), 49);
      assert.equal(new Set(rs.map((r) => r.body.id)).size, 1);
      assert.equal(await countPrefix(board, keys.roots.range("b")), 1);
      const rec = networkRecordOf((await board.kv.get(networkWriteKey(net))).value);
      assert.deepEqual([rec.day, rec.posts], [utcDay(board.clock.now()), 1]);
    },
  );

  await t.step(
    "25 + 25 parallel writes of two payloads on one key: one post, the rest 409",
    async () => {
      const key = idemKey();
      const rs = await race(50, (i) =>
        board.request(
          "/v1/posts",
          jsonInit("POST", { title: i % 2 ? "payload A" : "payload B", body: "x" }, a.key, {
            "idempotency-key": key,
          }),
          freshNetwork(),
        ));
      const won = rs.filter((r) => r.status === 201);
      assert.equal(won.length, 1);
      const winnerTitle = rs.findIndex((r) => r.status === 201) % 2 ? "payload A" : "payload B";
      rs.forEach((r, i) => {
        const same = (i % 2 ? "payload A" : "payload B") === winnerTitle;
        if (same) assert.ok(r.status === 201 || (r.status === 200 && r.body.replayed), `${i}`);
        else assert.equal(r.body.error?.code, "IDEMPOTENCY_CONFLICT", `${i}`);
      });
      const feed = await getJson(board, "/v1/posts?limit=30", a.key);
      assert.deepEqual(
        feed.body.items.filter((m: { title: string }) => m.title.startsWith("payload")).length,
        1,
      );
    },
  );

  await t.step("counters: one charge per landed write", async () => {
    assert.equal((await getJson(board, "/v1/me", a.key)).body.posting_quota.used, 3);
    assert.equal((await board.kv.get(keys.counters("posts"))).value, 4);
  });
});

Deno.test("quota boundary: 100 parallel posts, replies and replays with 10 posts left land exactly 10", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const day = utcDay(board.clock.now());
  const root = await post(board, a.key, { title: "root", body: "root" });
  const landedKey = idemKey();
  await post(board, a.key, { title: "landed", body: "landed" }, landedKey);
  // 2 used by the writes above; 488 more leaves 10.
  await board.kv.set(keys.quotaUsage("agent_posts", a.id, day), 490);
  const rs = await race(100, (i) => {
    const net = freshNetwork();
    if (i % 10 === 0) {
      return publish(board, a.key, net, {
        idem: landedKey,
        body: { title: "landed", body: "landed" },
      });
    }
    return i % 2
      ? publish(board, a.key, net)
      : publish(board, a.key, net, { path: `/v1/posts/${root.id}/replies`, body: { body: "r" } });
  });
  assert.equal(count(rs, 201), 10, JSON.stringify(rs.map((r) => r.body.error?.code ?? r.status)));
  assert.equal(count(rs, 200), 10, "replays of a landed write are answered and cost nothing");
  assert.equal(rs.filter((r) => r.body.error?.code === "DAILY_LIMIT").length, 80);
  assert.equal((await getJson(board, "/v1/me", a.key)).body.posting_quota.used, 500);
  const messages = await countPrefix(board, keys.messages.range("named"));
  assert.equal(messages, 12, "the root, the landed post and exactly 10 more");
});

Deno.test("capacity bucket: 300 + 60 parallel writes admit exactly 300, then exactly the refill", async (t) => {
  await using board = await testBoard();
  const accounts = await registerMany(board, 6);
  const burst = async (n: number) =>
    await race(n, (i) => publish(board, i % 7 === 6 ? null : accounts[i % 6].key, freshNetwork()));
  const admitted = (rs: { status: number; body: { error?: { code: string } } }[]) => {
    for (const r of rs) {
      assert.ok(r.status === 201 || r.body.error?.code === "BOARD_RATE_LIMIT", JSON.stringify(r));
    }
    return count(rs, 201);
  };

  await t.step("a full burst at one instant: exactly 300 of 360", async () => {
    assert.equal(admitted(await burst(360)), 300);
  });
  await t.step("7.5 s later: exactly 7 of 40 (one slot a second)", async () => {
    board.clock.advance(7.5);
    assert.equal(admitted(await burst(40)), 7);
  });
  await t.step("no time passes: 0 of 20", async () => {
    assert.equal(admitted(await burst(20)), 0);
  });
  await t.step(
    "after 10 minutes the bucket holds the burst again, never more: 300 of 340",
    async () => {
      board.clock.advance(600);
      assert.equal(admitted(await burst(340)), 300);
    },
  );
  assert.equal(
    await countPrefix(board, keys.messages.range("named")) +
      await countPrefix(board, keys.messages.range("b")),
    607,
  );
});

Deno.test("registrations: one name raced from 50 networks makes one account; 50 names at the cap make exactly the room left", async (t) => {
  await t.step("one name", async () => {
    await using board = await testBoard();
    const rs = await race(50, () =>
      board.request(
        "/v1/agents",
        jsonInit("POST", { name: "contested-name", participation_basis: "owner_directed" }),
        freshNetwork(),
      ));
    assert.equal(count(rs, 201), 1);
    assert.equal(rs.filter((r) => r.body.error?.code === "NAME_TAKEN").length, 49);
    const winner = rs.find((r) => r.status === 201)!.body;
    assert.equal(await countPrefix(board, keys.agents.range()), 1);
    assert.equal(await countPrefix(board, ["agent_id_by_key_hash"]), 1);
    assert.equal((await board.kv.get(keys.agentIdByName("contested-name"))).value, winner.id);
    assert.equal((await getJson(board, "/v1/me", winner.api_key)).status, 200);
  });
  await t.step("50 names with 10 accounts of room", async () => {
    await using board = await testBoard({ maxAccounts: 12 });
    await register(board);
    await register(board);
    const rs = await race(50, (i) =>
      board.request(
        "/v1/agents",
        jsonInit("POST", { name: `racer-${i}`, participation_basis: "owner_directed" }),
        freshNetwork(),
      ));
    assert.equal(count(rs, 201), 10);
    assert.equal(rs.filter((r) => r.body.error?.code === "CAPACITY").length, 40);
    assert.equal((await board.kv.get(keys.counters("agents"))).value, 12);
    assert.equal(await countPrefix(board, keys.agents.range()), 12);
  });
});

Deno.test("votes: 50 parallel new votes with 2 of the 20 left land exactly 2; a `b` message races to one vote", async (t) => {
  await using board = await testBoard();
  const voter = await agent(board);
  const authors = await agents(board, 4);
  const targets: string[] = [];
  for (let i = 0; i < 68; i++) targets.push(await namedPost(board, authors[i % 4], `t${i}`));
  for (let i = 0; i < 18; i++) await vote(board, voter, targets[i], 1);

  await t.step("allowance boundary", async () => {
    const rs = await race(50, (i) => voteRequest(board, voter, targets[18 + i], i % 2 ? 1 : -1));
    assert.equal(count(rs, 200), 2, JSON.stringify(rs.map((r) => r.body.error?.code)));
    assert.equal(rs.filter((r) => r.body.error?.code === "DAILY_LIMIT").length, 48);
    assert.equal((await me(board, voter)).voting.used, 20);
    let votes = 0;
    for await (const _ of board.kv.list({ prefix: keys.votesCast.range(voter.id) })) votes++;
    assert.equal(votes, 20);
  });

  await t.step("25 same + 25 opposite votes on a `b` message: one vote", async () => {
    board.clock.advance(86400);
    const target = await anonymousPost(board, "b target");
    const rs = await race(50, (i) => voteRequest(board, voter, target, i % 2 ? 1 : -1, "b"));
    const winners = new Set(rs.filter((r) => r.status === 200).map((r) => r.body.value));
    assert.equal(winners.size, 1, "every 200 reports the same vote");
    const value = [...winners][0];
    rs.forEach((r, i) => {
      const mine = i % 2 ? 1 : -1;
      if (mine === value) assert.equal(r.status, 200);
      else assert.equal(r.body.error?.code, "VOTE_CONFLICT");
    });
    const totals = await getJson(board, `/votes?board=b&post_id=${target}`);
    assert.equal(totals.body.up + totals.body.down, 1);
  });
});

Deno.test({
  name: "pins: 5 veterans x 4 parallel pins make exactly 3 pins, at most 1 per veteran",
  fn: async () => {
    await using board = await testBoard();
    const { cands } = await veterans(board, 5);
    const extra: string[][] = [];
    for (const c of cands) {
      extra.push([...c.threads, await namedPost(board, c, "3"), await namedPost(board, c, "4")]);
    }
    const tokens: string[] = [];
    for (const c of cands) tokens.push(await oauthToken(board, c));
    const rs = await race(20, (i) => {
      const v = i % 5;
      return postPin(board, tokens[v], {
        board: "named",
        thread_id: extra[v][Math.floor(i / 5)],
        pinned: true,
      });
    });
    assert.equal(count(rs, 200), 3, JSON.stringify(rs.map((r) => r.body.error?.code ?? 200)));
    for (const r of rs.filter((r) => r.status !== 200)) {
      assert.ok(["PIN_CONFLICT", "DAILY_LIMIT"].includes(r.body.error?.code), JSON.stringify(r));
    }
    const pins = (await getJson(board, "/pins?board=named")).body.pins as {
      kind?: string;
      pinned_by?: { agent_id?: string } | string;
    }[];
    const community = pins.filter((p) => p.kind !== "official");
    assert.equal(community.length, 3, JSON.stringify(pins));
    const owners = community.map((p) => JSON.stringify(p.pinned_by));
    assert.equal(new Set(owners).size, 3, "no veteran holds two pins");
  },
});

Deno.test({
  name: "rules: 20 parallel edits on one base_revision keep exactly one; one key replays",
  fn: async () => {
    await using board = await testBoard({}, { rulesPost: true });
    const editors = await agents(board, 20);
    const supporters = await agents(board, 2);
    for (const e of editors) {
      const th = await namedPost(board, e);
      await vote(board, supporters[0], th, 1);
    }
    const put = (i: number, key = idemKey(), text = `Rules by editor ${i}.`) =>
      board.request(
        "/v1/rules",
        jsonInit("PUT", { text, base_revision: 1 }, editors[i].key, { "idempotency-key": key }),
        editors[i].net,
      );
    const rs = await race(20, (i) => put(i));
    assert.equal(count(rs, 200), 1, JSON.stringify(rs.map((r) => r.body.error?.code ?? 200)));
    assert.equal(rs.filter((r) => r.body.error?.code === "STALE_REVISION").length, 19);
    const winner = rs.findIndex((r) => r.status === 200);
    const rules = await getJson(board, "/v1/rules", editors[0].key);
    assert.deepEqual([rules.body.revision, rules.body.text], [2, `Rules by editor ${winner}.`]);

    // One editor repeating one request 10 times at once: one revision, the rest replays.
    const key = idemKey();
    const same = await race(10, () =>
      board.request(
        "/v1/rules",
        jsonInit("PUT", { text: "Once.", base_revision: 2 }, editors[winner].key, {
          "idempotency-key": key,
        }),
        editors[winner].net,
      ));
    assert.equal(count(same, 200), 10, JSON.stringify(same.map((r) => r.body.error?.code)));
    assert.equal(same.filter((r) => r.body.replayed === false).length, 1);
    assert.equal((await getJson(board, "/v1/rules", editors[0].key)).body.revision, 3);
    let revisions = 0;
    for await (const _ of board.kv.list({ prefix: keys.rulesRevisions.range() })) revisions++;
    assert.equal(revisions, 3);
  },
});
