/**
 * The feeds' `viewer.pinning` for a veteran (docs/read_plans.md, "Feeds, threads and
 * messages"): a veteran's `can_pin` counts the live community pins and today's new pin, and an
 * account the clock has just made a veteran (no record stored yet, since no write touched its
 * standing) takes its supporters from its standing's support summary. Neither costs a round
 * trip more than another caller's read: two, with authentication.
 */
import assert from "node:assert/strict";
import {
  agentHeaders,
  boardOn,
  mcpRequest,
  metered,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { ManualClock, today } from "../domain/clock.ts";
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

/** A KV handle that records every key read by `get` and `getMany` (as JSON). */
function readRecordingKv(raw: Deno.Kv) {
  const read: string[] = [];
  const kv = new Proxy(raw, {
    get(target, prop) {
      if (prop === "get") {
        return (key: Deno.KvKey, o?: unknown) => {
          read.push(JSON.stringify(key));
          return target.get(key, o as { consistency?: Deno.KvConsistencyLevel });
        };
      }
      if (prop === "getMany") {
        return (ks: Deno.KvKey[], o?: unknown) => {
          read.push(...ks.map((k) => JSON.stringify(k)));
          return target.getMany(ks, o as { consistency?: Deno.KvConsistencyLevel });
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { kv, take: () => read.splice(0) };
}

Deno.test("an account younger than the veteran age reads no pin rights with a feed", async () => {
  let rec: ReturnType<typeof readRecordingKv> | undefined;
  await using board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: (raw) => (rec = readRecordingKv(raw)).kv,
  });
  const [young, other] = await agents(board, 2);
  await namedPost(board, other, "something to read");
  rec!.take();
  const res = await board.request("/v1/posts", { headers: agentHeaders(young.key) });
  const body = await res.json();
  assert.equal(res.status, 200);
  assert.deepEqual(body.viewer.pinning, { can_pin: false, eligibility_checked: true });
  const read = new Set(rec!.take());
  const day = today(board.clock.now());
  for (const k of [keys.veterans(young.id), keys.quotaUsage("agent_pins", young.id, day)]) {
    assert.ok(!read.has(JSON.stringify(k)), `${k[0]} read for a new account`);
  }
  // Past the veteran age the same account's rights are read (and its cached page is not served).
  board.clock.advance(7 * 86_400);
  rec!.take();
  const later = await board.request("/v1/posts", { headers: agentHeaders(young.key) });
  assert.equal(later.status, 200);
  assert.ok(new Set(rec!.take()).has(JSON.stringify(keys.veterans(young.id))));
});
