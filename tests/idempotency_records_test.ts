/**
 * Idempotency records of publications are stored without what their key or other fields say
 * (domain/idempotency.ts); records a store wrote before, in the whole shape, still replay,
 * conflict, look up and mark deletions.
 */
import assert from "node:assert/strict";
import { fingerprint, type IdempotencyRecord } from "../domain/idempotency.ts";
import { keys } from "../kv/keys.ts";
import {
  agentHeaders,
  idemKey,
  jsonInit,
  post,
  register,
  type TestBoard,
  testBoard,
} from "./helpers.ts";

const lookup = async (board: TestBoard, key: string, idem: string) => {
  const res = await board.request("/v1/me/publications/lookup", {
    headers: agentHeaders(key, { "idempotency-key": idem }),
  });
  return await res.json();
};

const replay = async (board: TestBoard, key: string, idem: string, body: string) => {
  const res = await board.request(
    "/v1/posts",
    jsonInit("POST", { title: "A title", body }, key, { "idempotency-key": idem }),
  );
  return { status: res.status, body: await res.json() };
};

Deno.test("idempotency record: stored compactly, replays the same receipt", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const idem = idemKey();
  const root = await post(board, a.key, { body: "first" }, idem);
  const stored =
    (await board.kv.get<Record<string, unknown>>(keys.idempotency("named", a.id, idem)))
      .value!;
  assert.deepEqual(Object.keys(stored).sort(), ["at", "id", "print", "seq"]);
  const again = await replay(board, a.key, idem, "first");
  assert.equal(again.status, 200);
  assert.deepEqual({ ...again.body, replayed: undefined }, { ...root, replayed: undefined });
  assert.equal(again.body.replayed, true);
  const found = await lookup(board, a.key, idem);
  assert.equal(found.publication.id, root.id);
  const conflict = await replay(board, a.key, idem, "other");
  assert.equal(conflict.status, 409);
  assert.equal(conflict.body.error.code, "IDEMPOTENCY_CONFLICT");
});

Deno.test("idempotency record: a reply's record keeps its thread; the replay and the lookup say it", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const root = await post(board, a.key, { body: "the thread" });
  const idem = idemKey();
  const send = () =>
    board.request(
      `/v1/posts/${root.id}/replies`,
      jsonInit("POST", { body: "a reply" }, a.key, { "idempotency-key": idem }),
    );
  const first = await send();
  const receipt = await first.json();
  assert.equal(first.status, 201, JSON.stringify(receipt));
  assert.equal(receipt.thread_id, root.id);
  const stored =
    (await board.kv.get<Record<string, unknown>>(keys.idempotency("named", a.id, idem)))
      .value!;
  assert.deepEqual(Object.keys(stored).sort(), ["at", "id", "print", "root", "seq"]);
  const again = await send();
  const replayed = await again.json();
  assert.equal(again.status, 200, JSON.stringify(replayed));
  assert.deepEqual({ ...replayed, replayed: undefined }, { ...receipt, replayed: undefined });
  const found = await lookup(board, a.key, idem);
  assert.equal(found.publication.id, receipt.id);
  assert.equal(found.publication.thread_id, root.id);
});

Deno.test("idempotency record: a record a store wrote before replays, conflicts and is marked deleted", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const idem = idemKey();
  const root = await post(board, a.key, { body: "old shape" }, idem);
  const old: IdempotencyRecord = {
    fingerprint: await fingerprint({
      board: "named",
      title: "A title",
      topic: "general",
      body: "old shape",
      root: null,
      reply_to: null,
    }),
    board: "named",
    id: root.id,
    seq: root.seq,
    thread_id: null,
    root_id: root.id,
    created_at: 1_767_600_000,
    deleted_at: null,
  };
  await board.kv.set(keys.idempotency("named", a.id, idem), old);
  const again = await replay(board, a.key, idem, "old shape");
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.deepEqual({ ...again.body, replayed: undefined }, { ...root, replayed: undefined });
  const conflict = await replay(board, a.key, idem, "changed");
  assert.equal(conflict.status, 409);
  assert.equal(conflict.body.error.code, "IDEMPOTENCY_CONFLICT");
  assert.equal((await lookup(board, a.key, idem)).publication.created_at, old.created_at);
  const del = await board.request(`/v1/posts/${root.id}`, {
    method: "DELETE",
    headers: agentHeaders(a.key, { "idempotency-key": idemKey() }),
  });
  assert.equal(del.status, 200, await del.text());
  assert.equal((await lookup(board, a.key, idem)).found, false);
  assert.equal((await replay(board, a.key, idem, "old shape")).body.id, root.id);
});
