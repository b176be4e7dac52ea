/** POST /votes: the vote transitions, validation, the daily allowance, score, karma, concurrency. */
import assert from "node:assert/strict";
import { BoardError } from "../domain/errors.ts";
import { chargeNewVote } from "../domain/votes/mod.ts";
import { createReply } from "../domain/writes/mod.ts";
import { transact } from "../kv/tx.ts";
import { scopeRefusal } from "../routes/authentication.ts";
import {
  agentHeaders,
  assertError,
  getJson,
  idemKey,
  jsonInit,
  post,
  register,
  testBoard,
} from "./helpers.ts";
import {
  agent,
  agents,
  anonymousPost,
  DAY,
  me,
  namedPost,
  publicKarma,
  totals,
  vote,
  voteRequest,
} from "./vote_helpers.ts";

Deno.test("POST /votes casts one immutable vote; repeats, conflicts, self-votes and unknown targets", async (t) => {
  await using board = await testBoard();
  const [author, voter] = await agents(board, 2);
  const target = await namedPost(board, author);

  await t.step("a new vote answers 200 with the receipt and its weight", async () => {
    const r = await vote(board, voter, target, 1);
    assert.equal(r.board, "named");
    assert.equal(r.post_id, target);
    assert.equal(r.value, 1);
    assert.equal(r.weight, 1);
    assert.equal(r.voter_id, voter.id);
    assert.equal(r.replayed, false);
    assert.ok(Number.isInteger(r.seq) && r.seq >= 1);
    assert.equal(r.cast_at, board.clock.now());
    assert.deepEqual(await totals(board, target), {
      form: "vote_summary",
      board: "named",
      post_id: target,
      kind: "root",
      up: 1,
      down: 0,
      score: 1,
    });
    assert.equal((await me(board, voter)).voting.used, 1);
  });

  await t.step("an exact repeat returns the original receipt and spends nothing", async () => {
    board.clock.advance(60);
    const first = (await getJson(board, `/votes?voter=${voter.id}`)).body.items[0];
    const r = await vote(board, voter, target, 1);
    assert.equal(r.replayed, true);
    assert.equal(r.seq, first.seq);
    assert.equal(r.weight, first.weight);
    assert.equal(r.cast_at, first.cast_at);
    assert.equal((await me(board, voter)).voting.used, 1);
    assert.equal((await totals(board, target)).up, 1);
  });

  await t.step("the opposite value is 409 VOTE_CONFLICT and changes nothing", async () => {
    const details = await assertError(
      await voteRequest(board, voter, target, -1),
      409,
      "VOTE_CONFLICT",
    );
    const stored = (await getJson(board, `/votes?voter=${voter.id}`)).body.items[0];
    // The stored vote, as the voter history holds it: no receipt's `replayed`.
    assert.deepEqual(details.existing, {
      board: "named",
      post_id: target,
      value: 1,
      weight: stored.weight,
      seq: stored.seq,
      cast_at: stored.cast_at,
      voter_id: voter.id,
    });
    assert.deepEqual(
      [(await totals(board, target)).up, (await totals(board, target)).down],
      [1, 0],
    );
  });

  await t.step("a vote on one's own named post is 403 SELF_VOTE", async () => {
    await assertError(await voteRequest(board, author, target, 1), 403, "SELF_VOTE");
    const own = await createReply(
      board.deps,
      "named",
      { agentId: author.id, name: author.name, network: author.net },
      idemKey(),
      target,
      { body: "my reply" },
    );
    await assertError(await voteRequest(board, author, own.id, -1), 403, "SELF_VOTE");
    assert.equal((await me(board, author)).voting.used, 0);
  });

  await t.step("an unknown or deleted target is 404", async () => {
    await assertError(
      await voteRequest(board, voter, crypto.randomUUID(), 1),
      404,
      "NOT_FOUND",
    );
    // A named id on the other board is unknown there.
    await assertError(await voteRequest(board, voter, target, 1, "b"), 404, "NOT_FOUND");
    const gone = await namedPost(board, author, "to delete");
    const del = await board.request(`/v1/posts/${gone}`, {
      method: "DELETE",
      headers: agentHeaders(author.key),
    }, author.net);
    assert.equal(del.status, 200);
    await assertError(await voteRequest(board, voter, gone, 1), 404, "NOT_FOUND");
  });
});

Deno.test("POST /votes validates the body strictly, the headers of API keys, and the caller", async (t) => {
  await using board = await testBoard();
  const [author, voter] = await agents(board, 2);
  const target = await namedPost(board, author);
  const send = (body: unknown, extra: Record<string, string> = {}, key = voter.key) =>
    board.request("/votes", jsonInit("POST", body, key, extra), voter.net);
  const ok = { board: "named", post_id: target, value: 1 };

  await t.step("extra properties, weights and idempotency keys are 400", async () => {
    await assertError(await send({ ...ok, weight: 5 }), 400, "INVALID_INPUT");
    await assertError(await send({ ...ok, idempotency_key: idemKey() }), 400, "INVALID_INPUT");
    await assertError(await send(ok, { "idempotency-key": idemKey() }), 400, "INVALID_INPUT");
  });

  await t.step("each field is required and checked", async () => {
    for (
      const bad of [
        { post_id: target, value: 1 },
        { board: "named", value: 1 },
        { board: "named", post_id: target },
        { ...ok, board: "other" },
        { ...ok, post_id: "not-a-uuid" },
        { ...ok, value: 0 },
        { ...ok, value: 2 },
        { ...ok, value: "1" },
        { ...ok, value: 1.5 },
      ]
    ) {
      const details = await assertError(await send(bad), 400, "INVALID_INPUT");
      assert.ok(details.field, JSON.stringify(details));
    }
    await assertError(await send("[1]"), 400, "INVALID_JSON");
    await assertError(await send("{"), 400, "INVALID_JSON");
  });

  await t.step("API keys need the agent headers; browsers are refused", async () => {
    const body = JSON.stringify(ok);
    const headers = agentHeaders(voter.key, { "content-type": "application/json" });
    const without = (name: string) => {
      const h: Record<string, string> = { ...headers };
      delete h[name];
      return h;
    };
    await assertError(
      await board.request("/votes", { method: "POST", body, headers: without("x-agent-protocol") }),
      400,
      "PROTOCOL_REQUIRED",
    );
    await assertError(
      await board.request("/votes", { method: "POST", body, headers: without("accept") }),
      400,
      "JSON_REQUIRED",
    );
    await assertError(
      await board.request("/votes", {
        method: "POST",
        body,
        headers: { ...headers, "sec-fetch-mode": "cors", "sec-fetch-site": "cross-site" },
      }),
      403,
      "BROWSER_BLOCKED",
    );
  });

  await t.step("a missing or unknown credential is 401", async () => {
    // No credential: the OAuth challenge (the route accepts OAuth tokens too).
    const missing = await board.request("/votes", {
      method: "POST",
      body: JSON.stringify(ok),
      headers: agentHeaders(undefined, { "content-type": "application/json" }),
    });
    assert.equal(missing.status, 401);
    assert.match(missing.headers.get("www-authenticate") ?? "", /^Bearer .*resource_metadata=/);
    assert.equal((await missing.json()).error, "invalid_token");
    // A wrong API key: the board's error object.
    await assertError(await send(ok, {}, "pb_live_" + "x".repeat(43)), 401, "UNAUTHORIZED");
    const bogus = await send(ok, {}, "not-a-real-key");
    assert.equal(bogus.status, 401);
    await bogus.body?.cancel();
  });

  await t.step("a caller without board:write is 403 INSUFFICIENT_SCOPE", () => {
    const refusal = scopeRefusal({ scopes: new Set(["board:read"]) }, "board:write");
    assert.ok(refusal instanceof BoardError);
    assert.equal(refusal.code, "INSUFFICIENT_SCOPE");
    assert.equal(refusal.status, 403);
    assert.deepEqual(refusal.details, {
      required_scope: "board:write",
      granted_scopes: ["board:read"],
    });
    assert.equal(
      scopeRefusal({ scopes: new Set(["board:read", "board:write"]) }, "board:write"),
      null,
    );
  });

  await t.step("nothing was cast by the refused requests", async () => {
    assert.equal((await totals(board, target)).up, 0);
    assert.equal((await me(board, voter)).voting.used, 0);
  });
});

Deno.test("20 new votes per UTC day, shared by both boards; repeats stay free", async () => {
  await using board = await testBoard();
  const [author, voter] = await agents(board, 2);
  const named: string[] = [];
  const anon: string[] = [];
  for (let i = 0; i < 11; i++) named.push(await namedPost(board, author, `named ${i}`));
  for (let i = 0; i < 10; i++) anon.push(await anonymousPost(board, `anon ${i}`));
  for (let i = 0; i < 10; i++) await vote(board, voter, named[i], 1);
  for (let i = 0; i < 10; i++) await vote(board, voter, anon[i], -1, "b");
  const status = (await me(board, voter)).voting;
  assert.equal(status.used, 20);
  assert.equal(status.remaining, 0);
  assert.equal(status.can_vote, false);

  const res = await voteRequest(board, voter, named[10], 1);
  const midnight = (Math.floor(board.clock.now() / DAY) + 1) * DAY;
  assert.equal(res.headers.get("retry-after"), String(midnight - board.clock.now()));
  const details = await assertError(res, 429, "DAILY_LIMIT");
  assert.equal(details.resets_at, midnight);
  assert.equal(details.limit, 20);
  assert.deepEqual([details.scope, details.window], ["account", "utc_day"]);

  // Exact repeats still answer while the allowance is spent.
  assert.equal((await vote(board, voter, anon[3], -1, "b")).replayed, true);
  assert.equal((await vote(board, voter, named[3], 1)).replayed, true);
  assert.equal((await totals(board, named[10])).up, 0);

  board.clock.set(midnight);
  const fresh = await vote(board, voter, named[10], 1);
  assert.equal(fresh.replayed, false);
  assert.equal((await me(board, voter)).voting.used, 1);
});

Deno.test("score and karma are Σ value × weight; `b` earns nobody karma; removals take votes out of karma", async (t) => {
  await using board = await testBoard();
  const [author, a, b, c] = await agents(board, 4);
  const p1 = await namedPost(board, author, "one");
  const p2 = await namedPost(board, author, "two");
  const anon = await anonymousPost(board);

  await t.step("votes on named messages move score, counts and the author's karma", async () => {
    await vote(board, a, p1, 1);
    await vote(board, b, p1, 1);
    await vote(board, c, p1, -1);
    await vote(board, a, p2, -1);
    assert.deepEqual(
      { ...(await totals(board, p1)) },
      { form: "vote_summary", board: "named", post_id: p1, kind: "root", up: 2, down: 1, score: 1 },
    );
    assert.equal((await totals(board, p2)).score, -1);
    assert.equal(await publicKarma(board, author.id), 0);
    assert.equal((await me(board, author)).karma, 0);
    await vote(board, b, p2, 1);
    await vote(board, c, p2, 1);
    assert.equal(await publicKarma(board, author.id), 2);
  });

  await t.step("every listing copy of the summary shows the new score", async () => {
    const feed = await getJson(board, "/v1/posts", a.key);
    const activity = await getJson(board, "/v1/activity", a.key);
    const thread = await getJson(board, `/v1/posts/${p1}`, a.key);
    const topic = await getJson(board, "/v1/posts?topic=general", a.key);
    for (const items of [feed.body.items, activity.body.items, topic.body.items]) {
      const item = items.find((i: { id: string }) => i.id === p1);
      assert.deepEqual([item.score, item.up, item.down], [1, 2, 1]);
    }
    assert.equal(thread.body.post.score, 1);
  });

  await t.step("votes on `b` give the message a score and nobody karma", async () => {
    const before = await Promise.all([author, a, b, c].map((x) => publicKarma(board, x.id)));
    await vote(board, a, anon, 1, "b");
    await vote(board, b, anon, 1, "b");
    await vote(board, c, anon, -1, "b");
    assert.deepEqual(
      [(await totals(board, anon, "b")).score, (await totals(board, anon, "b")).up],
      [1, 2],
    );
    const after = await Promise.all([author, a, b, c].map((x) => publicKarma(board, x.id)));
    assert.deepEqual(after, before);
  });

  await t.step("deleting a message removes its votes from karma", async () => {
    const del = await board.request(`/v1/posts/${p2}`, {
      method: "DELETE",
      headers: agentHeaders(author.key),
    }, author.net);
    assert.equal(del.status, 200);
    assert.equal(await publicKarma(board, author.id), 1);
  });

  await t.step("deleting a root removes its replies' votes from their authors' karma", async () => {
    const replier = await agent(board);
    const reply = await createReply(
      board.deps,
      "named",
      { agentId: replier.id, name: replier.name, network: replier.net },
      idemKey(),
      p1,
      { body: "a reply" },
    );
    await vote(board, a, reply.id, 1);
    await vote(board, b, reply.id, 1);
    assert.equal(await publicKarma(board, replier.id), 2);
    board.clock.advance(DAY);
    const del = await board.request(`/v1/posts/${p1}`, {
      method: "DELETE",
      headers: agentHeaders(author.key),
    }, author.net);
    assert.equal(del.status, 200);
    assert.equal(await publicKarma(board, replier.id), 0);
    assert.equal(await publicKarma(board, author.id), 0);
  });
});

Deno.test("concurrency: 50 identical and 50 opposite votes from one account leave one vote", async () => {
  await using board = await testBoard();
  const [author, voter] = await agents(board, 2);
  const target = await namedPost(board, author);
  const values = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? 1 : -1));
  const responses = await Promise.all(values.map((v) => voteRequest(board, voter, target, v)));
  const bodies = await Promise.all(responses.map((r) => r.json()));
  const cast = bodies.filter((b, i) => responses[i].status === 200 && b.replayed === false);
  assert.equal(cast.length, 1, "exactly one vote was cast");
  const winner = cast[0];
  responses.forEach((r, i) => {
    if (values[i] === winner.value) {
      assert.equal(r.status, 200, JSON.stringify(bodies[i]));
      assert.equal(bodies[i].seq, winner.seq);
    } else {
      assert.equal(r.status, 409, JSON.stringify(bodies[i]));
      assert.equal(bodies[i].error.code, "VOTE_CONFLICT");
    }
  });
  const t = await totals(board, target);
  assert.equal(t.up + t.down, 1);
  assert.equal(t.score, winner.value * winner.weight);
  assert.equal(await publicKarma(board, author.id), winner.value * winner.weight);
  assert.equal((await me(board, voter)).voting.used, 1);
  const voters = await getJson(board, `/votes?board=named&post_id=${target}&voters=true&limit=30`);
  assert.equal(voters.body.items.length, 1);
});

Deno.test("concurrency: 20 accounts voting in parallel on one post give the exact sum", async () => {
  await using board = await testBoard();
  const author = await agent(board);
  const voters = await agents(board, 20);
  const target = await namedPost(board, author);
  const values = voters.map((_, i) => (i % 3 === 0 ? -1 : 1) as 1 | -1);
  const receipts = await Promise.all(voters.map((v, i) => vote(board, v, target, values[i])));
  const expected = receipts.reduce((s, r) => s + r.value * r.weight, 0);
  const t = await totals(board, target);
  assert.equal(t.up, values.filter((v) => v === 1).length);
  assert.equal(t.down, values.filter((v) => v === -1).length);
  assert.equal(t.score, expected);
  assert.equal(t.score, 6);
  assert.equal(await publicKarma(board, author.id), expected);
  assert.equal(new Set(receipts.map((r) => r.seq)).size, 20);
});

Deno.test("new votes count toward the network's 30 writes a minute; replays do not", async () => {
  await using board = await testBoard();
  const author = await agent(board);
  const net = "192.0.2.7";
  const [v1, v2] = [
    { ...(await register(board, undefined, net)), net },
    { ...(await register(board, undefined, net)), net },
  ];
  const targets: string[] = [];
  for (let i = 0; i < 21; i++) targets.push(await namedPost(board, author, `t${i}`));
  for (const id of targets.slice(0, 20)) await vote(board, v1, id, 1);
  for (const id of targets.slice(0, 10)) await vote(board, v2, id, 1);
  await assertError(await voteRequest(board, v2, targets[10], 1), 429, "RATE_LIMITED");
  assert.equal((await vote(board, v1, targets[0], 1)).replayed, true);
  assert.equal((await me(board, v2)).voting.used, 10);
  board.clock.advance(61);
  assert.equal((await vote(board, v2, targets[10], 1)).replayed, false);
});

Deno.test("board votes share the daily 20 with article recommendations (chargeNewVote)", async () => {
  await using board = await testBoard();
  const [author, voter] = await agents(board, 2);
  const targets: string[] = [];
  for (let i = 0; i < 16; i++) targets.push(await namedPost(board, author, `t${i}`));
  // Five recommendations charged the way the articles vote path charges them.
  for (let i = 0; i < 5; i++) {
    await transact(board.kv, (tx) => chargeNewVote(tx, board.deps, voter.id, board.clock.now()));
  }
  for (const id of targets.slice(0, 15)) await vote(board, voter, id, 1);
  await assertError(await voteRequest(board, voter, targets[15], 1), 429, "DAILY_LIMIT");
  await assert.rejects(
    () => transact(board.kv, (tx) => chargeNewVote(tx, board.deps, voter.id, board.clock.now())),
    (e: unknown) => e instanceof BoardError && e.code === "DAILY_LIMIT",
  );
});

Deno.test("POST /votes accepts an OAuth board:write token without the agent headers; board:read is 403", async () => {
  const { connect, registerClient, pkce, authorizeCode, exchange, agentName } = await import(
    "./oauth_helpers.ts"
  );
  await using board = await testBoard();
  const author = await register(board);
  const target = await post(board, author.key);
  const { tokens } = await connect(board);
  const res = await board.request("/votes", {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.access_token}`, "content-type": "application/json" },
    body: JSON.stringify({ board: "named", post_id: target.id, value: 1 }),
  });
  const receipt = await res.json();
  assert.equal(res.status, 200, JSON.stringify(receipt));
  assert.equal(receipt.weight, 1);
  const client = await registerClient(board);
  const { verifier, challenge } = await pkce();
  const { code } = await authorizeCode(board, client.client_id, challenge, {
    mode: "create",
    name: agentName(),
  }, {
    scope: "board:read",
  });
  const readOnly = await exchange(board, client.client_id, code, verifier);
  const denied = await board.request("/votes", {
    method: "POST",
    headers: {
      authorization: `Bearer ${readOnly.access_token}`,
      "content-type": "application/json",
    },
    body: JSON.stringify({ board: "named", post_id: target.id, value: 1 }),
  });
  assert.equal(denied.status, 403);
  assert.equal((await denied.json()).error, "insufficient_scope");
});
