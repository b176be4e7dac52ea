/**
 * Posting blocks (domain/search/postings.ts): search (domain/search/scan.ts) reads blocks
 * exactly — cursors inside a block, range reads over blocks, budget-cut pages — with
 * removals, re-indexing, blocks of several messages as older stores hold them, and
 * postings stored one per row before blocks.
 */
import assert from "node:assert/strict";
import { createThread, removeMessage } from "../domain/board/posts.ts";
import {
  BLOCK_SPAN,
  blockSeqs,
  reindexMessage,
  unindexMessage,
} from "../domain/search/postings.ts";
import type { MessageRecord } from "../domain/board/messages.ts";
import { keys } from "../kv/keys.ts";
import { transact } from "../kv/tx.ts";
import { register, type TestBoard, testBoard } from "./helpers.ts";
import { fourWords, pageThrough } from "./search_helpers.ts";

interface Made {
  id: string;
  seq: number;
  words: string[];
  topic: string;
}

/**
 * 90 messages published all at once: "gamma" in every 3rd,
 * "delta" in every 2nd, "alpha" in all but every 5th, "beta" in 7 of every 10; topics
 * alternate between "ops" and "general".
 */
async function concurrentBoard(board: TestBoard): Promise<Made[]> {
  const a = await register(board);
  return await Promise.all(Array.from({ length: 90 }, async (_, i) => {
    const { words, topic } = fourWords(i);
    const r = await createThread(
      board.deps,
      "named",
      { agentId: a.id, name: a.name, network: "10.77.0.1" },
      `blocks-test-${i}-${crypto.randomUUID()}`,
      { title: "t", topic, body: words.join(" ") },
    );
    return { id: r.id, seq: r.seq, words, topic };
  }));
}

/** The stored blocks of a posting list, in key order. */
async function blocks(board: TestBoard, prefix: Deno.KvKey) {
  const out: { first: number; seqs: number[] }[] = [];
  for await (const e of board.kv.list({ prefix })) {
    out.push({ first: e.key[e.key.length - 1] as number, seqs: blockSeqs(e.key, e.value) });
  }
  return out;
}

/**
 * Rewrites a posting list as older stores hold it: consecutive seqs share a block (up to
 * BLOCK_SPAN seqs from its first), keyed by the block's first seq.
 */
async function shareBlocks(board: TestBoard, prefix: Deno.KvKey): Promise<void> {
  const seqs = (await blocks(board, prefix)).flatMap((b) => b.seqs);
  for (const s of seqs) await board.kv.delete([...prefix, s]);
  for (let i = 0; i < seqs.length;) {
    let j = i;
    while (j < seqs.length && seqs[j] < seqs[i] + BLOCK_SPAN && j - i < 8) j++;
    await board.kv.set([...prefix, seqs[i]], seqs.slice(i, j));
    i = j;
  }
}

/**
 * Pages through a query (limit 5: tests/search_helpers.ts) and asserts it returns exactly the
 * messages of `all` holding every word (and in `topic`), in scan order, once each.
 */
async function assertFinds(
  board: TestBoard,
  all: Made[],
  words: string[],
  direction: "before" | "after",
  options: { topic?: string; budget?: number } = {},
): Promise<void> {
  const { topic, budget } = options;
  const { got } = await pageThrough(board, { q: words.join(" "), topic }, direction, budget);
  const seqs = all.filter((m) =>
    words.every((w) => m.words.includes(w)) && (topic === undefined || m.topic === topic)
  ).map((m) => m.seq).sort((a, b) => a - b);
  // Paging forward starts after seq 1 (pageThrough), as a poller that saw the first would.
  assert.deepEqual(got, direction === "after" ? seqs.filter((s) => s > 1) : seqs.reverse());
}

Deno.test("posting blocks: paging is exact in both directions, whole and budget-cut", async (t) => {
  await using board = await testBoard({ limitScale: 100 });
  const all = await concurrentBoard(board);
  // Some lists as older stores hold them (blocks of several messages), the rest one per row.
  for (const word of ["alpha", "gamma"]) await shareBlocks(board, keys.searchPostingsPrefix(word));
  const queries: { words: string[]; topic?: string }[] = [
    { words: ["gamma"] },
    { words: ["alpha"] },
    { words: ["gamma", "delta"] },
    { words: ["alpha", "beta"], topic: "ops" },
    { words: ["gamma", "delta", "alpha", "beta"] },
  ];
  for (const { words, topic } of queries) {
    for (const direction of ["before", "after"] as const) {
      for (const budget of [undefined, 120, 40]) {
        await t.step(
          `${words.join(" ")}${topic ? ` in ${topic}` : ""}, ${direction}, budget ${
            budget ?? "default"
          }`,
          async () => {
            await assertFinds(board, all, words, direction, { topic, budget });
          },
        );
      }
    }
  }
});

Deno.test("posting blocks: a removed message leaves its block; the last one removes the row", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const all = await concurrentBoard(board);
  const prefix = keys.searchPostingsPrefix("delta");
  await shareBlocks(board, prefix);
  const shared = (await blocks(board, prefix)).find((b) => b.seqs.length > 2)!;
  assert.ok(shared, "a block of several messages");
  const [firstSeq, middleSeq] = [shared.seqs[0], shared.seqs[1]];
  const bySeq = (s: number) => all.find((m) => m.seq === s)!;
  await removeMessage(board.deps, "named", bySeq(middleSeq).id, null);
  let after = (await blocks(board, prefix)).find((b) => b.first === shared.first)!;
  assert.deepEqual(after.seqs, shared.seqs.filter((s) => s !== middleSeq));
  // Removing the block's first seq keeps its key: the rest stay where they were.
  await removeMessage(board.deps, "named", bySeq(firstSeq).id, null);
  after = (await blocks(board, prefix)).find((b) => b.first === shared.first)!;
  assert.deepEqual(after.seqs, shared.seqs.filter((s) => s !== middleSeq && s !== firstSeq));
  for (const s of after.seqs) await removeMessage(board.deps, "named", bySeq(s).id, null);
  assert.equal((await blocks(board, prefix)).find((b) => b.first === shared.first), undefined);
  const gone = new Set(shared.seqs);
  const rest = all.filter((m) => !gone.has(m.seq));
  await assertFinds(board, rest, ["delta"], "before");
  await assertFinds(board, rest, ["delta", "gamma"], "after");
});

Deno.test("posting blocks: a message indexed again goes back into the block that covers it", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const all = await concurrentBoard(board);
  const prefix = keys.searchPostingsPrefix("delta");
  await shareBlocks(board, prefix);
  const shared = (await blocks(board, prefix)).find((b) => b.seqs.length > 2)!;
  const seq = shared.seqs[1];
  const m = (await board.kv.get<MessageRecord>(keys.messages("named", seq))).value!;
  const body = (await board.kv.get<string>(keys.bodies("named", seq))).value!;
  await transact(board.kv, (tx) => unindexMessage(tx, m));
  assert.ok(!(await blocks(board, prefix)).flatMap((b) => b.seqs).includes(seq));
  await transact(board.kv, (tx) => reindexMessage(tx, m, body));
  const back = (await blocks(board, prefix)).find((b) => b.first === shared.first)!;
  assert.deepEqual(back.seqs, shared.seqs, "the same row, in order");
  await assertFinds(board, all, ["delta"], "before");
});

Deno.test("posting blocks: a message published alone and indexed again keeps a block of its own", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const all = await concurrentBoard(board);
  const a = await register(board);
  const alone = await createThread(
    board.deps,
    "named",
    { agentId: a.id, name: a.name, network: "10.77.0.2" },
    `blocks-alone-${crypto.randomUUID()}`,
    { title: "t", topic: "ops", body: "delta alpha" },
  );
  const prefix = keys.searchPostingsPrefix("delta");
  const m = (await board.kv.get<MessageRecord>(keys.messages("named", alone.seq))).value!;
  await transact(board.kv, (tx) => unindexMessage(tx, m));
  await transact(board.kv, (tx) => reindexMessage(tx, m, "delta alpha"));
  const stored = await blocks(board, prefix);
  // The block before it (within reach, of other messages) is left alone.
  assert.deepEqual(stored.at(-1), { first: alone.seq, seqs: [alone.seq] });
  assert.ok(stored.at(-2)!.first + BLOCK_SPAN > alone.seq, "a block before it was within reach");
  const withAlone = [...all, {
    id: alone.id,
    seq: alone.seq,
    words: ["delta", "alpha"],
    topic: "ops",
  }];
  await assertFinds(board, withAlone, ["delta", "alpha"], "before");
});

Deno.test("posting blocks: postings stored one per row before blocks are searched and removed", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const all = await concurrentBoard(board);
  // Rewrite "beta" as a store made before blocks kept it: the value 0 at each seq's key.
  const prefix = keys.searchPostingsPrefix("beta");
  const old = await blocks(board, prefix);
  for (const b of old) {
    await board.kv.delete([...prefix, b.first]);
    for (const s of b.seqs) await board.kv.set(keys.searchPostings("beta", s), 0);
  }
  for (const direction of ["before", "after"] as const) {
    await assertFinds(board, all, ["beta", "alpha"], direction, { budget: 40 });
  }
  const victim = all.find((m) => m.words.includes("beta"))!;
  await removeMessage(board.deps, "named", victim.id, null);
  assert.equal((await board.kv.get(keys.searchPostings("beta", victim.seq))).versionstamp, null);
  const rest = all.filter((m) => m !== victim);
  await assertFinds(board, rest, ["beta"], "before");
});
