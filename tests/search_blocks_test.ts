/**
 * Sealed posting blocks (domain/search/postings.ts, domain/search/seal.ts): search reads
 * blocks and the tail of unsealed term lists exactly — cursors inside a block, range reads
 * over blocks, budget-cut pages, across the sealed marker — with removals, re-indexing,
 * and a removal racing a sealer.
 */
import assert from "node:assert/strict";
import { bodyText, type MessageRecord, type StoredBody } from "../domain/board/mod.ts";
import {
  blockSeqs,
  decodeBlock,
  encodeBlock,
  MAX_SEARCH_BATCH,
  reindexMessage,
  type SealedState,
  sealSearchBatches,
  unindexMessage,
} from "../domain/search/mod.ts";
import { createThread, removeMessage } from "../domain/writes/mod.ts";
import { keys } from "../kv/keys.ts";
import { listTyped } from "../kv/read_many.ts";
import { onCommit } from "../kv/versioned_kv.ts";
import { transact } from "../kv/tx.ts";
import { commitGate } from "./commit_wrapper.ts";
import { ManualClock } from "../domain/clock.ts";
import { boardOn, register, type TestBoard, testBoard } from "./helpers.ts";
import { fourWords, pageThrough } from "./search_helpers.ts";

interface Made {
  id: string;
  seq: number;
  words: string[];
  topic: string;
}

/** Publishes message `i` of the four-word corpus (tests/search_helpers.ts) as agent `a`. */
async function publishWords(
  deps: TestBoard["deps"],
  a: { id: string; name: string },
  i: number,
  label: string,
  network: string,
): Promise<Made> {
  const { words, topic } = fourWords(i);
  const r = await createThread(
    deps,
    "named",
    { agentId: a.id, name: a.name, network },
    `blocks-${label}-${i}-${crypto.randomUUID()}`,
    { title: "t", topic, body: words.join(" ") },
  );
  return { id: r.id, seq: r.seq, words, topic };
}

/**
 * 90 messages published all at once: "gamma" in every 3rd,
 * "delta" in every 2nd, "alpha" in all but every 5th, "beta" in 7 of every 10; topics
 * alternate between "ops" and "general". The messages that complete a batch seal it.
 */
async function concurrentBoard(board: TestBoard, count = 90): Promise<Made[]> {
  const a = await register(board);
  return await Promise.all(
    Array.from({ length: count }, (_, i) => publishWords(board.deps, a, i, "test", "10.77.0.1")),
  );
}

/** The stored blocks of a posting list, in key order. */
async function blocks(board: TestBoard, prefix: ReturnType<typeof keys.searchPostings.range>) {
  const out: { first: number; seqs: number[]; total: number }[] = [];
  for await (const e of listTyped(board.kv, { prefix })) {
    out.push({
      first: e.key[e.key.length - 1] as number,
      seqs: blockSeqs(e.value),
      total: decodeBlock(e.value).total,
    });
  }
  return out;
}

async function sealed(board: TestBoard): Promise<SealedState | null> {
  return (await board.kv.get<SealedState>(keys.searchSealed())).value;
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

Deno.test("sealed blocks: paging is exact in both directions, whole and budget-cut", async (t) => {
  for (const batch of [8, 32]) {
    await using board = await testBoard({ limitScale: 100, searchBatch: batch });
    const all = await concurrentBoard(board);
    await sealSearchBatches(board.deps); // a sealer that lost a race leaves it to the next
    assert.equal((await sealed(board))!.upTo, Math.floor(90 / batch) * batch);
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
            `batch ${batch}: ${words.join(" ")}${
              topic ? ` in ${topic}` : ""
            }, ${direction}, budget ${budget ?? "default"}`,
            async () => {
              await assertFinds(board, all, words, direction, { topic, budget });
            },
          );
        }
      }
    }
  }
});

Deno.test("sealed blocks: one per term and batch, holding exactly its messages, with running totals", async () => {
  await using board = await testBoard({ limitScale: 100, searchBatch: 8 });
  const all = await concurrentBoard(board, 40);
  await sealSearchBatches(board.deps);
  assert.deepEqual(await sealed(board), { upTo: 40, batch: 8, filters: 1 });
  for (const word of ["alpha", "beta", "gamma", "delta"]) {
    const stored = await blocks(board, keys.searchPostings.range(word));
    const holders = all.filter((m) => m.words.includes(word)).map((m) => m.seq).sort((a, b) =>
      a - b
    );
    let total = 0;
    const expected = [];
    for (let first = 1; first <= 40; first += 8) {
      const seqs = holders.filter((s) => s >= first && s < first + 8);
      if (!seqs.length) continue;
      total += seqs.length;
      expected.push({ first, seqs, total });
    }
    assert.deepEqual(stored, expected, word);
  }
  // The publish commit itself wrote the term list only: a message above the marker has no block.
  const a = await register(board);
  const extra = await createThread(
    board.deps,
    "named",
    { agentId: a.id, name: a.name, network: "10.77.0.3" },
    `blocks-extra-${crypto.randomUUID()}`,
    { title: "t", topic: "ops", body: "alpha" },
  );
  const stored = (await board.kv.get<StoredBody>(keys.bodies("named", extra.seq))).value;
  assert.deepEqual(stored, { rest: "", terms: "t alpha", topic: "ops" });
  assert.ok(
    !(await blocks(board, keys.searchPostings.range("alpha"))).some((b) =>
      b.seqs.includes(extra.seq)
    ),
  );
  await assertFinds(
    board,
    [...all, { ...extra, words: ["t", "alpha"], topic: "ops" }],
    ["alpha"],
    "before",
  );
});

Deno.test("sealed blocks: a removed message leaves its block; the last one removes the row", async () => {
  await using board = await testBoard({ limitScale: 100, searchBatch: 32 });
  const all = await concurrentBoard(board);
  await sealSearchBatches(board.deps);
  const prefix = keys.searchPostings.range("delta");
  const shared = (await blocks(board, prefix))[0];
  assert.ok(shared.seqs.length > 2, "a block of several messages");
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

Deno.test("sealed blocks: a message indexed again goes back into its batch's block", async () => {
  await using board = await testBoard({ limitScale: 100, searchBatch: 32 });
  const all = await concurrentBoard(board);
  await sealSearchBatches(board.deps);
  const prefix = keys.searchPostings.range("delta");
  const shared = (await blocks(board, prefix))[1];
  const seq = shared.seqs[1];
  const m = (await board.kv.get<MessageRecord>(keys.messages("named", seq))).value!;
  const body = bodyText(m, (await board.kv.get(keys.bodies("named", seq))).value);
  await transact(board.kv, (tx) => unindexMessage(tx, m, 32));
  assert.ok(!(await blocks(board, prefix)).flatMap((b) => b.seqs).includes(seq));
  await transact(board.kv, (tx) => reindexMessage(tx, m, body, 32));
  const back = (await blocks(board, prefix)).find((b) => b.first === shared.first)!;
  assert.deepEqual(back.seqs, shared.seqs, "the same row, in order");
  await assertFinds(board, all, ["delta"], "before");
  await assertFinds(board, all, ["delta", "beta"], "after");
});

Deno.test("sealed blocks: a removal while a batch is being sealed makes the sealer start over", async () => {
  const gate = commitGate();
  await using board = await boardOn(":memory:", new ManualClock(), {
    limitScale: 100,
    searchBatch: 8,
  }, { wrapKv: gate.wrap });
  // Published without the sealing that follows a batch's last message (another trigger seq).
  const publishing = { ...board.deps, config: { ...board.deps.config, searchBatch: 1_000_000 } };
  const a = await register(board);
  const made: Made[] = [];
  for (let i = 0; i < 8; i++) made.push(await publishWords(publishing, a, i, "race", "10.77.0.4"));
  assert.equal(await sealed(board), null);
  gate.holdCommit(1);
  const sealing = sealSearchBatches(board.deps);
  await gate.reached; // the sealer has read the batch's term lists and is committing blocks
  const victim = made.find((m) => m.words.includes("delta"))!;
  await removeMessage(board.deps, "named", victim.id, null);
  gate.release();
  assert.equal(await sealing, 1, "sealed once, after starting over");
  assert.deepEqual(await sealed(board), { upTo: 8, batch: 8, filters: 1 });
  const deltas = (await blocks(board, keys.searchPostings.range("delta"))).flatMap((b) => b.seqs);
  assert.ok(!deltas.includes(victim.seq), "the removed message is in no block");
  await assertFinds(board, made.filter((m) => m !== victim), ["delta"], "before");
});

Deno.test("sealed blocks: the post that completes a batch answers before its batch is sealed", async () => {
  const gate = commitGate();
  await using board = await boardOn(":memory:", new ManualClock(), {
    limitScale: 100,
    searchBatch: 8,
    backgroundSealing: true,
  }, { wrapKv: gate.wrap });
  const a = await register(board);
  const made: Made[] = [];
  const publish = async (i: number) =>
    made.push(await publishWords(board.deps, a, i, "background", "10.77.0.5"));
  for (let i = 0; i < 7; i++) await publish(i);
  gate.holdCommit(2); // the eighth post's own commit, then the sealing's first
  await publish(7);
  await gate.reached;
  assert.equal(await sealed(board), null, "answered while its batch is still being sealed");
  await assertFinds(board, made, ["delta"], "before"); // from the term lists meanwhile
  gate.release();
  for (let i = 0; i < 100 && (await sealed(board)) === null; i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.deepEqual(await sealed(board), { upTo: 8, batch: 8, filters: 1 });
  await assertFinds(board, made, ["delta"], "after");
});

Deno.test("sealed blocks: a batch with more blocks than one commit takes is sealed whole", async () => {
  await using board = await testBoard({ limitScale: 100, searchBatch: 8 });
  const a = await register(board);
  const made: Made[] = [];
  for (let i = 0; i < 8; i++) {
    // 40 words of its own per message: 320 blocks for the batch, more than one commit holds.
    const words = Array.from({ length: 40 }, (_, j) => `w${i}x${j}`);
    const r = await createThread(
      board.deps,
      "named",
      { agentId: a.id, name: a.name, network: "10.77.0.6" },
      `blocks-wide-${i}-${crypto.randomUUID()}`,
      { title: "t", topic: "ops", body: words.join(" ") },
    );
    made.push({ id: r.id, seq: r.seq, words: [...words, "t"], topic: "ops" });
  }
  assert.deepEqual(await sealed(board), { upTo: 8, batch: 8, filters: 1 });
  for (const m of made) {
    for (const word of [m.words[0], m.words[39]]) {
      assert.deepEqual(await blocks(board, keys.searchPostings.range(word)), [
        { first: 1, seqs: [m.seq], total: 1 },
      ]);
      await assertFinds(board, made, [word], "before");
    }
  }
  assert.equal((await blocks(board, keys.searchPostings.range("t")))[0].seqs.length, 8);
});

Deno.test("sealed blocks: a batch sealed in several passes stores what one pass stores", async () => {
  // Two batches of 8 messages, 30 words each (shared and own), sealed by explicit calls.
  const seal = async (listsPerPass: number) => {
    const board = await testBoard({ limitScale: 100, searchBatch: 8 });
    const publishing = { ...board.deps, config: { ...board.deps.config, searchBatch: 1_000_000 } };
    const a = await register(board);
    for (let i = 0; i < 16; i++) {
      const words = Array.from({ length: 30 }, (_, j) => j % 3 === 0 ? `common${j}` : `w${i}x${j}`);
      await createThread(
        publishing,
        "named",
        { agentId: a.id, name: a.name, network: "10.77.0.7" },
        `blocks-passes-${i}-${crypto.randomUUID()}`,
        { title: "passes", topic: i % 2 ? "ops" : "general", body: words.join(" ") },
      );
    }
    // The blocks each commit of the sealing writes: a pass holds only its own lists.
    const commits: number[] = [];
    sealing = (mutated) => {
      const blocks = mutated.filter((k) => k[0] === keys.searchPostings.range()[0]).length;
      if (blocks > 0) commits.push(blocks);
    };
    assert.equal(await sealSearchBatches(board.deps, listsPerPass), 2);
    sealing = undefined;
    const stored: string[] = [];
    for (const prefix of [keys.searchPostings.range(), keys.searchTopicPostings.range()]) {
      for await (const e of listTyped(board.kv, { prefix })) {
        const { total } = decodeBlock(e.value);
        stored.push(JSON.stringify([e.key, blockSeqs(e.value), total]));
      }
    }
    await board[Symbol.asyncDispose]();
    return { stored, commits };
  };
  let sealing: ((mutated: Deno.KvKey[]) => void) | undefined;
  onCommit((mutated) => sealing?.(mutated));
  const whole = await seal(1_000_000);
  assert.ok(whole.stored.length > 300, "the batches hold more lists than a pass of 7");
  assert.equal(whole.commits.length, 2, "one pass, one commit per batch");
  const passes = await seal(7);
  assert.deepEqual(passes.stored, whole.stored);
  assert.ok(passes.commits.length > 20, `sealed in passes: ${passes.commits.length} commits`);
  assert.ok(Math.max(...passes.commits) < 40, `a pass holds few lists: ${passes.commits}`);
});

Deno.test("posting blocks: stored as varints; blocks a store wrote before still read", async () => {
  for (
    const block of [{ seqs: [1], total: 1 }, { seqs: [127, 128, 16_384, 2 ** 31], total: 9e6 }]
  ) {
    assert.deepEqual(decodeBlock(encodeBlock(block)), block);
  }
  assert.equal(encodeBlock({ seqs: [25_000], total: 3 }).length, 4);
  // The threads of replies: the gaps doubled, a reply's distance to its thread after it.
  const replies = { seqs: [5, 9, 300], total: 7, threads: new Map([[9, 2], [300, 299]]) };
  assert.deepEqual(decodeBlock(encodeBlock(replies)), replies);
  assert.deepEqual([...encodeBlock(replies)], [0, 7, 10, 9, 7, 199, 4, 1]);
  // Threads of seqs the block does not hold, or a thread's own seq, are not stored.
  const named = { seqs: [5], total: 1, threads: new Map([[5, 5], [6, 1]]) };
  assert.deepEqual(decodeBlock(encodeBlock(named)), { seqs: [5], total: 1 });
  await using board = await testBoard({ limitScale: 100, searchBatch: 8 });
  const all = await concurrentBoard(board, 40);
  await sealSearchBatches(board.deps);
  // Rewrite every other block of each list as a store written before held it.
  for (const word of ["alpha", "beta", "gamma", "delta"]) {
    const prefix = keys.searchPostings.range(word);
    for (const [i, b] of (await blocks(board, prefix)).entries()) {
      if (i % 2 === 0) await board.kv.set([...prefix, b.first], { seqs: b.seqs, total: b.total });
    }
  }
  await assertFinds(board, all, ["gamma", "delta"], "before");
  await assertFinds(board, all, ["alpha", "beta"], "after", { budget: 120 });
  // Removal rewrites an old-shape block in the new shape.
  const prefix = keys.searchPostings.range("gamma");
  const [first] = await blocks(board, prefix);
  await removeMessage(board.deps, "named", all.find((m) => m.seq === first.seqs[0])!.id, null);
  const raw = (await board.kv.get([...prefix, first.first])).value;
  assert.ok(raw instanceof Uint8Array);
  assert.deepEqual(decodeBlock(raw).seqs, first.seqs.slice(1));
});

Deno.test("posting blocks: a whole batch of replies at the largest batch size fits one KV value", async () => {
  // The worst block: every seq of a batch in one list (a topic's), each a reply to a thread
  // far back, far into the board's life.
  const first = 2 ** 33;
  const seqs = Array.from({ length: MAX_SEARCH_BATCH }, (_, i) => first + i);
  const block = encodeBlock({ seqs, total: 2 ** 40, threads: new Map(seqs.map((s) => [s, 1])) });
  assert.deepEqual(decodeBlock(block).seqs, seqs);
  const kv = await Deno.openKv(":memory:");
  try {
    // Deno KV refuses a value over 65,536 bytes: the sealer's commit would throw.
    assert.ok((await kv.set(keys.searchTopicPostings("general", first), block)).ok);
  } finally {
    kv.close();
  }
});
