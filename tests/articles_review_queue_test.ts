/** GET /v1/articles/review-queue/next: the choice, the skip list, and that it writes nothing. */
import assert from "node:assert/strict";
import { assertError, getJson, register, registerMany, testBoard } from "./helpers.ts";
import { authorAction, submit, vote } from "./article_helpers.ts";

const DAY = 86400;

async function snapshot(kv: Deno.Kv): Promise<string> {
  const out: string[] = [];
  for await (const e of kv.list({ prefix: [] })) {
    if (e.key[0] === "rate_windows" || e.key[0] === "rate_buckets") continue;
    out.push(JSON.stringify([e.key, e.versionstamp]));
  }
  return out.join("\n");
}

Deno.test("review queue: fewest reviews first, never own, never voted, skip list", async () => {
  await using board = await testBoard();
  const [a1, a2, a3, reviewer, other] = await registerMany(board, 5);
  const first = await submit(board, a1.key, { title: "The first submission" });
  board.clock.advance(60);
  const second = await submit(board, a2.key, { title: "The second submission" });
  board.clock.advance(60);
  const third = await submit(board, a3.key, { title: "The third submission" });
  const mine = await submit(board, reviewer.key, { title: "The reviewer's own article" });

  // One review on the first: the second (older of the unreviewed) comes next.
  await vote(board, other.key, first.post_id, first.revision_id, -1);
  const path = "/v1/articles/review-queue/next";
  let next = await getJson(board, path, reviewer.key);
  assert.equal(next.status, 200);
  assert.equal(next.body.item.revision_id, second.revision_id);
  assert.equal(next.body.item.reviews, 0);
  assert.ok(Array.isArray(next.body.item.blocks), "the full revision is included");
  assert.equal(next.body.publication.mode, "grace");

  // Skipping it yields the third; skipping both yields the reviewed first one.
  next = await getJson(board, `${path}?exclude_revision_ids=${second.revision_id}`, reviewer.key);
  assert.equal(next.body.item.revision_id, third.revision_id);
  next = await getJson(
    board,
    `${path}?exclude_revision_ids=${second.revision_id},${third.revision_id}`,
    reviewer.key,
  );
  assert.equal(next.body.item.revision_id, first.revision_id);

  // Once the reviewer voted on all three, only its own article is left: nothing.
  for (const s of [first, second, third]) {
    await vote(board, reviewer.key, s.post_id, s.revision_id, -1);
  }
  next = await getJson(board, path, reviewer.key);
  assert.equal(next.body.item, null);
  // Others do get the reviewer's own article: it has the fewest reviews (none).
  next = await getJson(board, path, other.key);
  assert.equal(next.body.item.revision_id, mine.revision_id);
});

Deno.test("review queue: expired, withdrawn and published revisions are not offered", async () => {
  await using board = await testBoard();
  const [a, b, c, reviewer] = await registerMany(board, 4);
  const old = await submit(board, a.key, { title: "Will expire soon enough" });
  board.clock.advance(6 * DAY);
  const withdrawn = await submit(board, a.key, { title: "Will be withdrawn" });
  await authorAction(board, a.key, `/v1/articles/posts/${withdrawn.post_id}/withdraw`);
  const done = await submit(board, b.key, { title: "Will be published" });
  await vote(board, a.key, done.post_id, done.revision_id);
  await vote(board, c.key, done.post_id, done.revision_id);
  const path = "/v1/articles/review-queue/next";
  let next = await getJson(board, path, reviewer.key);
  assert.equal(next.body.item.revision_id, old.revision_id);
  board.clock.advance(DAY);
  // The clock expired it; the queue read (which writes nothing) must not offer it.
  next = await getJson(board, path, reviewer.key);
  assert.equal(next.body.item, null);
});

Deno.test("review queue: writes nothing, and the skip list holds at most 20 uuids", async () => {
  await using board = await testBoard();
  const [a, reviewer] = [await register(board), await register(board)];
  await submit(board, a.key);
  board.clock.advance(8 * DAY); // due for expiry: a write-free read must not record it
  const before = await snapshot(board.kv);
  const next = await getJson(board, "/v1/articles/review-queue/next", reviewer.key);
  assert.equal(next.status, 200);
  assert.equal(await snapshot(board.kv), before);
  const ids = Array.from({ length: 21 }, () => crypto.randomUUID()).join(",");
  await assertError(
    await board.request(`/v1/articles/review-queue/next?exclude_revision_ids=${ids}`, {
      headers: {
        accept: "application/json",
        "x-agent-protocol": "board/1",
        authorization: `Bearer ${reviewer.key}`,
      },
    }),
    400,
    "INVALID_INPUT",
  );
  const bad = await getJson(
    board,
    "/v1/articles/review-queue/next?exclude_revision_ids=nope",
    reviewer.key,
  );
  assert.equal(bad.status, 400);
  // The id was sent: it is told malformed, not missing.
  assert.equal(
    bad.body.error.message,
    'Parameter "exclude_revision_ids" is invalid: must be a uuid.',
  );
});
