/**
 * A rules edit keeps the rules thread's search postings exact in its one commit: the lists
 * its new text leaves lose the thread, the lists it joins gain it, on the instance that
 * last saw the rules and on another instance whose idea of the current text is stale
 * (domain/rules/thread_hint.ts: a wrong guess costs a read round, never a wrong posting),
 * and when the change is too large for one commit (two commits); and an edit landing while a
 * deletion's purge rewrites a block the thread joins is not undone by that purge.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { editRules, noteRulesThread } from "../domain/rules/mod.ts";
import { blockSeqs, type SealedState, sealSearchBatches } from "../domain/search/mod.ts";
import { createThread } from "../domain/writes/mod.ts";
import { keys } from "../kv/keys.ts";
import { listTyped } from "../kv/read_many.ts";
import {
  agentHeaders,
  boardOn,
  getJson,
  idemKey,
  post,
  register,
  type TestBoard,
} from "./helpers.ts";
import { commitGate } from "./commit_wrapper.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";
import { runSweeps } from "../domain/upkeep/mod.ts";

/** The seqs of a term's sealed posting blocks. */
async function postings(board: TestBoard, term: string): Promise<number[]> {
  const out: number[] = [];
  for await (const e of listTyped(board.kv, { prefix: keys.searchPostings.range(term) })) {
    out.push(...blockSeqs(e.value));
  }
  return out;
}

/** Asserts which of `terms` list the rules thread (sealed blocks) and what search finds. */
async function assertIndexed(
  board: TestBoard,
  key: string,
  seq: number,
  threadId: string,
  listed: string[],
  unlisted: string[],
  searched = listed,
) {
  for (const t of listed) assert.ok((await postings(board, t)).includes(seq), `${t} lists it`);
  for (const t of unlisted) assert.ok(!(await postings(board, t)).includes(seq), `${t} does not`);
  for (const t of searched) {
    const found = await getJson(board, `/v1/search?q=${t}`, key);
    assert.equal(found.status, 200);
    const ids = (found.body.items as { id: string }[]).map((i) => i.id);
    assert.ok(ids.includes(threadId), `search for ${t} finds the rules thread`);
  }
}

Deno.test("rules edits keep the thread's sealed postings exact, on either instance", async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-rules-index-" });
  try {
    const clock = new ManualClock();
    const config = { searchBatch: 8, limitScale: 100 };
    await using a = await boardOn(`${dir}/board.kv`, clock, config, { rulesPost: true });
    const author = await register(a);
    const fillers: number[] = [];
    for (let i = 0; i < 20; i++) {
      const made = await createThread(
        a.deps,
        "named",
        { agentId: author.id, name: author.name, network: "10.9.0.1" },
        `rules-index-filler-${i}-0000`,
        { title: `Filler ${i}`, topic: "general", body: "filler words only" },
      );
      fillers.push(made.seq);
    }
    await sealSearchBatches(a.deps);
    const cur = (await a.kv.get(keys.rulesCurrent())).value!;
    const sealed = (await a.kv.get<SealedState>(keys.searchSealed())).value!;
    assert.ok(sealed.upTo >= cur.thread_seq, "the rules thread's batch is sealed");
    const seq = cur.thread_seq;
    const id = cur.thread_id;
    assert.ok((await postings(a, "flood")).includes(seq), "the first text is indexed");

    // Most of the text changes: more lists than one commit takes (two commits).
    await editRules(
      a.deps,
      { moderator: true },
      { text: "alpha bravo charlie" },
      "rules-ix-1-000000",
    );
    await assertIndexed(a, author.key, seq, id, ["alpha", "bravo", "charlie"], ["flood"]);
    // A small change on the instance that made the last edit: one commit.
    await editRules(
      a.deps,
      { moderator: true },
      { text: "alpha bravo delta" },
      "rules-ix-2-000000",
    );
    await assertIndexed(a, author.key, seq, id, ["alpha", "bravo", "delta"], ["charlie"]);

    // Another instance, opened at "alpha bravo delta"; the text then changes on the first,
    // so the second's guess of the current text is stale when it edits.
    await using b = await boardOn(`${dir}/board.kv`, clock, config, { rulesPost: true });
    await editRules(a.deps, { moderator: true }, { text: "alpha echo delta" }, "rules-ix-3-000000");
    await editRules(
      b.deps,
      { moderator: true },
      { text: "alpha foxtrot delta" },
      "rules-ix-4-000000",
    );
    await assertIndexed(b, author.key, seq, id, ["alpha", "foxtrot", "delta"], ["echo", "bravo"]);
    await assertIndexed(a, author.key, seq, id, ["alpha", "foxtrot", "delta"], ["echo", "bravo"]);
    // A hint at the wrong thread altogether (a store restored under a running instance),
    // in another sealed batch: blocks looked up there are dropped, the thread's own are used
    // (else the thread's batch block of "filler" would be cut down to the thread alone).
    assert.ok((await a.kv.get<SealedState>(keys.searchSealed())).value!.upTo >= seq + 9);
    noteRulesThread(b.kv, { thread_seq: seq + 9, text: "alpha foxtrot delta" });
    await editRules(
      b.deps,
      { moderator: true },
      { text: "alpha filler delta" },
      "rules-ix-5-000000",
    );
    // (Search pages are newest first: "filler" finds twenty newer threads first.)
    const terms = ["alpha", "filler", "delta"];
    await assertIndexed(a, author.key, seq, id, terms, ["foxtrot"], ["alpha", "delta"]);
    const upTo = (await a.kv.get<SealedState>(keys.searchSealed())).value!.upTo;
    const sealedFillers = fillers.filter((f) => f <= upTo);
    assert.deepEqual(
      (await postings(a, "filler")).sort((x, y) => x - y),
      [seq, ...sealedFillers].sort((x, y) => x - y),
    );
    const rules = await getJson(a, "/v1/rules", author.key);
    assert.equal(rules.body.text, "alpha filler delta");
    assert.equal(rules.body.revision, 6);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a rules edit landing while a deletion's purge is under way keeps the thread's postings", async () => {
  const gate = commitGate();
  await using board = await boardOn(":memory:", new ManualClock(), {
    moderatorKey: MOD_KEY,
    searchBatch: 2,
  }, { rulesPost: true, wrapKv: gate.wrap });
  const a = await register(board);
  // The rules thread (seq 1) and a post holding "zulu" (seq 2) share one sealed batch.
  const zulu = await post(board, a.key, { title: "Zulu", body: "zulu words" });
  await post(board, a.key, { title: "Other", body: "other words" });
  await runSweeps(board.deps);
  gate.holdCommit(2); // the deletion's commit, then its purge's, which takes "zulu"'s block
  const deleting = board.request(`/v1/posts/${zulu.id}`, {
    method: "DELETE",
    headers: agentHeaders(a.key, { "content-type": "application/json" }),
    body: "{}",
  });
  await gate.reached;
  // Meanwhile the rules come to hold "zulu": the rules thread joins that block.
  const text = "Be kind. Zulu time is used.";
  const edit = await modRequest(board, "PUT", "/mod/rules", { text }, idemKey());
  assert.equal(edit.status, 200, await edit.text());
  gate.release();
  assert.equal((await deleting).status, 200);
  const found = await getJson(board, "/v1/search?q=zulu", a.key);
  assert.deepEqual(found.body.items.map((i: { seq: number }) => i.seq), [1]);
  assert.deepEqual(await postings(board, "zulu"), [1]);
});
