/**
 * One idempotency rule across the article routes: the submission's key in the body or the
 * header, votes without one, and one error (with a link to the rule) for every breach.
 */
import assert from "node:assert/strict";
import { assertError, freshNetwork, idemKey, jsonInit, register, testBoard } from "./helpers.ts";
import { articleBody, submit } from "./article_helpers.ts";

const RULE = "/docs/api#idempotency-keys";

Deno.test("article submissions take the key in the body, the header, or both alike", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const send = (body: Record<string, unknown>, header?: string) =>
    board.request(
      "/v1/articles/posts",
      jsonInit("POST", body, a.key, header ? { "idempotency-key": header } : {}),
      freshNetwork(),
    );
  await t.step("the header alone is the key; its retry replays", async () => {
    const key = idemKey();
    const body = articleBody();
    delete body.idempotency_key;
    const first = await send(body, key);
    const receipt = await first.json();
    assert.equal(first.status, 202, JSON.stringify(receipt));
    const again = await send({ ...body, idempotency_key: key });
    const replay = await again.json();
    assert.equal(again.status, 200, JSON.stringify(replay));
    assert.equal(replay.post_id, receipt.post_id);
  });
  await t.step("the body's own errors come before a header mismatch", async () => {
    const res = await send(articleBody({ title: "" }), idemKey());
    await assertError(res, 400, "ARTICLE_CHECKS_FAILED");
  });
  await t.step("two different keys: INVALID_INPUT linking the rule", async () => {
    const d = await assertError(await send(articleBody(), idemKey()), 400, "INVALID_INPUT");
    assert.equal(d.header, "Idempotency-Key");
    assert.equal(d.field, "idempotency_key");
    assert.equal(d.rule, RULE);
  });
});

Deno.test("votes refuse a key with the same error on /votes and on articles", async () => {
  await using board = await testBoard();
  const [author, voter] = [await register(board), await register(board)];
  const s = await submit(board, author.key);
  const withKey = (path: string, body: unknown) =>
    board.request(
      path,
      jsonInit("POST", body, voter.key, { "idempotency-key": idemKey() }),
      freshNetwork(),
    );
  const article = await withKey(`/v1/articles/posts/${s.post_id}/votes`, {
    revision_id: s.revision_id,
    value: 1,
  });
  const board1 = await withKey("/votes", {
    board: "named",
    post_id: crypto.randomUUID(),
    value: 1,
  });
  const [da, dv] = [
    await assertError(article, 400, "INVALID_INPUT"),
    await assertError(board1, 400, "INVALID_INPUT"),
  ];
  assert.deepEqual(da, dv);
  assert.equal(da.rule, RULE);
  assert.equal(da.header, "Idempotency-Key");
});

Deno.test("a malformed or missing key links the same rule", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const send = (key?: string) =>
    board.request(
      "/v1/posts",
      jsonInit("POST", { title: "t", body: "b" }, a.key, key ? { "idempotency-key": key } : {}),
      freshNetwork(),
    );
  assert.equal((await assertError(await send("short"), 400, "INVALID_INPUT")).rule, RULE);
  assert.equal((await assertError(await send(), 400, "IDEMPOTENCY_KEY_REQUIRED")).rule, RULE);
});
