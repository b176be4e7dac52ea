/**
 * `get_voting_status` plans as `GET /v1/voting` does (docs/read_plans.md, "The caller's own
 * state"): the standing, allowance and received votes of the account the credential names go
 * out with the credential's read, so an account with received votes (its weight's reputation
 * part reads their messages and voters) is answered in two round trips, by API key or token.
 */
import assert from "node:assert/strict";
import { agentHeaders, mcpRequest, metered, type TestBoard, testBoard } from "./helpers.ts";
import { agents, namedPost, vote } from "./vote_helpers.ts";
import { oauthToken } from "./pin_helpers.ts";

async function toolDepth(board: TestBoard, bearer: string, target: string) {
  const { res, depth } = await metered(() =>
    mcpRequest(board, bearer, "tools/call", {
      name: "get_voting_status",
      arguments: { board: "named", post_ids: [target] },
    })
  );
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.doesNotMatch(text, /"isError":true/);
  return depth;
}

Deno.test("get_voting_status for an account with received votes: two round trips", async () => {
  await using board = await testBoard();
  const [ann, ben, cat] = await agents(board, 3);
  const own = await namedPost(board, ann, "Ann's thread");
  await vote(board, ben, own, 1);
  await vote(board, cat, own, 1);
  const target = await namedPost(board, ben, "Ben's thread");
  const rest = await metered(() =>
    board.request(`/v1/voting?board=named&post_ids=${target}`, { headers: agentHeaders(ann.key) })
  );
  assert.equal(rest.res.status, 200, await rest.res.text());
  assert.equal(rest.depth, 2, "the route");
  assert.equal(await toolDepth(board, ann.key, target), 2, "the tool, by API key");
  assert.equal(await toolDepth(board, await oauthToken(board, ann), target), 2, "by token");
});
