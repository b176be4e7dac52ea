/**
 * The checks after every restart of the crash harness (the server is up and idle): every
 * acknowledged write is there with its seq, seqs are never reused, no reply outlives its
 * root, deleted threads stay gone and their purges finished, unanswered writes are all
 * or nothing, and the quota counters match the writes they count.
 */
import assert from "node:assert/strict";
import { utcDay } from "../../domain/clock.ts";
import { idempotencyRecordOf } from "../../domain/idempotency.ts";
import { type BoardHead, claimedSeq, type MessageRecord } from "../../domain/board/mod.ts";
import { networkRecordOf, networkWriteKey } from "../../domain/limits/mod.ts";
import { keys } from "../../kv/keys.ts";
import { listTyped } from "../../kv/read_many.ts";
import type { ServerProcess } from "../e2e/server_process.ts";
import type { CrashRun, Pending } from "./crash_harness.ts";

/** Runs every check; throws on the first broken invariant. */
export async function verifyAfterRestart(
  run: CrashRun,
  s: ServerProcess,
  round: number,
): Promise<void> {
  const unresolved = await resolvePending(run, s);
  const kv = await Deno.openKv(run.kvPath);
  try {
    const messages = await checkStore(run, kv);
    await checkUnresolved(run, kv, unresolved);
    await checkQuotas(run, kv, messages.size);
  } finally {
    kv.close();
  }
  await checkOverHttp(run, s, round);
}

/** Unanswered writes: a lookup by their Idempotency-Key finds them (then they landed) or not. */
async function resolvePending(run: CrashRun, s: ServerProcess): Promise<Pending[]> {
  const still: Pending[] = [];
  for (const p of run.pending) {
    const res = await fetch(`${s.url}/v1/me/publications/lookup`, {
      headers: { ...run.auth(p.agent), "idempotency-key": p.idem },
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    if (!body.found) {
      still.push(p);
      continue;
    }
    run.fig.foundAfterCrash++;
    const pub = body.publication;
    run.record({
      kind: p.kind,
      id: pub.id,
      seq: pub.seq,
      rootId: p.rootId ?? pub.id,
      agent: p.agent,
      idem: p.idem,
    });
  }
  run.pending = [];
  return still;
}

/** The store itself: head, purges, summaries, index copies, roots, deletes, landed writes. */
async function checkStore(run: CrashRun, kv: Deno.Kv): Promise<Map<number, MessageRecord>> {
  const head = (await kv.get<BoardHead>(keys.boardHeads("named"))).value;
  assert.ok(head, "board head exists");
  assert.deepEqual(head.purging, [], "every purge finished at start");
  for await (const _ of kv.list({ prefix: keys.purges.range() })) {
    assert.fail("a purge mark survived the restart");
  }
  const messages = new Map<number, MessageRecord>();
  const byId = new Map<string, MessageRecord>();
  for await (const e of kv.list<MessageRecord>({ prefix: keys.messages.range("named") })) {
    const m = e.value;
    assert.equal(m.seq, e.key[2], "summary stored under its seq");
    assert.ok(!byId.has(m.id), `id ${m.id} stored twice`);
    assert.ok(m.seq <= head.seq, "no seq beyond the head");
    const owner = run.seqOwner.get(m.seq);
    assert.ok(owner === undefined || owner === m.id, `seq ${m.seq} reused`);
    messages.set(m.seq, m);
    byId.set(m.id, m);
  }
  for (const m of messages.values()) {
    const [seqById, body, copy, byRootId] = await kv.getMany([
      keys.messageSeqById("named", m.id),
      keys.bodies("named", m.seq),
      m.kind === "root"
        ? keys.roots("named", m.seq)
        : keys.repliesByRoot("named", m.root_seq, m.seq),
      m.kind === "root"
        ? keys.roots("named", m.seq)
        : keys.repliesByRootId("named", m.root_id, m.seq),
    ]);
    // Only an id that does not carry its seq is in the id index.
    const indexed = claimedSeq(m.id) === m.seq ? null : m.seq;
    assert.equal(seqById.value, indexed, `id index of ${m.seq}`);
    assert.equal(typeof body.value, "object", `body of ${m.seq}`);
    assert.equal(copy.value, 0, `listing entry of ${m.seq}`);
    const whole = m.kind === "reply" && !m.is_truncated;
    assert.equal(byRootId.value, whole ? 1 : 0, `listing entry by root id of ${m.seq}`);
    if (m.kind === "reply") {
      const root = messages.get(m.root_seq);
      assert.ok(root?.kind === "root" && root.id === m.root_id, `reply ${m.seq} has its root`);
    }
  }
  for await (const e of kv.list<number>({ prefix: ["message_seq_by_id", "named"] })) {
    assert.equal(messages.get(e.value)?.id, e.key[2], "id index points at a live message");
  }
  // Deletes: answered ones are gone with every reply; unanswered ones all or nothing.
  for (const rootId of [...run.deleted, ...run.maybeDeleted]) {
    if (byId.has(rootId)) {
      assert.ok(!run.deleted.has(rootId), `deleted root ${rootId} is back`);
      continue;
    }
    for (const m of messages.values()) {
      assert.notEqual(m.root_id, rootId, `reply ${m.seq} outlived its deleted root`);
    }
    run.deleted.add(rootId);
    run.maybeDeleted.delete(rootId);
  }
  // Every landed write not under a deleted root is there with its seq.
  for (const l of run.landed.values()) {
    if (run.deleted.has(l.rootId)) continue;
    const m = byId.get(l.id);
    assert.ok(m, `landed ${l.kind} ${l.id} (seq ${l.seq}) is missing`);
    assert.equal(m.seq, l.seq, `landed ${l.id} kept its seq`);
    run.fig.recordsVerified++;
  }
  return messages;
}

/** Writes no lookup found: nothing of them exists (only a reply purged with its root may). */
async function checkUnresolved(run: CrashRun, kv: Deno.Kv, still: Pending[]): Promise<void> {
  for (const p of still) {
    const rec = idempotencyRecordOf(
      (await kv.get(keys.idempotency("named", run.agents[p.agent].id, p.idem))).value,
      "named",
    );
    if (!rec) {
      run.fig.provedAbsent++;
      continue;
    }
    assert.ok(p.rootId && run.deleted.has(p.rootId), "only a purged reply is not found");
    assert.equal((await kv.get(keys.messageSeqById("named", rec.id))).value, null);
  }
}

/** Quota counters match the writes they count; the retained counter matches the store. */
async function checkQuotas(run: CrashRun, kv: Deno.Kv, stored: number): Promise<void> {
  const perAgentDay = new Map<string, number>();
  for (const [i, a] of run.agents.entries()) {
    for await (const e of listTyped(kv, { prefix: keys.idempotency.range("named", a.id) })) {
      const k = `${i}:${utcDay(idempotencyRecordOf(e.value, "named")!.created_at)}`;
      perAgentDay.set(k, (perAgentDay.get(k) ?? 0) + 1);
    }
  }
  // The network's record counts its publications of the newest day it published on.
  const network = networkRecordOf((await kv.get(networkWriteKey("127.0.0.1"))).value);
  let total = 0;
  for (const [k, count] of perAgentDay) {
    const [i, day] = k.split(":").map(Number);
    const used = await kv.get<number>(keys.quotaUsage("agent_posts", run.agents[i].id, day));
    assert.equal(used.value, count, `agent ${i} quota on day ${day}`);
    if (day === network.day) total += count;
  }
  assert.equal(network.posts, total, "network counter matches the writes");
  const retained = (await kv.get<number>(keys.counters("posts"))).value ?? 0;
  assert.equal(retained, stored, "retained counter matches the messages stored");
}

/** Through HTTP: the newest writes and a sample of older ones, and deleted threads. */
async function checkOverHttp(run: CrashRun, s: ServerProcess, round: number): Promise<void> {
  const live = [...run.landed.values()].filter((l) => !run.deleted.has(l.rootId));
  const sample = live.filter((l) => l.seq > run.fig.maxSeq - 200 || Math.random() < 0.05);
  for (const l of sample.slice(-150)) {
    const path = l.kind === "root"
      ? `/v1/posts/${l.id}?limit=1`
      : `/v1/posts/${l.rootId}?limit=1&before=${l.seq + 1}`;
    const r = await fetch(`${s.url}${path}`, { headers: run.auth(l.agent) });
    const body = await r.json();
    assert.equal(r.status, 200, JSON.stringify(body));
    if (l.kind === "root") assert.equal(body.post.seq, l.seq);
    else assert.equal(body.replies.items[0]?.id, l.id, `reply ${l.seq} readable in its thread`);
    run.fig.httpReads++;
  }
  for (const rootId of [...run.deleted].slice(-20)) {
    const r = await fetch(`${s.url}/v1/posts/${rootId}`, { headers: run.auth(0) });
    assert.equal(r.status, 404, `deleted thread ${rootId} is visible again (round ${round})`);
    await r.body?.cancel();
    run.fig.httpReads++;
  }
}
