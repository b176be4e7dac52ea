/**
 * Your activity across processes: three service instances on one KV file write replies,
 * mentions and votes that concern one account while a poller reads its activity with
 * `after`; every item arrives once, none is missed, and two commits racing for the same
 * position of the agent event log both land. The processes share no commit lock file (as on
 * Deno Deploy), so that commits can race.
 */
import assert from "node:assert/strict";
import { keys } from "../../kv/keys.ts";
import { agentEventsTail } from "../../domain/agent_events.ts";
import { getJson, idemKey, jsonInit, reply, type TestBoard } from "../helpers.ts";
import { agent, agents, namedPost, type TestAgent, vote } from "../vote_helpers.ts";
import { cluster, whileHeld } from "./instances.ts";

/** One page of `who`'s activity through `on`. */
async function page(on: TestBoard, who: TestAgent, after: number | null) {
  const r = await getJson(on, `/v1/me/activity${after ? `?after=${after}&limit=30` : ""}`, who.key);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as {
    items: { seq: number; type: string; message: { id: string } }[];
    next_after: number | null;
    newest_cursor: number | null;
  };
}

Deno.test("cross-process: nothing missed or repeated across 3 processes on one store", async (t) => {
  await using c = await cluster(3, { limitScale: 100 }, { turns: false });
  const [a, b, p] = c.instances;
  const ann = await agent(a);
  const talkers = await agents(b, 4);
  const thread = await namedPost(a, ann, "ann's thread");

  await t.step("two commits racing for one log position both land, in order", async () => {
    const start = (await page(p, ann, null)).newest_cursor ?? 0;
    // A reply and a mention share no key but the log: only the log position's check orders them.
    const held = await whileHeld(
      a,
      ["agent_events"],
      () =>
        a.request(
          `/v1/posts/${thread}/replies`,
          jsonInit("POST", { body: "a reply" }, talkers[0].key, { "idempotency-key": idemKey() }),
          talkers[0].net,
        ),
      () => namedPost(b, talkers[1], `meanwhile @${ann.name}`),
    );
    assert.equal(held.status, 201, await held.text());
    const got = await page(p, ann, start);
    assert.equal(got.items.length, 2);
    const seqs = got.items.map((i) => i.seq);
    assert.equal(new Set(seqs).size, 2, "two positions");
    let entries = 0;
    for await (const _ of c.kv.list({ prefix: keys.agentEvents.range() })) entries++;
    assert.equal(entries, Math.max(...seqs), "positions without gaps");
  });

  await t.step("a poller following newest_cursor sees every item exactly once", async () => {
    let checkpoint = (await page(p, ann, null)).newest_cursor!;
    const seen: string[] = [];
    const expected: string[] = [];
    const voters = await agents(a, 6);
    for (let round = 0; round < 6; round++) {
      const writes = await Promise.all([
        reply(a, talkers[round % 4].key, thread, `round ${round} from A`),
        reply(b, talkers[(round + 1) % 4].key, thread, `round ${round} from B, @${ann.name}`),
        namedPost(p, talkers[(round + 2) % 4], `@${ann.name} round ${round}`).then((id) => ({
          id,
        })),
        vote(round % 2 ? a : b, voters[round], thread, 1).then(() => ({ id: `vote:${thread}` })),
      ]);
      expected.push(...writes.map((w) => w.id));
      // Poll from the third process while the other two keep no state of it.
      let next: number | null = checkpoint;
      while (next !== null) {
        const got = await page(p, ann, next);
        seen.push(
          ...got.items.toReversed().map((i) =>
            i.type === "vote" ? `vote:${i.message.id}` : i.message.id
          ),
        );
        if (got.newest_cursor !== null) checkpoint = got.newest_cursor;
        next = got.next_after;
      }
    }
    assert.equal(
      new Set(seen.filter((s) => !s.startsWith("vote:"))).size,
      seen.filter((s) => !s.startsWith("vote:")).length,
      "no message item twice",
    );
    assert.deepEqual([...seen].sort(), [...expected].sort(), "every item, once");
  });
});

/**
 * Appends `count` entries that concern no account of the test at the log's tail, as other
 * processes' commits do: each batch takes the positions after the tail it read, checked free.
 */
async function othersEvents(kv: Deno.Kv, count: number, batch: number) {
  for (let done = 0; done < count;) {
    const tail = await agentEventsTail(kv);
    const n = Math.min(batch, count - done);
    const op = kv.atomic()
      .check({ key: keys.agentEvents(tail + 1), versionstamp: null })
      .check({ key: keys.agentEvents(tail + n), versionstamp: null });
    for (let p = tail + 1; p <= tail + n; p++) {
      op.set(keys.agentEvents(p), {
        at: 0,
        events: [{ type: "message", seq: 1, thread: crypto.randomUUID() }],
      });
    }
    // Another process may hold the store's write lock: the batch is sent again.
    const ok = await op.commit().then((r) => r.ok, (e) => {
      if (String(e).includes("database is locked")) return false;
      throw e;
    });
    if (ok) done += n;
  }
}

Deno.test("cross-process: polls past a busy log while other processes append miss nothing", async () => {
  await using c = await cluster(3, { limitScale: 100 }, { turns: false });
  const [a, b, p] = c.instances;
  const ann = await agent(a);
  const [ben, cat] = await agents(b, 2);
  const thread = await namedPost(a, ann, "ann's thread on a busy board");
  await reply(b, ben.key, thread, "the first reply");
  let checkpoint = (await page(p, ann, null)).newest_cursor!;
  const seen: string[] = [];
  let writing = true;
  let farthest = 0;
  // The poller follows its cursor the whole time: its scans list ranges of a log that grows
  // under them, hundreds of others' entries between two of ann's items.
  const poller = (async () => {
    let last = false;
    while (!last) {
      last = !writing;
      await new Promise((r) => setTimeout(r, 100));
      let next: number | null = checkpoint;
      while (next !== null) {
        const got = await page(p, ann, next);
        seen.push(...got.items.toReversed().map((i) => i.message.id));
        if (got.newest_cursor !== null) {
          farthest = Math.max(farthest, got.newest_cursor - next);
          checkpoint = got.newest_cursor;
        }
        next = got.next_after;
      }
    }
  })();
  const expected: string[] = [];
  try {
    for (let round = 0; round < 8; round++) {
      const [, fromA, fromB] = await Promise.all([
        othersEvents(c.kv, 400, 100),
        reply(a, ben.key, thread, `round ${round} from A`),
        reply(b, cat.key, thread, `round ${round} from B`),
      ]);
      expected.push(fromA.id, fromB.id);
    }
  } finally {
    writing = false;
  }
  await poller;
  assert.deepEqual([...seen].sort(), [...expected].sort(), "every reply, once");
  assert.ok(farthest > 500, `a poll reached past its first list (farthest ${farthest})`);
});
