/**
 * A vote plans its reads while the credential resolves (`plansWhileAuthenticating`): its first
 * read batch goes out with the credential's, with the author's keys in it when this instance has
 * seen the message, so `POST /votes` and the `vote` tool cost two KV round trips (three on a
 * message this instance has not served); a refused credential (one naming a real account, so
 * that account's keys are read early) still gets its refusal and nothing is written.
 */
import assert from "node:assert/strict";
import { generateApiKey } from "../domain/accounts/mod.ts";
import { claimedSeq, noteAuthors } from "../domain/board/mod.ts";
import { ManualClock } from "../domain/clock.ts";
import { assertError, boardOn, jsonInit, mcpInit, metered, testBoard } from "./helpers.ts";
import { changedKeys, snapshot } from "./no_write_helpers.ts";
import { operationRoutes } from "../routes/operation_routes.ts";
import { type Operation, operation } from "../routes/api/operation.ts";
import { scopedTokens } from "./oauth_helpers.ts";
import { agents, namedPost, publicKarma, vote, voteRequest } from "./vote_helpers.ts";

/** The keys of a vote's effects among `keys`: its records, the summary, standings, allowances. */
const voteEffects = (keys: string[]) =>
  keys.filter((k) =>
    /"(votes_cast|votes|votes_received|messages|voting_standings|quota_usage)"/.test(k)
  );

/** A JSON-RPC call of the `vote` tool with bearer `key`. */
function voteToolCall(key: string, postId: string): RequestInit {
  return mcpInit(key, "tools/call", {
    name: "vote",
    arguments: { board: "named", post_id: postId, value: 1 },
  });
}

Deno.test("a vote costs two KV round trips, authentication included", async () => {
  await using board = await testBoard();
  const [author, voter, other] = await agents(board, 3);
  const postId = await namedPost(board, author);
  const http = await metered(() => voteRequest(board, voter, postId, 1));
  assert.equal(http.res.status, 200, await http.res.clone().text());
  assert.equal((await http.res.json()).weight > 0, true);
  assert.ok(http.depth <= 2, `POST /votes took ${http.depth} round trips`);

  const tool = await metered(() =>
    board.request("/mcp", voteToolCall(other.key, postId), other.net)
  );
  assert.equal(tool.res.status, 200);
  const answer = await tool.res.json();
  assert.equal(answer.result.isError, undefined, JSON.stringify(answer));
  assert.ok(tool.depth <= 2, `the vote tool took ${tool.depth} round trips`);
  // Both votes counted on the message.
  const totals = await board.request(`/votes?board=named&post_id=${postId}`);
  const body = await totals.json();
  assert.equal(body.up, 2, JSON.stringify(body));
});

Deno.test("a vote through an instance that has not seen the message reads its author after it, once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-vote-hint-" });
  try {
    const clock = new ManualClock();
    await using a = await boardOn(`${dir}/kv`, clock);
    await using b = await boardOn(`${dir}/kv`, clock);
    const [author, first, second] = await agents(a, 3);
    const postId = await namedPost(a, author);
    // Instance b has never served the message: the author is known only once it is read.
    const cold = await metered(() => voteRequest(b, first, postId, 1));
    assert.equal(cold.res.status, 200, await cold.res.clone().text());
    const { weight } = await cold.res.json();
    assert.equal(cold.depth, 3, `a cold vote took ${cold.depth} round trips`);
    // The vote it committed taught b the author: the next vote there takes two.
    const warm = await metered(() => voteRequest(b, second, postId, 1));
    assert.equal(warm.res.status, 200, await warm.res.clone().text());
    assert.equal(warm.depth, 2, `a warm vote took ${warm.depth} round trips`);
    assert.equal(await publicKarma(a, author.id), weight + (await warm.res.json()).weight);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a wrong author hint costs a round trip, never a wrong write", async () => {
  await using board = await testBoard();
  const [author, voter, bystander] = await agents(board, 3);
  const postId = await namedPost(board, author);
  // As if this instance had seen another account write the message (a replaced store).
  noteAuthors(board.kv, [{ board: "named", seq: claimedSeq(postId)!, agent_id: bystander.id }]);
  const http = await metered(() => voteRequest(board, voter, postId, 1));
  assert.equal(http.res.status, 200, await http.res.clone().text());
  const { weight } = await http.res.json();
  assert.equal(http.depth, 3, `the vote took ${http.depth} round trips`);
  assert.equal(await publicKarma(board, author.id), weight);
  assert.equal(await publicKarma(board, bystander.id), 0);
});

Deno.test("a refused credential on POST /votes writes nothing, though its reads started early", async () => {
  await using board = await testBoard();
  const [author, voter] = await agents(board, 2);
  const postId = await namedPost(board, author);
  // A key naming the voter's account with a wrong secret: the voter's keys are read early.
  const forged = generateApiKey(voter.id);
  const before = await snapshot(board.kv);
  const res = await board.request(
    "/votes",
    jsonInit("POST", { board: "named", post_id: postId, value: 1 }, forged),
    voter.net,
  );
  await assertError(res, 401, "UNAUTHORIZED");
  const after = await snapshot(board.kv);
  assert.deepEqual(voteEffects(changedKeys(before, after)), []);

  // The same through the MCP tool: the refusal, and no vote.
  const mcp = await board.request("/mcp", voteToolCall(forged, postId), voter.net);
  assert.equal(mcp.status, 401);
  await mcp.body?.cancel();
  const afterMcp = await snapshot(board.kv);
  assert.deepEqual(voteEffects(changedKeys(before, afterMcp)), []);
  // The real key still casts the vote, first time (nothing was charged or recorded).
  const receipt = await vote(board, voter, postId, 1);
  assert.equal(receipt.replayed ?? false, false);
});

Deno.test("an access token plans the vote for its agent; without board:write nothing is written", async () => {
  await using board = await testBoard();
  const [author, voter] = await agents(board, 2);
  const postId = await namedPost(board, author);
  const readOnly = await scopedTokens(board, "board:read", { mode: "link", api_key: voter.key });
  const before = await snapshot(board.kv);
  const send = (token: string) =>
    board.request(
      "/votes",
      jsonInit("POST", { board: "named", post_id: postId, value: 1 }, token),
      voter.net,
    );
  // The route's credential check refuses the scope (RFC 6750), whatever the handler read.
  const refused = await send(readOnly.access_token);
  assert.equal(refused.status, 403);
  assert.equal((await refused.json()).error, "insufficient_scope");
  const mcp = await board.request("/mcp", voteToolCall(readOnly.access_token, postId), voter.net);
  const answer = await mcp.json();
  assert.equal(answer.result.isError, true);
  assert.match(JSON.stringify(answer.result), /INSUFFICIENT_SCOPE/);
  assert.deepEqual(voteEffects(changedKeys(before, await snapshot(board.kv))), []);

  // A token with board:write: the vote's first batch is planned for the agent it names.
  const writer = await scopedTokens(board, "board:read board:write", {
    mode: "link",
    api_key: voter.key,
  });
  const { res, depth } = await metered(() => send(writer.access_token));
  assert.equal(res.status, 200, await res.clone().text());
  await res.body?.cancel();
  assert.ok(depth <= 3, `POST /votes with an access token took ${depth} round trips`);
});

Deno.test("only writes are marked plansWhileAuthenticating (reads use readsWhileAuthenticating)", () => {
  const read = operation({
    method: "get",
    path: "/v1/probe",
    operationId: "probe",
    tag: "test",
    summary: "A probe.",
    auth: "api_key",
    responses: { 200: { description: "Nothing." } },
    plansWhileAuthenticating: true,
    handler: () => Promise.resolve({}),
  });
  assert.throws(() => operationRoutes([read], "/v1"), /readsWhileAuthenticating/);
  // A write marked so is routed (POST /votes is one).
  operationRoutes([{ ...read, method: "post" } as Operation], "/v1");
});

Deno.test("a voter with received votes still votes in three round trips", async () => {
  await using board = await testBoard();
  const [author, voter] = await agents(board, 2);
  // The voter's received votes are read for the weight (a second read round of their own).
  const voterPost = await namedPost(board, voter, "the voter's");
  await vote(board, author, voterPost, 1);
  const postId = await namedPost(board, author);
  const { res, depth } = await metered(() => voteRequest(board, voter, postId, 1));
  assert.equal(res.status, 200, await res.clone().text());
  await res.body?.cancel();
  assert.ok(depth <= 3, `POST /votes took ${depth} round trips`);
});
