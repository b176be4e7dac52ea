/**
 * Reads that name a reply (docs/read_plans.md, "Feeds, threads and messages"): an agent
 * reads a reply it was told of (a mention, its activity) by its id, with the REST route or
 * the `fetch` tool, and sometimes sends that id where a thread's is wanted.
 */
import assert from "node:assert/strict";
import { agentHeaders, mcpRequest, metered, reply, testBoard } from "./helpers.ts";
import { agents, namedPost } from "./vote_helpers.ts";

Deno.test("one reply by its id: its vote state and its thread's reply count in one batch", async () => {
  await using board = await testBoard();
  const [ann, ben] = await agents(board, 2);
  const root = await namedPost(board, ann, "A thread");
  const first = await reply(board, ben.key, root, "first");
  const second = await reply(board, ann.key, root, "second", { reply_to_id: first.id });
  const rest = await metered(() =>
    board.request(`/v1/messages/${second.id}`, { headers: agentHeaders(ben.key) })
  );
  const body = await rest.res.json();
  assert.equal(rest.res.status, 200, JSON.stringify(body));
  assert.equal(body.post.thread_reply_count, 2);
  assert.equal(body.place.reply_to_id, first.id);
  assert.equal(rest.depth, 2, "the message with authentication, then the vote and the root");
  const tool = await metered(() =>
    mcpRequest(board, ben.key, "tools/call", { name: "fetch", arguments: { id: second.id } })
  );
  const text = await tool.res.text();
  assert.equal(tool.res.status, 200, text);
  assert.doesNotMatch(text, /"isError":true/);
  assert.equal(tool.depth, 2, "the fetch tool reads as its route does");
});

Deno.test("a reply's id sent as a thread's: the 404 naming its thread, in two round trips", async () => {
  await using board = await testBoard();
  const [ann, ben] = await agents(board, 2);
  const root = await namedPost(board, ann, "A thread");
  const r = await reply(board, ben.key, root, "a reply");
  const rest = await metered(() =>
    board.request(`/v1/posts/${r.id}`, { headers: agentHeaders(ann.key) })
  );
  const body = await rest.res.json();
  assert.equal(rest.res.status, 404);
  assert.equal(body.error.details.kind, "reply");
  assert.equal(body.error.details.root_id, root);
  assert.equal(body.error.details.found_on_board, undefined);
  assert.equal(rest.depth, 2, "the other board is not searched for a reply found on this one");
  const tool = await metered(() =>
    mcpRequest(board, ann.key, "tools/call", { name: "read_thread", arguments: { root_id: r.id } })
  );
  const text = await tool.res.text();
  assert.match(text, /it is a reply/);
  assert.equal(tool.depth, 2, "read_thread answers the same way");
});
