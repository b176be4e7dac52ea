/**
 * Votes by different voters on different messages never wait for each other: no process
 * lock, and no key that two of them both check and write. Cast all at once, in one process
 * and across three processes on one store, they land without a single refused commit, and
 * no attempt runs again but those that waited for the embedded store's file lock, which
 * separate processes on one SQLite file take in turns (`busy`; a networked store has none);
 * counted by each process's kv/meter.ts meter. Every one of them counts.
 */
import assert from "node:assert/strict";
import { readStanding } from "../../domain/votes/mod.ts";
import {
  agents,
  anonymousPost,
  namedPost,
  publicKarma,
  type TestAgent,
  totals,
  voteRequest,
} from "../vote_helpers.ts";
import { getJson } from "../helpers.ts";
import { cluster, type Instance } from "./instances.ts";

/** Conflicts and retries of every instance, added up. */
async function contention(instances: Instance[]) {
  const all = await Promise.all(instances.map((i) => i.stats()));
  return all.reduce((s, x) => ({
    conflicts: s.conflicts + x.conflicts,
    retries: s.retries + x.retries,
    busy: s.busy + x.busy,
  }));
}

Deno.test("cross-process: independent votes never conflict, and all of them land", async (t) => {
  await using c = await cluster(3, { limitScale: 100 });
  const [a] = c.instances;
  const voters = await agents(a, 12);
  const authors = await agents(a, 12);
  const named = await Promise.all(authors.map((au, i) => namedPost(a, au, `target ${i}`)));
  const anon = await Promise.all(voters.map((_, i) => anonymousPost(a, `b target ${i}`)));

  /** Every voter votes at once: voter i on message i of `targets`, through `via(i)`. */
  async function burst(
    targets: string[],
    board: "named" | "b",
    via: (i: number) => Instance,
    oneProcess = false,
  ) {
    const before = await contention(c.instances);
    const answers = await Promise.all(
      voters.map((v: TestAgent, i) => voteRequest(via(i), v, targets[i], 1, board)),
    );
    for (const res of answers) assert.equal(res.status, 200, await res.text());
    const after = await contention(c.instances);
    const busy = after.busy - before.busy;
    assert.deepEqual(
      { conflicts: after.conflicts - before.conflicts, retries: after.retries - before.retries },
      { conflicts: 0, retries: busy },
    );
    if (oneProcess) assert.equal(busy, 0, "one process never waits for its own file lock");
  }

  await t.step("one process: 12 named votes at once, no conflict", async () => {
    await burst(named, "named", () => a, true);
  });

  await t.step("three processes: 12 `b` votes at once, no conflict", async () => {
    await burst(anon, "b", (i) => c.instances[i % 3]);
  });

  await t.step("three processes: 12 more named votes at once, no conflict", async () => {
    // Each voter now votes on the next author's message.
    const next = named.map((_, i) => named[(i + 1) % named.length]);
    await burst(next, "named", (i) => c.instances[i % 3]);
  });

  await t.step("every vote counts once: scores, karma, histories", async () => {
    for (const id of named) assert.deepEqual((await totals(a, id)).up, 2);
    for (const id of anon) assert.deepEqual((await totals(a, id, "b")).score, 1);
    for (const au of authors) {
      assert.equal(await publicKarma(c.instances[1], au.id), 2);
      assert.equal((await readStanding(c.kv, au.id)).received, 2);
    }
    for (const v of voters) {
      const history = await getJson(c.instances[2], `/votes?voter=${v.id}&limit=30`);
      assert.equal(history.body.items.length, 3);
    }
  });
});
