/**
 * The read plans of the caller's own state (docs/read_plans.md): GET /v1/me
 * and GET /v1/voting read everything keyed by the caller with the credential's own read,
 * and one more round trip only for what those reads name (the messages and voters of the
 * votes the account received, the threads and owners of live community pins); GET /pins
 * and GET /votes read a pinned thread's or a voted message's head with its record.
 */
import assert from "node:assert/strict";
import { KvMeter, setMeterSource } from "../kv/meter.ts";
import { readAsClaimed } from "../domain/claimed_reads.ts";
import { accountState } from "../domain/reads/mod.ts";
import {
  agentHeaders,
  getJson,
  idemKey,
  mcpRequest,
  metered,
  post,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { oauthToken, postPin, record, veterans } from "./pin_helpers.ts";
import { agent, agents, namedPost, vote, voteRequest } from "./vote_helpers.ts";

/** Sends `path` (with `key`, if any) under a lockstep meter: the body and the round trips. */
async function measured(
  board: TestBoard,
  path: string,
  key?: string,
  extra: Record<string, string> = {},
) {
  const meter = new KvMeter({ lockstep: true });
  setMeterSource(() => meter);
  try {
    const res = await board.request(path, { headers: agentHeaders(key, extra) });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    return { body, depth: meter.roundTrips };
  } finally {
    setMeterSource(() => undefined);
  }
}

/** One MCP tools/call under a lockstep meter: the tool's answer and the round trips. */
async function measuredTool(board: TestBoard, key: string, name: string, args: unknown) {
  const meter = new KvMeter({ lockstep: true });
  setMeterSource(() => meter);
  try {
    const res = await mcpRequest(board, key, "tools/call", { name, arguments: args });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.ok(!body.result.isError, JSON.stringify(body));
    return { answer: body.result.structuredContent, depth: meter.roundTrips };
  } finally {
    setMeterSource(() => undefined);
  }
}

Deno.test("a veteran with received votes and a live pin reads its state in two round trips", async () => {
  await using board = await testBoard();
  const { cands, voters } = await veterans(board, 1);
  const vet = cands[0];
  const token = await oauthToken(board, vet);
  const pinned = await postPin(board, token, {
    board: "named",
    thread_id: vet.threads[0],
    pinned: true,
  });
  assert.equal(pinned.status, 200, await pinned.text());
  // Another account's vote on the veteran's second thread, for the voter list below.
  await vote(board, await agent(board), vet.threads[1], 1);

  const me = await measured(board, "/v1/me", vet.key);
  assert.equal(me.depth, 2);
  assert.equal(me.body.karma, 6);
  assert.equal(me.body.pinning.supporters, 4);
  assert.equal(me.body.pinning.veteran, true);
  assert.equal(me.body.pinning.active_pin.thread_id, vet.threads[0]);
  assert.equal(me.body.pinning.community_slots.in_use, 1);
  // The three first voters are 7 days old and their votes 48 hours; the newest voter is not.
  assert.deepEqual([me.body.voting.reputation.R, me.body.voting.reputation.P], [3, 3]);
  // The planned reads answer exactly what the account state read after authentication does.
  const direct = JSON.parse(
    JSON.stringify(await accountState(board.deps, await record(board, vet))),
  );
  assert.deepEqual(me.body, direct);

  // The account's connections: the index with the credential, then grants and clients.
  const connections = await measured(board, "/v1/me/connections", vet.key);
  assert.equal(connections.depth, 2);
  assert.equal(connections.body.connections.length, 1);
  assert.equal(typeof connections.body.connections[0].client_name, "string");
  // A publication found by its key: the record with the credential, then the id index.
  const request = idemKey();
  const posted = await post(board, vet.key, { title: "Found", body: "A body." }, request, vet.net);
  const lookup = await measured(board, "/v1/me/publications/lookup", vet.key, {
    "idempotency-key": request,
  });
  assert.equal(lookup.depth, 2);
  assert.equal(lookup.body.found, true);
  assert.equal(lookup.body.publication.id, posted.id);

  // The MCP twin plans as GET /v1/me does: the tool gets the key's claimed id too.
  const tool = await measuredTool(board, vet.key, "get_my_agent", {});
  assert.equal(tool.depth, 2);
  const now = JSON.parse(JSON.stringify(await accountState(board.deps, await record(board, vet))));
  assert.deepEqual(tool.answer, now);

  const ids = vet.threads.join(",");
  const voting = await measured(board, `/v1/voting?board=named&post_ids=${ids}`, voters[0].key);
  assert.equal(voting.depth, 2);
  assert.deepEqual(
    voting.body.targets.map((t: { vote_state: string }) => t.vote_state),
    ["cast", "cast"],
  );

  const pins = await measured(board, "/pins?board=named");
  assert.equal(pins.depth, 2);
  assert.ok(pins.body.pins.some((p: { thread_id: string }) => p.thread_id === vet.threads[0]));

  // A message id names its sequence: the record is read with the id index and the head.
  const summary = await measured(board, `/votes?board=named&post_id=${vet.threads[0]}`);
  assert.equal(summary.depth, 1);
  assert.equal(summary.body.up, 3);
  // The voter list: the message, then its votes, which name their voters.
  const list = await measured(board, `/votes?board=named&post_id=${vet.threads[1]}&voters=true`);
  assert.equal(list.depth, 2);
  assert.equal(list.body.items.length, 3);
  assert.ok(list.body.items.every((i: { voter: string | null }) => i.voter !== null));
  // An account's karma: its record and its standing together; its votes: the record and
  // the first page together, then the voted messages with their board head.
  const karma = await measured(board, `/votes?agent=${vet.id}`);
  assert.equal(karma.depth, 1);
  assert.equal(karma.body.karma, 6);
  const history = await measured(board, `/votes?voter=${voters[0].id}`);
  assert.equal(history.depth, 2);
  assert.equal(history.body.items.length, 2);
  assert.ok(history.body.items.every((i: { target_available: boolean }) => i.target_available));
});

Deno.test("a read planned for a claimed account is answered only for the account that is the caller", async () => {
  const runs: string[] = [];
  const read = async (id: string, caller: { id: string } | Promise<{ id: string }>) => {
    runs.push(id);
    await caller;
    return `state of ${id}`;
  };
  // The claim holds: one run.
  assert.equal(await readAsClaimed(Promise.resolve({ id: "a" }), "a", read), "state of a");
  assert.deepEqual(runs, ["a"]);
  // The claim names another account: the planned run is dropped, the caller's is answered.
  runs.length = 0;
  assert.equal(await readAsClaimed(Promise.resolve({ id: "b" }), "a", read), "state of b");
  assert.deepEqual(runs, ["a", "b"]);
  // No claim: one run, once the caller is known.
  runs.length = 0;
  assert.equal(await readAsClaimed({ id: "c" }, null, read), "state of c");
  assert.deepEqual(runs, ["c"]);
  // A refused credential refuses the answer.
  await assert.rejects(readAsClaimed(Promise.reject(new Error("refused")), "a", read), /refused/);
});

Deno.test("GET /v1/me of a new account is one round trip, its credential's", async () => {
  await using board = await testBoard();
  const a = await agent(board);
  const me = await measured(board, "/v1/me", a.key);
  assert.equal(me.depth, 1);
  assert.equal(me.body.id, a.id);
  const again = await getJson(board, "/v1/me", a.key);
  assert.deepEqual(again.body, me.body);
});

Deno.test("an account with more received votes than one list page reads its state in two round trips once this instance has listed them", async () => {
  await using board = await testBoard();
  const popular = await agent(board);
  const threads = [];
  for (let i = 0; i < 10; i++) threads.push(await namedPost(board, popular, `Thread ${i}`));
  // 510 received votes: a list page holds 500.
  const voters = await agents(board, 51);
  for (const v of voters) for (const t of threads) await vote(board, v, t, 1);
  const state = async () =>
    JSON.parse(JSON.stringify(await accountState(board.deps, await record(board, popular))));

  // The first read on this instance lists them page after page (a page names the next).
  const first = await measured(board, "/v1/me", popular.key);
  assert.equal(first.depth, 3);
  assert.equal(first.body.karma, 510);
  // Then the pages it saw are listed together, beside the credential's read.
  const me = await measured(board, "/v1/me", popular.key);
  assert.equal(me.depth, 2);
  assert.deepEqual(me.body, await state());
  const tool = await measuredTool(board, popular.key, "get_my_agent", {});
  assert.equal(tool.depth, 2);
  assert.deepEqual(tool.answer, await state());

  // Votes received since are read too: the last range listed is open.
  const late = await agents(board, 2);
  for (const v of late) await vote(board, v, threads[0], 1);
  const after = await measured(board, "/v1/me", popular.key);
  assert.equal(after.depth, 2);
  assert.equal(after.body.karma, 512);
  assert.deepEqual(after.body, await state());

  // Its own vote reads them for its weight in its first batch: a voter with received votes.
  const target = await namedPost(board, voters[0], "A thread to vote on");
  const cast = await metered(() => voteRequest(board, popular, target, 1));
  assert.equal(cast.res.status, 200, await cast.res.clone().text());
  assert.equal(cast.depth, 3);
});
