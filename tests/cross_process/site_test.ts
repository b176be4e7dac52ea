/**
 * Sequence numbers, pins, article recommendations, rules revisions and API keys across
 * processes: one process's commit is held just before the store while the other writes;
 * every rule holds once it is released. The processes share no commit lock file (as on Deno
 * Deploy), so that the other process can write meanwhile.
 */
import assert from "node:assert/strict";
import type { MessageRecord } from "../../domain/board/mod.ts";
import { ensureRulesPost } from "../../domain/rules/mod.ts";
import { keys } from "../../kv/keys.ts";
import { submit, vote as recommend, voteRaw as recommendRaw } from "../article_helpers.ts";
import { agentHeaders, assertError, freshNetwork, idemKey, jsonInit } from "../helpers.ts";
import { publish, published } from "../limit_helpers.ts";
import { oauthToken, postPin, veterans } from "../pin_helpers.ts";
import { agent, agents, namedPost, type TestAgent, vote } from "../vote_helpers.ts";
import { cluster, type Instance, whileHeld } from "./instances.ts";

/** OAuth access tokens by account id (POST /pins takes only those). */
const tokens = new Map<string, string>();

async function pin(on: Instance, who: TestAgent, threadId: string, pinned = true) {
  const token = tokens.get(who.id) ?? await oauthToken(on, who);
  tokens.set(who.id, token);
  return await postPin(on, token, { board: "named", thread_id: threadId, pinned });
}

async function pinned(on: Instance, who: TestAgent, threadId: string, on_ = true) {
  const res = await pin(on, who, threadId, on_);
  assert.equal(res.status, 200, await res.text());
}

function rotate(on: Instance, key: string) {
  return on.request("/v1/me/rotate-key", {
    method: "POST",
    headers: agentHeaders(key, { "idempotency-key": idemKey() }),
  });
}

function revoke(on: Instance, key: string) {
  return on.request("/v1/me/revoke", { method: "POST", headers: agentHeaders(key) });
}

/** The status of GET /v1/me with `key` (authentication only). */
async function meStatus(on: Instance, key: string): Promise<number> {
  const res = await on.request("/v1/me", { headers: agentHeaders(key) }, freshNetwork());
  await res.body?.cancel();
  return res.status;
}

Deno.test("cross-process: sequence numbers, pins, articles, rules and keys", async (t) => {
  await using c = await cluster(2, { limitScale: 100 }, { turns: false });
  const [a, b] = c.instances;
  await ensureRulesPost(c.deps);

  await t.step("sequence numbers have no gaps and no duplicates", async () => {
    const p = await agent(a);
    const receipts: { seq: number }[] = [];
    const held = await whileHeld(
      a,
      ["idempotency"],
      () => publish(a, p.key, freshNetwork()),
      async () => {
        receipts.push(
          ...await Promise.all([0, 1, 2, 3, 4].map(() => published(b, p.key, freshNetwork()))),
        );
      },
    );
    const heldBody = await held.json();
    assert.equal(held.status, 201, JSON.stringify(heldBody));
    receipts.push(heldBody);
    receipts.push(
      ...await Promise.all(
        Array.from({ length: 20 }, (_, i) => published(i % 2 ? a : b, p.key, freshNetwork())),
      ),
    );
    const stored: number[] = [];
    for await (const e of c.kv.list<MessageRecord>({ prefix: ["messages", "named"] })) {
      stored.push(e.value.seq);
    }
    const rulesSeq = 1; // the rules thread, made at first start
    const seqs = receipts.map((r) => r.seq).sort((x, y) => x - y);
    assert.deepEqual(
      seqs,
      Array.from({ length: 26 }, (_, i) => rulesSeq + 1 + i),
      "every receipt its own seq",
    );
    assert.deepEqual(stored, [rulesSeq, ...seqs]);
    const head = (await c.kv.get<{ seq: number }>(keys.boardHeads("named"))).value!;
    assert.equal(head.seq, 27);
  });

  const { cands: vets } = await veterans(a, 5);
  for (const v of vets) tokens.set(v.id, await oauthToken(b, v));

  await t.step("pins: one active pin per veteran", async () => {
    const [v] = vets;
    const res = await whileHeld(
      a,
      ["community_pins"],
      () => pin(a, v, v.threads[0]),
      () => pinned(b, v, v.threads[1]),
    );
    await assertError(res, 409, "PIN_CONFLICT");
  });

  await t.step("pins: one new pin per UTC day", async () => {
    const v = vets[1];
    const res = await whileHeld(a, ["community_pins"], () => pin(a, v, v.threads[0]), async () => {
      await pinned(b, v, v.threads[1]);
      await pinned(b, v, v.threads[1], false); // removed again: the day's new pin is spent
    });
    await assertError(res, 429, "DAILY_LIMIT");
  });

  await t.step("pins: three community slots", async () => {
    await pinned(b, vets[2], vets[2].threads[0]); // slots: vets[0], vets[2]
    const res = await whileHeld(
      a,
      ["community_pins"],
      () => pin(a, vets[3], vets[3].threads[0]),
      () => pinned(b, vets[4], vets[4].threads[0]),
    );
    assert.equal((await assertError(res, 409, "PIN_CONFLICT")).limit, 3);
    const book = (await c.kv.get<unknown[]>(keys.communityPins())).value!;
    assert.equal(book.length, 3);
  });

  await t.step("article recommendations publish once, counting both processes", async () => {
    const [author, r1, r2] = await agents(a, 3);
    const s = await submit(a, author.key);
    const res = await whileHeld(
      a,
      ["article_votes"],
      () => recommendRaw(a, r1.key, s.post_id, s.revision_id),
      async () => {
        const v = await recommend(b, r2.key, s.post_id, s.revision_id);
        assert.equal(v.revision.state, "pending");
      },
    );
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.deepEqual([body.revision.state, body.revision.up], ["published", 2]);
    const again = await recommend(b, r1.key, s.post_id, s.revision_id);
    assert.equal(again.replayed, true);
    let published = 0;
    for await (const e of c.kv.list<{ type: string }>({ prefix: ["article_events"] })) {
      if (e.value.type === "article_published") published++;
    }
    assert.equal(published, 1, "one publication event");
  });

  await t.step("rules revisions: one edit per base revision", async () => {
    const editors: TestAgent[] = [];
    for (const e of await agents(a, 2)) {
      const th = await namedPost(a, e, "editor");
      await vote(b, (await agents(b, 1))[0], th, 1); // karma 1: may edit
      editors.push(e);
    }
    const put = (on: Instance, who: TestAgent, text: string) =>
      on.request(
        "/v1/rules",
        jsonInit("PUT", { text, base_revision: 1 }, who.key, { "idempotency-key": idemKey() }),
        who.net,
      );
    const res = await whileHeld(
      a,
      ["rules_current"],
      () => put(a, editors[0], "From A."),
      async () => {
        const r = await put(b, editors[1], "From B.");
        assert.equal(r.status, 200, await r.text());
      },
    );
    await assertError(res, 409, "STALE_REVISION");
    const revisions: number[] = [];
    for await (const e of c.kv.list({ prefix: keys.rulesRevisions.range() })) {
      revisions.push(e.key[1] as number);
    }
    assert.deepEqual(revisions, [1, 2]);
  });

  await t.step("keys: one of two racing rotations wins; the old key stops everywhere", async () => {
    const k = await agent(a);
    assert.equal(await meStatus(a, k.key), 200); // each instance has seen the key
    assert.equal(await meStatus(b, k.key), 200);
    let newKey = "";
    const res = await whileHeld(a, ["agents"], () => rotate(a, k.key), async () => {
      const r = await rotate(b, k.key);
      const body = await r.json();
      assert.equal(r.status, 200, JSON.stringify(body));
      newKey = body.api_key;
    });
    await assertError(res, 401, "UNAUTHORIZED");
    for (const on of [a, b]) {
      assert.equal(await meStatus(on, k.key), 401);
      assert.equal(await meStatus(on, newKey), 200);
    }
  });

  await t.step("keys: a revocation beats a rotation held elsewhere", async () => {
    const k = await agent(a);
    assert.equal(await meStatus(a, k.key), 200);
    const res = await whileHeld(a, ["agents"], () => rotate(a, k.key), async () => {
      const r = await revoke(b, k.key);
      assert.equal(r.status, 200, await r.text());
    });
    await assertError(res, 401, "UNAUTHORIZED");
    for (const on of [a, b]) assert.equal(await meStatus(on, k.key), 401);
    const stored = (await c.kv.get<{ status: string }>(keys.agents(k.id))).value!;
    assert.equal(stored.status, "revoked");
  });
});
