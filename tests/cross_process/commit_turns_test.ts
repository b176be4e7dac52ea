/**
 * Commit turns across processes on one store file (kv/commit_turns.ts): a process's commit
 * waits for the lock file beside the store while another process holds it, and lands once it
 * is let go; many commits from three processes at once never find the store's own write lock
 * taken (no busy retry, counted by each process's kv/meter.ts meter), and every one counts.
 * Posts, which all rewrite the board head, run whole in their process's turn: none runs again
 * because another process's post changed the head.
 */
import assert from "node:assert/strict";
import { commitLockPath, LOCK_WAIT_MS } from "../../kv/commit_turns.ts";
import { post } from "../helpers.ts";
import { agents, namedPost, type TestAgent, totals, voteRequest } from "../vote_helpers.ts";
import { cluster, type Instance } from "./instances.ts";

/** True once a process waits (blocked) for the flock on `path` (Linux: /proc/locks). */
async function someoneWaitsFor(path: string): Promise<boolean> {
  const { ino } = await Deno.stat(path);
  const locks = await Deno.readTextFile("/proc/locks");
  return locks.split("\n").some((l) => l.includes("->") && l.includes(`:${ino} `));
}

/** Polls `cond` until it holds (at most `ms`); answers whether it did. */
async function eventually(cond: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}

/** Busy retries (the store's write lock found taken) of every instance, added up. */
async function busy(instances: Instance[]): Promise<number> {
  const all = await Promise.all(instances.map((i) => i.stats()));
  return all.reduce((n, s) => n + s.busy, 0);
}

/** Attempts run again (a refused commit or a busy store) of every instance, added up. */
async function retries(instances: Instance[]): Promise<number> {
  const all = await Promise.all(instances.map((i) => i.stats()));
  return all.reduce((n, s) => n + s.retries, 0);
}

Deno.test("cross-process: a commit waits its turn while another process holds the commit lock", async () => {
  await using c = await cluster(2, { limitScale: 100 });
  const [a, b] = c.instances;
  const [voter, author] = await agents(a, 2);
  const target = await namedPost(a, author, "turn target");

  // This process takes the lock, as a process in its turn does.
  const lockFile = await Deno.open(commitLockPath(c.path), { read: true, write: true });
  try {
    await lockFile.lock(true);
    const answer = voteRequest(b, voter, target, 1);
    assert.ok(
      await eventually(() => someoneWaitsFor(commitLockPath(c.path))),
      "process B's commit waits for the lock",
    );
    assert.equal((await totals(a, target)).up, 0, "nothing landed while the lock was held");
    await lockFile.unlock();
    const res = await answer;
    assert.equal(res.status, 200, await res.text());
    assert.equal((await totals(a, target)).up, 1);
  } finally {
    lockFile.close();
  }
});

Deno.test("cross-process: a holder that never lets go (a frozen process) does not stop the others' writes", async () => {
  await using c = await cluster(2, { limitScale: 100 });
  const [a, b] = c.instances;
  const voters = await agents(a, 3);
  const [author] = await agents(a, 1);
  const target = await namedPost(a, author, "frozen holder target");
  const path = commitLockPath(c.path);

  // This process takes the lock and keeps it, as a process stopped in its turn does.
  const frozen = await Deno.open(path, { read: true, write: true });
  try {
    await frozen.lock(true);
    const first = await voteRequest(b, voters[0], target, 1);
    assert.equal(first.status, 200, await first.text());
    // The lock is still asked for, so the next write goes without waiting for it again (far
    // less than the LOCK_WAIT_MS the first one waited).
    const started = performance.now();
    const second = await voteRequest(b, voters[1], target, 1);
    assert.equal(second.status, 200, await second.text());
    const took = performance.now() - started;
    assert.ok(took < LOCK_WAIT_MS / 2, `the second write waited ${Math.round(took)} ms`);
    assert.equal((await totals(a, target)).up, 2);
    assert.ok(await someoneWaitsFor(path), "process B still asks for the lock");
    await frozen.unlock();
    // The lock B asked for came when no turn waited for it: B lets it go at once.
    assert.ok(await eventually(async () => !(await someoneWaitsFor(path))), "B's request ended");
    await frozen.lock(true);
    const third = voteRequest(b, voters[2], target, 1);
    assert.ok(await eventually(() => someoneWaitsFor(path)), "B waits for its turn again");
    await frozen.unlock();
    assert.equal((await third).status, 200);
    assert.equal((await totals(a, target)).up, 3);
  } finally {
    frozen.close();
  }
});

Deno.test("cross-process: commits from three processes at once take turns, never poll the store", async () => {
  await using c = await cluster(3, { limitScale: 100 });
  const [a] = c.instances;
  const voters = await agents(a, 12);
  const authors = await agents(a, 12);
  const targets = await Promise.all(authors.map((au, i) => namedPost(a, au, `turns ${i}`)));
  const before = await busy(c.instances);
  // Every voter votes on every third message at once, through the three processes in turn.
  const casts = voters.flatMap((v: TestAgent, i) =>
    [0, 1, 2].map((k) => ({ v, target: targets[(i + 4 * k) % targets.length], k }))
  );
  const answers = await Promise.all(
    casts.map(({ v, target, k }, n) => voteRequest(c.instances[(n + k) % 3], v, target, 1)),
  );
  for (const res of answers) assert.equal(res.status, 200, await res.text());
  assert.equal(await busy(c.instances) - before, 0, "no commit found the store's lock taken");
  for (const id of targets) assert.equal((await totals(a, id)).up, 3);
});

Deno.test("cross-process: posts from three processes at once take turns, none runs again", async () => {
  await using c = await cluster(3, { limitScale: 100 });
  const authors = await agents(c.instances[0], 12);
  const before = await retries(c.instances);
  // Every author posts three times at once, through the three processes in turn.
  const receipts = await Promise.all(
    authors.flatMap((a, i) =>
      [0, 1, 2].map((k) =>
        post(c.instances[(i + k) % 3], a.key, { title: `Turn ${k}` }, undefined, a.net)
      )
    ),
  );
  assert.equal(await retries(c.instances) - before, 0, "no post ran again");
  const seqs = receipts.map((r) => r.seq).sort((x, y) => x - y);
  assert.deepEqual(seqs, seqs.map((_, i) => seqs[0] + i), "one sequence, no gap, no repeat");
});
