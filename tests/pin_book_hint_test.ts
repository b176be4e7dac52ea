/**
 * A pin change plans the reads of the stored pins' owners and threads from the pins last seen
 * on the store (domain/pins/book_hint.ts). The hint only chooses keys: the book read in the
 * change decides, and a pin the hint missed (another instance changed the book) has its facts
 * read after the book, so a dead pin still frees its slot.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { notePinBook, pinBookHint } from "../domain/pins/mod.ts";
import { testBoard } from "./helpers.ts";
import { pinDomain, veterans } from "./pin_helpers.ts";

for (const hint of ["as last seen", "missing the stored pins"] as const) {
  Deno.test(`a pin whose owner is gone frees its slot, with the hint ${hint}`, async () => {
    await using board = await testBoard();
    const { cands } = await veterans(board, 4);
    for (const c of cands.slice(0, 3)) {
      await pinDomain(board, c, { board: "named", thread_id: c.threads[0], pinned: true });
      board.clock.advance(60);
    }
    assert.equal(pinBookHint(board.deps.kv).length, 3);
    // The first owner's account goes away without its pin being retired from the book (as
    // written by a process that predates retiring), so only its owner's facts show it dead.
    const owner = (await board.kv.get(keys.agents(cands[0].id))).value;
    assert.ok(owner);
    await board.kv.set(keys.agents(cands[0].id), { ...owner, status: "removed" });
    if (hint === "missing the stored pins") notePinBook(board.deps.kv, []);

    const r = await pinDomain(board, cands[3], {
      board: "named",
      thread_id: cands[3].threads[0],
      pinned: true,
    });
    assert.equal(r.changed, true);
    const stored = (await board.kv.get(keys.communityPins())).value ?? [];
    assert.deepEqual(
      stored.map((p) => p.agent_id).sort(),
      [cands[1].id, cands[2].id, cands[3].id].sort(),
    );
    assert.equal(pinBookHint(board.deps.kv).length, 3);
  });
}
