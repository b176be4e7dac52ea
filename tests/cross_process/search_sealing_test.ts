/**
 * Search across processes: three service instances on one KV file publish at once, and the
 * instance whose post completes a search batch seals it while the others go on publishing
 * and sealing theirs. Every batch ends sealed, and a search through any instance finds
 * every message exactly once, from the blocks and from the tail. The processes share no
 * commit lock file (as on Deno Deploy), so that their sealing commits race. A rules edit in
 * one process is not undone by another's purge rewriting the same posting block.
 */
import assert from "node:assert/strict";
import { keys } from "../../kv/keys.ts";
import { agentHeaders, getJson, idemKey, post, type TestBoard } from "../helpers.ts";
import { agents } from "../vote_helpers.ts";
import { MOD_KEY, modRequest } from "../pin_helpers.ts";
import { ensureRulesPost } from "../../domain/rules/mod.ts";
import { cluster, whileHeld } from "./instances.ts";

/** Every id a search for `q` through `on` answers, following `next_before` to the end. */
async function searchAll(on: TestBoard, key: string, q: string): Promise<string[]> {
  const ids: string[] = [];
  let before: number | null = null;
  do {
    const r = await getJson(
      on,
      `/v1/search?q=${q}&limit=30${before === null ? "" : `&before=${before}`}`,
      key,
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    ids.push(...(r.body.items as { id: string }[]).map((m) => m.id));
    before = r.body.next_before;
  } while (before !== null);
  return ids;
}

Deno.test("cross-process: batches sealed by racing processes find every message once", async () => {
  const batch = 8;
  await using c = await cluster(3, { limitScale: 100, searchBatch: batch }, { turns: false });
  const writers = await agents(c.instances[0], 6);
  // 6 writers × 7 posts, sent at once through the three processes in turn: 42 messages.
  const made = await Promise.all(writers.map(async (w, i) => {
    const ids: { id: string; word: string }[] = [];
    for (let j = 0; j < 7; j++) {
      const word = `own${i}x${j}`;
      const on = c.instances[(i + j) % 3];
      const r = await post(
        on,
        w.key,
        { title: "sealed", body: `everyone ${word}` },
        undefined,
        w.net,
      );
      ids.push({ id: r.id, word });
    }
    return ids;
  }));
  const all = made.flat();
  const head = (await c.kv.get(keys.boardHeads("named"))).value!.seq;
  const sealed = (await c.kv.get(keys.searchSealed())).value;
  assert.equal(sealed?.upTo, Math.floor(head / batch) * batch, "every complete batch is sealed");
  for (const on of c.instances) {
    const found = await searchAll(on, writers[0].key, "everyone");
    assert.equal(found.length, all.length, `${on.name}: each message once`);
    assert.deepEqual(new Set(found), new Set(all.map((m) => m.id)));
  }
  for (const [i, m] of all.entries()) {
    if (i % 5 !== 0) continue;
    assert.deepEqual(await searchAll(c.instances[i % 3], writers[1].key, m.word), [m.id]);
  }
});

Deno.test("cross-process: a rules edit landing while another process's purge takes a block keeps the thread in it", async () => {
  await using c = await cluster(2, { moderatorKey: MOD_KEY, searchBatch: 2 });
  const [a, b] = c.instances;
  const rules = await ensureRulesPost(c.deps); // seq 1, as a start makes it
  const [w] = await agents(a, 1);
  // Process A learns where the rules thread is, as every start of the service does.
  assert.equal((await getJson(a, "/v1/rules", w.key)).status, 200);
  // The rules thread and a post holding "zulu" share one sealed batch.
  const zulu = await post(a, w.key, { title: "Zulu", body: "zulu words" });
  await post(a, w.key, { title: "Other", body: "other words" });
  const deleting = () =>
    a.request(`/v1/posts/${zulu.id}`, {
      method: "DELETE",
      headers: agentHeaders(w.key, { "content-type": "application/json" }),
      body: "{}",
    });
  // A's purge is held before its commit, which drops the block "zulu" holds, while process B
  // edits the rules to hold "zulu": the thread joins that very block.
  const deleted = await whileHeld(a, ["search_postings"], deleting, async () => {
    const edit = await modRequest(b, "PUT", "/mod/rules", { text: "Zulu time." }, idemKey());
    assert.equal(edit.status, 200, await edit.text());
  });
  assert.equal(deleted.status, 200, await deleted.text());
  for (const on of [a, b]) {
    const found = (await getJson(on, "/v1/search?q=zulu", w.key)).body;
    assert.deepEqual(found.items.map((i: { id: string }) => i.id), [rules.thread_id]);
  }
});
