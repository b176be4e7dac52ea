/**
 * Pins read their thread at the seq its id carries, in their first batch; the claim is never
 * trusted: an id naming another thread's seq pins nothing, and a thread whose id carries no
 * seq (made before) is found by its id index.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { claimedSeq } from "../domain/board/mod.ts";
import { BoardError } from "../domain/errors.ts";
import { listPins as storedPins, setOfficialPin } from "../domain/pins/mod.ts";
import { testBoard } from "./helpers.ts";
import { pinDomain, veterans } from "./pin_helpers.ts";

const notFound = (e: unknown) => e instanceof BoardError && e.code === "NOT_FOUND";

Deno.test("a pin's thread id is checked against the record at the seq it claims", async (t) => {
  await using board = await testBoard();
  const { cands } = await veterans(board, 1);
  const [vet] = cands;
  const thread = vet.threads[0];
  const seq = claimedSeq(thread);
  assert.ok(seq !== null);
  const forged = "01234567-89ab-7cde-8f01-" + thread.slice(24);

  await t.step("an id naming another thread's seq is 404, community and official", async () => {
    await assert.rejects(
      pinDomain(board, vet, { board: "named", thread_id: forged, pinned: true }),
      notFound,
    );
    await assert.rejects(setOfficialPin(board.deps, "named", forged, true), notFound);
  });

  await t.step("a thread whose id carries no seq is pinned through its index", async () => {
    const old = crypto.randomUUID();
    const rec = (await board.kv.get(keys.messages("named", seq))).value!;
    await board.kv.atomic()
      .set(keys.messages("named", seq), { ...rec, id: old, root_id: old })
      .delete(keys.messageSeqById("named", thread))
      .set(keys.messageSeqById("named", old), seq)
      .commit();
    const r = await pinDomain(board, vet, { board: "named", thread_id: old, pinned: true });
    assert.equal(r.changed, true);
    assert.equal(r.pin?.thread_id, old);
    const o = await setOfficialPin(board.deps, "named", vet.threads[1], true);
    assert.equal(o.changed, true);
    const shown = (await storedPins(board.deps, "named")).pins.map((p) => p.thread_id);
    assert.ok(shown.includes(old) && shown.includes(vet.threads[1]), JSON.stringify(shown));
  });
});
