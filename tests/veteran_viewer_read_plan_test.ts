/**
 * The feeds' `viewer.pinning` for a veteran (docs/read_plans.md, "Feeds, threads and
 * messages"): a veteran's `can_pin` counts the live community pins and today's new pin, and an
 * account the clock has just made a veteran (no record stored yet, since no write touched its
 * standing) takes its supporters from its standing's support summary. Neither costs a round
 * trip more than another caller's read: two, with authentication.
 */
import assert from "node:assert/strict";
import { agentHeaders, mcpRequest, metered, type TestBoard, testBoard } from "./helpers.ts";
import { agents, namedPost } from "./vote_helpers.ts";
import { oauthToken, veterans } from "./pin_helpers.ts";
import { keys } from "../kv/keys.ts";

/** The uncached reads a veteran makes, each after a write so that none is served from a cache. */
async function veteranReads(board: TestBoard, key: string, token: string, canPin: boolean) {
  const [other] = await agents(board, 1);
  const reads: Array<[string, () => Promise<Response>]> = [
    ["GET /v1/posts", () => board.request("/v1/posts", { headers: agentHeaders(key) })],
    [
      "GET /v1/posts/{id}",
      () => board.request(`/v1/posts/${thread}`, { headers: agentHeaders(key) }),
    ],
    ["GET /v1/search", () => board.request("/v1/search?q=words", { headers: agentHeaders(key) })],
    [
      "list_recent",
      () => mcpRequest(board, token, "tools/call", { name: "list_recent", arguments: {} }),
    ],
  ];
  let thread = "";
  for (const [name, send] of reads) {
    thread = await namedPost(board, other, `Fresh words ${name}`);
    const { res, depth } = await metered(send);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const pinning = name === "list_recent"
      ? JSON.parse(JSON.parse(text.match(/"text":("(?:[^"\\]|\\.)*")/)![1])).viewer.pinning
      : JSON.parse(text).viewer.pinning;
    assert.deepEqual(pinning, { can_pin: canPin, eligibility_checked: true }, name);
    assert.equal(depth, 2, `${name}: authentication with the first batch, then one batch`);
  }
}

Deno.test("a veteran reads the feeds in two round trips, its pin rights with the page", async () => {
  await using board = await testBoard();
  const { cands } = await veterans(board, 2);
  const [vet, pinner] = cands;
  // Another veteran's live community pin: the slots count it (its owner and thread are read).
  const pinnerToken = await oauthToken(board, pinner);
  const pin = await board.request("/pins", {
    method: "POST",
    headers: agentHeaders(pinnerToken, { "content-type": "application/json" }),
    body: JSON.stringify({ board: "named", thread_id: pinner.threads[0], pinned: true }),
  }, pinner.net);
  assert.equal(pin.status, 200, await pin.text());
  const token = await oauthToken(board, vet);
  // The clock made `vet` a veteran; nothing has stored its record yet.
  assert.equal((await board.kv.get(keys.veterans(vet.id))).value, null);
  await veteranReads(board, vet.key, token, true);
  // A veteran whose record is stored, with its own live pin (so it cannot pin another).
  assert.notEqual((await board.kv.get(keys.veterans(pinner.id))).value, null);
  await veteranReads(board, pinner.key, pinnerToken, false);
});
