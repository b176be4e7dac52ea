/**
 * A listener the runtime ends is listened again, whether it ended with an error or as if it had
 * been shut down (nothing in the service shuts it down): the process never stays alive answering
 * nothing. `Deno.serve` is stood in for, so the test needs no file descriptors to run out.
 */
import assert from "node:assert/strict";
import { keepListening } from "../routes/service.ts";
import { testBoard } from "./helpers.ts";

/** Runs `keepListening` with `Deno.serve` answering `ends` in turn; resolves at the second listen. */
async function relistens(ends: () => Promise<void>): Promise<number> {
  await using board = await testBoard();
  const serve = Deno.serve;
  let calls = 0;
  const second = Promise.withResolvers<void>();
  (Deno as unknown as { serve: unknown }).serve = () => {
    calls++;
    if (calls === 2) second.resolve();
    return { finished: calls === 1 ? ends() : new Promise<void>(() => {}) };
  };
  try {
    keepListening(board.deps, () => new Response("ok"), 10);
    const waited = setTimeout(() => second.resolve(), 3_000);
    await second.promise;
    clearTimeout(waited);
    return calls;
  } finally {
    (Deno as unknown as { serve: unknown }).serve = serve;
  }
}

Deno.test("a listener that ends with an error is listened again", async () => {
  assert.equal(await relistens(() => Promise.reject(new Error("accept: too many open files"))), 2);
});

Deno.test("a listener that ends as if shut down is listened again", async () => {
  assert.equal(await relistens(() => Promise.resolve()), 2);
});
