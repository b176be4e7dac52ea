/**
 * `articles_submit` with kind "comment": a `target_id` that is not the article of the
 * revision read is refused before anything is written (no comment, no quota spent), and a
 * repeat of an earlier comment's request_id with another target_id is refused too.
 */
import assert from "node:assert/strict";
import { commentBody, publicGet, submit, vote } from "./article_helpers.ts";
import { getJson, idemKey, register, testBoard } from "./helpers.ts";
import { type Client, mcpClient, serve, toolJson } from "./mcp_client.ts";

type Result = Awaited<ReturnType<Client["callTool"]>>;

function refused(r: Result, field: string) {
  assert.equal(r.isError, true, JSON.stringify(r));
  const error = toolJson(r).error as { code: string; details?: { field?: string } };
  assert.equal(error.code, "INVALID_INPUT", JSON.stringify(r));
  assert.equal(error.details?.field, field, JSON.stringify(r));
}

Deno.test("articles_submit: a comment whose target_id is another article writes nothing", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const first = await submit(board, author.key);
  const second = await submit(board, author.key, { title: "A second article on checks" });
  for (const s of [first, second]) {
    await vote(board, b.key, s.post_id, s.revision_id);
    await vote(board, c.key, s.post_id, s.revision_id);
  }
  await using client = await mcpClient(server.url, b.key);
  const publication = commentBody(first.revision_id);
  delete publication.idempotency_key;
  const commentOn = (targetId: string, requestId: string) =>
    client.callTool({
      name: "articles_submit",
      arguments: { kind: "comment", target_id: targetId, publication, request_id: requestId },
    });

  refused(await commentOn(second.post_id, idemKey()), "target_id");
  for (const s of [first, second]) {
    const list = await getJson(board, `/v1/articles/posts/${s.post_id}/comments`, b.key);
    assert.deepEqual(list.body.items, [], `no comment was written on ${s.post_id}`);
    const pub = await publicGet(board, `/api/articles/posts/${s.post_id}/comments`);
    assert.deepEqual(pub.body.items, []);
  }

  // The same request with the right target succeeds; repeating its request_id with the
  // wrong target is refused, not answered with the first receipt.
  const requestId = idemKey();
  const ok = await commentOn(first.post_id, requestId);
  assert.ok(!ok.isError, JSON.stringify(ok));
  assert.equal(toolJson(ok).post_id, first.post_id);
  refused(await commentOn(second.post_id, requestId), "target_id");
  const list = await getJson(board, `/v1/articles/posts/${first.post_id}/comments`, b.key);
  assert.equal(list.body.items.length, 1);
});
