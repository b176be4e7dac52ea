/**
 * What a new root post writes, metered as Deno Deploy bills KV (tests/bench/kv_cost.ts): at
 * most 20 entries and 2,500 bytes for a 60-word body (docs/benchmarks.md, "Cost per
 * operation"), and the message's summary stored once — listings and indexes point at it.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import type { MessageRecord } from "../domain/board/mod.ts";
import { keys } from "../kv/keys.ts";
import { meteredKv } from "./bench/kv_cost.ts";
import { boardOn, post, register } from "./helpers.ts";

/**
 * A 60-word body of distinct words (each a search term of its own). Capitalised, so that the
 * body entry's term list (case-folded words joined by spaces) is not the text itself.
 */
function sixtyWords(seed: string): string {
  return Array.from({ length: 60 }, (_, i) => `${seed}${i.toString(36)}Word`).join(" ");
}

Deno.test("a new root post with a 60-word body writes at most 20 entries and 2,500 bytes", async () => {
  let meter: ReturnType<typeof meteredKv> | undefined;
  await using board = await boardOn(
    ":memory:",
    new ManualClock(),
    // The commit alone: no search batch is sealed on the way (sealing is metered apart).
    { searchBatch: Number.MAX_SAFE_INTEGER },
    { wrapKv: (raw) => (meter = meteredKv(raw)).kv },
  );
  const a = await register(board);
  await post(board, a.key, { title: "warm up", body: sixtyWords("w"), topic: "research" });
  meter!.take();
  const title = "Six words in this post title";
  const root = await post(board, a.key, { title, body: sixtyWords("p"), topic: "research" });
  const cost = meter!.take();
  assert.ok(cost.entriesWritten > 0, "the meter saw the commit");
  assert.ok(cost.entriesWritten <= 20, `${cost.entriesWritten} entries written`);
  assert.ok(cost.bytesWritten <= 2500, `${cost.bytesWritten} bytes written`);

  // The summary (its preview) is stored once: under `messages`, nowhere else.
  const summary = (await board.kv.get<MessageRecord>(keys.messages("named", root.seq))).value!;
  assert.ok(summary.preview.length > 100, "the preview is long enough to recognise");
  const holders: string[] = [];
  for await (const e of board.kv.list({ prefix: [] })) {
    if (JSON.stringify(e.value)?.includes(summary.preview)) holders.push(String(e.key[0]));
  }
  assert.deepEqual(holders, ["messages"]);
});

Deno.test("a 60-word root post mentioning 12 names stays within the same budget", async () => {
  let meter: ReturnType<typeof meteredKv> | undefined;
  await using board = await boardOn(
    ":memory:",
    new ManualClock(),
    { searchBatch: Number.MAX_SAFE_INTEGER },
    { wrapKv: (raw) => (meter = meteredKv(raw)).kv },
  );
  const a = await register(board);
  // Names shaped like the body's words (`m<n>name`), so the text is the same size as a
  // 60-word body's.
  const named = [];
  for (let i = 0; i < 12; i++) named.push(await register(board, `m${i.toString(36)}name`));
  await post(board, a.key, { title: "warm up", body: sixtyWords("w"), topic: "research" });
  // 48 plain words and 12 mentions: still 60 words.
  const words = sixtyWords("m").split(" ").slice(0, 48);
  const body = [...words, ...named.map((n) => `@${n.name}`)].join(" ");
  meter!.take();
  await post(board, a.key, { title: "Six words in this post title", body, topic: "research" });
  const cost = meter!.take();
  assert.ok(cost.entriesWritten <= 20, `${cost.entriesWritten} entries written`);
  assert.ok(cost.bytesWritten <= 2500, `${cost.bytesWritten} bytes written`);
  // One agent event entry names all twelve: never one entry per name.
  let entries = 0;
  for await (const _ of board.kv.list({ prefix: keys.agentEvents.range() })) entries++;
  assert.equal(entries, 1);
});
