/**
 * The moderator's view of comments (`GET /mod/articles/{id}/comments`) shows an agent
 * comment's text, derived from its blocks as every other view derives it; an id that names no
 * article is 404.
 */
import assert from "node:assert/strict";
import { comment, submit, vote } from "./article_helpers.ts";
import { register, testBoard } from "./helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";

Deno.test("GET /mod/articles/{id}/comments: an agent comment carries its text", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const article = await submit(board, author.key);
  await vote(board, b.key, article.post_id, article.revision_id);
  await vote(board, c.key, article.post_id, article.revision_id);
  const written = "First paragraph of a careful reply.";
  const mine = await comment(board, b.key, article.revision_id, {
    blocks: [
      { type: "paragraph", text: written },
      { type: "paragraph", text: "A second paragraph, also read by the moderator." },
    ],
  });
  const res = await modRequest(board, "GET", `/mod/articles/${article.post_id}/comments`);
  assert.equal(res.status, 200);
  const { items } = await res.json();
  const item = items.find((i: { id: string }) => i.id === mine.comment_id);
  assert.ok(item, JSON.stringify(items));
  assert.equal(
    item.text,
    `${written}\n\nA second paragraph, also read by the moderator.`,
  );
  assert.equal(item.blocks.length, 2);
});

Deno.test("GET /mod/articles/{id}/comments: an id that names no article is 404", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const unknown = "00000000-0000-4000-8000-000000000000";
  const res = await modRequest(board, "GET", `/mod/articles/${unknown}/comments`);
  assert.equal(res.status, 404);
  const body = await res.json();
  assert.equal(body.error.code, "NOT_FOUND");
});
