/**
 * Two interleavings across processes that a write path keeping entries in memory between
 * commits gets wrong: entries read ahead that outlive a failed commit, and a refusal decided
 * on entries another process has changed, followed by commits that build on them.
 */
import assert from "node:assert/strict";
import { claimedSeq, type MessageRecord, POSTS_PER_AGENT_PER_DAY } from "../../domain/board/mod.ts";
import { karmaOf } from "../../domain/votes/mod.ts";
import { keys } from "../../kv/keys.ts";
import { agent, agents, me, namedPost, type TestAgent, voteRequest } from "../vote_helpers.ts";
import { agentHeaders, assertError, freshNetwork, getJson } from "../helpers.ts";
import { utcDay } from "../../domain/clock.ts";
import { publish } from "../limit_helpers.ts";
import { cluster } from "./instances.ts";

/** How long a process must do no KV work before its requests count as queued. */
const QUEUED_MS = 150;

/** Awaits a vote response and asserts 200. */
async function ok(res: Promise<Response>): Promise<void> {
  const r = await res;
  const body = await r.text();
  assert.equal(r.status, 200, body);
}

Deno.test("cross-process: a vote held in flight while another process votes for the same author loses nothing", async () => {
  await using c = await cluster(2, { limitScale: 100 });
  const [a, b] = c.instances;
  const x = await agent(a);
  const y = await agent(a);
  const xThread = await namedPost(a, x, "x");
  const yThreads = [await namedPost(a, y, "y 1"), await namedPost(a, y, "y 2")];
  // Voters calling from one network, as agents behind one gateway do.
  const voters: TestAgent[] = (await agents(a, 35)).map((v) => ({ ...v, net: "10.9.9.9" }));
  const w = await agent(b);
  // A first vote on A: its commit is this process's latest under the board-writes lock.
  await ok(voteRequest(a, voters[34], xThread, 1));

  const held = await a.hold(["votes_cast"]);
  const first = voteRequest(a, voters[0], xThread, 1);
  await held.reached;
  // 32 votes queue on A behind the held commit, then a vote for Y arrives on A.
  const waiting = voters.slice(1, 33).map((v) => voteRequest(a, v, xThread, 1));
  await a.quiet();
  const forY = voteRequest(a, voters[33], yThreads[0], 1);
  await a.quiet();
  // Process B's vote for Y (on Y's other thread) lands while A's commit is held.
  await ok(voteRequest(b, w, yThreads[1], 1));
  await held.release();
  await Promise.all([first, ...waiting, forY].map(ok));

  assert.equal(await karmaOf(c.deps, y.id), 2, "two weight-1 upvotes for Y");
  for (const id of yThreads) {
    const seq = claimedSeq(id)!; // a new id carries its seq
    const msg = (await c.kv.get<MessageRecord>(keys.messages("named", seq))).value!;
    assert.deepEqual([msg.up, msg.score], [1, 1]);
  }
  assert.equal(await karmaOf(c.deps, x.id), 34, "every vote for X counted once");
});

/*
 * A refusal decided on remembered entries another process has changed. A write path that
 * keeps entries in memory between commits gets this wrong: process A remembers the
 * retained-posts count at capacity from its own last publication. While A's commit of W's
 * publication (the board's last place) is held, a publication by Q fills the next group of
 * A's queue, and a publication by R from a second network (its own write window) queues
 * behind it, reading R's daily count ahead. B removes three posts and R publishes on B.
 * Released, A refuses Q (CAPACITY) on the remembered count; no commit of A failed, so only
 * that refusal tells A that another process wrote: A decides Q again on fresh reads and
 * publishes it. R's publication then runs on the daily count read before B's publication
 * and writes 1 where 2 are due. (Votes take no part: they queue behind nothing.) The
 * processes share no commit lock file (as on Deno Deploy), so that B writes while A is held.
 */
Deno.test("cross-process: a refusal decided on a count another process changed leaves nothing stale for the publications queued behind it", async () => {
  await using c = await cluster(2, { limitScale: 100, maxPosts: 7 }, { turns: false });
  const [a, b] = c.instances;
  const [p, q, r, w, x] = await agents(a, 5);
  await namedPost(a, x, "x");
  const made: string[] = [];
  for (let i = 0; i < 5; i++) made.push(await namedPost(a, p, `p ${i}`));
  // One place left; W's publication takes it, its commit held.
  const held = await a.hold(["messages"]);
  const first = publish(a, w.key, w.net);
  await held.reached;
  // Each request waits in A's queue in this order before B writes anything.
  const atCapacity = publish(a, q.key, q.net);
  await a.quiet(QUEUED_MS);
  const fromSecondNetwork = publish(a, r.key, freshNetwork());
  await a.quiet(QUEUED_MS);
  // B frees three places, and R publishes one post on B.
  for (const id of made.slice(0, 3)) {
    const res = await b.request(
      `/v1/posts/${id}`,
      { method: "DELETE", headers: agentHeaders(p.key) },
      p.net,
    );
    assert.equal(res.status, 200, await res.text());
  }
  await namedPost(b, r, "r on B");
  await held.release();

  assert.equal((await first).status, 201);
  const qAnswer = await atCapacity;
  assert.equal(qAnswer.status, 201, await qAnswer.text());
  const rAnswer = await fromSecondNetwork;
  assert.equal(rAnswer.status, 201, await rAnswer.text());

  for (const on of [a, b]) {
    assert.equal((await me(on, r)).posting_quota.used, 2, "R's two posts both counted");
  }
  // The board is full again: 7 retained, counted exactly.
  await assertError(await publish(b, x.key, x.net), 503, "CAPACITY");
  const feed = await getJson(a, "/v1/posts?limit=30", x.key);
  assert.equal(feed.body.items.length, 7);
});

Deno.test("cross-process: a write made without the service's KV handle is still seen", async () => {
  await using c = await cluster(1);
  const [a] = c.instances;
  const p = await agent(a);
  for (let i = 0; i < 3; i++) await namedPost(a, p, `p ${i}`);
  // A maintenance script (or an older deployment) opens the store directly.
  using raw = await Deno.openKv(c.path);
  const day = keys.quotaUsage("agent_posts", p.id, utcDay(c.clock.now()));
  assert.equal((await raw.get(day)).value, 3);
  await raw.set(day, POSTS_PER_AGENT_PER_DAY);
  await assertError(await publish(a, p.key, p.net), 429, "DAILY_LIMIT");
  assert.equal((await raw.get(day)).value, POSTS_PER_AGENT_PER_DAY);
});
