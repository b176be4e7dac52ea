/**
 * A message's body entry holds the text after its summary's preview and its search terms
 * (domain/board/messages.ts, `StoredBody`); a store written before, with whole-text bodies
 * and term lists kept apart, reads and searches the same without a migration.
 */
import assert from "node:assert/strict";
import type { MessageRecord, StoredBody } from "../domain/board/mod.ts";
import { editRules } from "../domain/rules/mod.ts";
import { sealSearchBatches, storedTerms, termFilterOf } from "../domain/search/mod.ts";
import { PREVIEW_CODE_POINTS } from "../domain/text.ts";
import { keys } from "../kv/keys.ts";
import {
  agentHeaders,
  getJson,
  idemKey,
  jsonInit,
  post,
  register,
  reply,
  testBoard,
  warnings,
} from "./helpers.ts";
import { prepareService } from "../routes/service.ts";

/** A body longer than the preview, with a word only its tail holds. */
function longBody(word: string): string {
  return `${"lorem ipsum ".repeat(Math.ceil(PREVIEW_CODE_POINTS / 12))}é ${word}`;
}

async function searchSeqs(board: Awaited<ReturnType<typeof testBoard>>, key: string, q: string) {
  const { status, body } = await getJson(board, `/v1/search?q=${q}`, key);
  assert.equal(status, 200, JSON.stringify(body));
  return body.items.map((i: { seq: number }) => i.seq);
}

Deno.test("body entry: the text after the preview and the terms, one entry", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const text = longBody("quetzal");
  const root = await post(board, a.key, { title: "Birds", body: text, topic: "ops" });
  const stored = (await board.kv.get<StoredBody>(keys.bodies("named", root.seq))).value!;
  const summary = (await board.kv.get<MessageRecord>(keys.messages("named", root.seq))).value!;
  assert.equal(summary.preview + stored.rest, text);
  assert.equal(stored.rest, text.slice(summary.preview.length));
  const terms = storedTerms(stored)!;
  assert.ok(terms.terms.includes("birds") && terms.terms.includes("quetzal"));
  assert.equal(stored.topic, "ops");
  // Its term filter, for searches over the tail.
  const filter = (await board.kv.get(keys.searchFilters(root.seq))).value!;
  assert.deepEqual(filter, termFilterOf(terms.terms, "ops"));
  // No term list apart.
  assert.equal((await board.kv.get(keys.searchTermsByMessage(root.seq))).versionstamp, null);
  const thread = await getJson(board, `/v1/posts/${root.id}`, a.key);
  assert.equal(thread.body.post.body, text);
  const r = await reply(board, a.key, root.id, "short reply");
  const again = await getJson(board, `/v1/posts/${root.id}`, a.key);
  assert.equal(again.body.replies.items[0].body, "short reply");
  assert.deepEqual(
    (await board.kv.get<StoredBody>(keys.bodies("named", r.seq))).value,
    { rest: "", terms: "short reply", topic: "ops" },
  );
  // The anonymous board is not searched: its body entry holds the rest only.
  const res = await board.request(
    "/b/posts",
    jsonInit("POST", { title: "anon", body: text }, undefined, { "idempotency-key": idemKey() }),
  );
  const anon = await res.json();
  assert.equal(res.status, 201, JSON.stringify(anon));
  const anonStored = (await board.kv.get<StoredBody>(keys.bodies("b", anon.seq))).value!;
  assert.deepEqual(Object.keys(anonStored), ["rest"]);
  const read = await getJson(board, `/b/posts/${anon.id}`);
  assert.equal(read.body.post.body, text);
});

Deno.test("body entry: a store written before (whole text, terms apart) reads, searches and deletes", async () => {
  await using board = await testBoard({ searchBatch: 8 });
  const a = await register(board);
  const text = longBody("axolotl");
  const old = await post(board, a.key, { title: "Old", body: text, topic: "ops" });
  // Rewrite it as a store written before kept it: no term filter, and a sealed marker that
  // does not say from which message filters exist.
  const stored = (await board.kv.get<StoredBody>(keys.bodies("named", old.seq))).value!;
  await board.kv.atomic()
    .set(keys.bodies("named", old.seq), text)
    .set(keys.searchTermsByMessage(old.seq), storedTerms(stored)!)
    .delete(keys.searchFilters(old.seq))
    .set(keys.searchSealed(), { upTo: 0, batch: 8 })
    .commit();
  const thread = await getJson(board, `/v1/posts/${old.id}`, a.key);
  assert.equal(thread.body.post.body, text);
  // In the tail (not sealed), by its term list apart.
  assert.deepEqual(await searchSeqs(board, a.key, "axolotl"), [old.seq]);
  const others = [];
  for (let i = 0; i < 8; i++) others.push(await post(board, a.key, { body: `axolotl ${i}` }));
  await sealSearchBatches(board.deps);
  // Sealed: its batch's blocks were cut from both shapes.
  const sealed = (await board.kv.get<{ upTo: number }>(keys.searchSealed())).value!;
  assert.ok(sealed.upTo >= old.seq && sealed.upTo >= others[5].seq);
  const all = await searchSeqs(board, a.key, "axolotl");
  assert.deepEqual(all, [...others.map((o) => o.seq)].reverse().concat(old.seq).slice(0, 10));
  assert.deepEqual(await searchSeqs(board, a.key, "old+axolotl"), [old.seq]);
  // Deleting it removes the term list kept apart as well.
  const del = await board.request(`/v1/posts/${old.id}`, {
    method: "DELETE",
    headers: agentHeaders(a.key, { "idempotency-key": idemKey() }),
  });
  assert.equal(del.status, 200, await del.text());
  assert.equal((await board.kv.get(keys.searchTermsByMessage(old.seq))).versionstamp, null);
  assert.equal((await board.kv.get(keys.bodies("named", old.seq))).versionstamp, null);
  assert.deepEqual(await searchSeqs(board, a.key, "old+axolotl"), []);
});

Deno.test("body entry: the rules thread of a store written before is indexed again after an edit", async () => {
  await using board = await testBoard({}, { rulesPost: true });
  const a = await register(board);
  const cur = (await board.kv.get<{ thread_id: string; thread_seq: number }>(keys.rulesCurrent()))
    .value!;
  const seq = cur.thread_seq;
  const summary = (await board.kv.get<MessageRecord>(keys.messages("named", seq))).value!;
  const stored = (await board.kv.get<StoredBody>(keys.bodies("named", seq))).value!;
  const text = summary.preview + stored.rest;
  await board.kv.atomic()
    .set(keys.bodies("named", seq), text)
    .set(keys.searchTermsByMessage(seq), storedTerms(stored)!)
    .delete(keys.searchFilters(seq))
    .set(keys.searchSealed(), { upTo: 0, batch: 512 })
    .commit();
  await editRules(board.deps, { moderator: true }, { text: "Be kind to the okapi." }, idemKey());
  assert.equal((await board.kv.get(keys.searchTermsByMessage(seq))).versionstamp, null);
  assert.deepEqual(await searchSeqs(board, a.key, "okapi"), [seq]);
  const thread = await getJson(board, `/v1/posts/${cur.thread_id}`, a.key);
  assert.equal(thread.body.post.body, "Be kind to the okapi.");
});

Deno.test("a store written before sealed batches is told to the operator at start; others are not", async () => {
  await using board = await testBoard();
  await post(board, (await register(board)).key);
  assert.deepEqual(await warnings(() => prepareService(board.deps)), []);
  // Such a store kept a count per term (never read now).
  await board.kv.set(keys.searchTermCounts("axolotl"), 3);
  const told = await warnings(() => prepareService(board.deps));
  assert.equal(told.length, 1, JSON.stringify(told));
  assert.match(told[0], /written before sealed batches[\s\S]*docs\/search\.md[\s\S]*Older stores/);
});
