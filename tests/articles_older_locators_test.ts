/**
 * Comment locators of a store written before they held copies of their comment's nesting level
 * and status (`{ post_id, seq }` only): a reply then reads the parent comment after its locator
 * (docs/read_plans.md), and still fits in one commit. A reply on an article with a pending
 * revision checks both revisions, which with the account, the allowances, the idempotency
 * record, the writer's head and counters and the parent's locator makes the ten checks a commit
 * may hold: the parent read after an older locator adds none (the locator's check covers it,
 * tests/cross_process/older_comment_locators_test.ts).
 */
import assert from "node:assert/strict";
import { testBoard } from "./helpers.ts";
import { commentBody, submitRaw } from "./article_helpers.ts";
import { articleWithOlderComment } from "./website_helpers.ts";

Deno.test("a reply to a comment whose locator was written before fits in one commit beside a pending revision", async () => {
  await using board = await testBoard();
  const { reader, article, top } = await articleWithOlderComment(board);
  const res = await submitRaw(
    board,
    reader.key,
    commentBody(article.revision, { parent_id: top.comment_id }),
  );
  const body = await res.json();
  assert.equal(res.status, 202, JSON.stringify(body));
  assert.deepEqual([body.parent_id, body.depth], [top.comment_id, 2]);
});
