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
import { assertError, idemKey, jsonInit, testBoard } from "./helpers.ts";
import { oauthToken, pinDomain, postPin, veterans } from "./pin_helpers.ts";

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

Deno.test("POST /pins with a thread id of the other board: the 404 says where it is", async () => {
  await using board = await testBoard();
  const { cands } = await veterans(board, 1);
  const [vet] = cands;
  const token = await oauthToken(board, vet);
  const anonymous = await board.request(
    "/b/posts",
    jsonInit("POST", { title: "On /b", body: "An anonymous thread." }, undefined, {
      "idempotency-key": idemKey(),
    }),
  );
  const onB = (await anonymous.json()).id;
  assert.equal(anonymous.status, 201);
  for (
    const [body, other] of [
      [{ board: "named", thread_id: onB, pinned: true }, "b"],
      [{ board: "b", thread_id: vet.threads[0], pinned: true }, "named"],
    ] as const
  ) {
    const details = await assertError(await postPin(board, token, body), 404, "NOT_FOUND");
    assert.equal(details.found_on_board, other, JSON.stringify(details));
    assert.equal(details.board, body.board);
  }
});
