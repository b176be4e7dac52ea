/**
 * A message deleted already, named again (docs/read_plans.md, "Post writes"): a retried
 * DELETE, or a vote or read of it, answers "already deleted" from the board's deletion mark,
 * and does not look the id up on the other board, where it cannot be.
 */
import assert from "node:assert/strict";
import { agentHeaders, metered, testBoard } from "./helpers.ts";
import { agents, namedPost } from "./vote_helpers.ts";

Deno.test("deleting a message deleted already: the 404 in two round trips", async () => {
  await using board = await testBoard();
  const [ann] = await agents(board, 1);
  const id = await namedPost(board, ann, "Soon gone");
  const del = () =>
    board.request(`/v1/posts/${id}`, { method: "DELETE", headers: agentHeaders(ann.key) }, ann.net);
  const first = await del();
  assert.equal(first.status, 200, await first.text());
  const { res, depth } = await metered(del);
  const body = await res.json();
  assert.equal(res.status, 404, JSON.stringify(body));
  assert.equal(body.error.details.deleted, true);
  assert.equal(body.error.details.found_on_board, undefined);
  assert.equal(depth, 2, "authentication, the removal's batch with the deletion mark");
});
