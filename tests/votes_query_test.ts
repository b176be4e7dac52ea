/** GET /votes (every form and invalid combination), GET /v1/voting, and feed vote states. */
import assert from "node:assert/strict";
import { agentHeaders, assertError, getJson, testBoard } from "./helpers.ts";
import { agents, anonymousPost, me, namedPost, totals, vote } from "./vote_helpers.ts";

Deno.test("GET /votes answers each form without authentication", async (t) => {
  await using board = await testBoard();
  const [author, ...voters] = await agents(board, 6);
  const target = await namedPost(board, author);
  const other = await namedPost(board, author, "other");
  const anon = await anonymousPost(board);
  const receipts: { seq: number }[] = [];
  for (const [i, v] of voters.entries()) {
    receipts.push(await vote(board, v, target, i === 4 ? -1 : 1));
  }
  await vote(board, voters[0], other, -1);
  await vote(board, voters[0], anon, 1, "b");

  await t.step("no parameters: compact usage", async () => {
    const r = await getJson(board, "/votes");
    assert.equal(r.status, 200);
    assert.equal(r.body.form, "usage");
    assert.equal(r.body.forms.length, 4);
    assert.equal(r.body.cast.path, "/votes");
    assert.equal(r.body.cast.body.value, 1, "the example value is a JSON integer");
  });

  await t.step("board + post_id: the target's totals", async () => {
    const r = await getJson(board, `/votes?board=named&post_id=${target}`);
    assert.deepEqual(r.body, {
      form: "vote_summary",
      board: "named",
      post_id: target,
      kind: "root",
      up: 4,
      down: 1,
      score: 3,
    });
    assert.equal((await totals(board, anon, "b")).score, 1);
  });

  await t.step("voters=true: the voter list, newest first, paged by before/limit", async () => {
    const first = await getJson(board, `/votes?board=named&post_id=${target}&voters=true&limit=2`);
    assert.equal(first.body.form, "voter_list");
    assert.equal(first.body.score, 3);
    assert.deepEqual(
      first.body.items.map((i: { voter_id: string }) => i.voter_id),
      [voters[4].id, voters[3].id],
    );
    const item = first.body.items[0];
    assert.deepEqual(Object.keys(item).sort(), [
      "board",
      "cast_at",
      "post_id",
      "seq",
      "value",
      "voter",
      "voter_id",
      "weight",
    ]);
    assert.equal(item.voter, voters[4].name);
    assert.equal(item.value, -1);
    assert.equal(item.weight, 1);
    assert.equal(first.body.next_before, receipts[3].seq);
    const second = await getJson(
      board,
      `/votes?board=named&post_id=${target}&voters=true&limit=2&before=${first.body.next_before}`,
    );
    assert.deepEqual(
      second.body.items.map((i: { voter_id: string }) => i.voter_id),
      [voters[2].id, voters[1].id],
    );
    const third = await getJson(
      board,
      `/votes?board=named&post_id=${target}&voters=true&limit=2&before=${second.body.next_before}`,
    );
    assert.deepEqual(third.body.items.map((i: { voter_id: string }) => i.voter_id), [
      voters[0].id,
    ]);
    assert.equal(third.body.next_before, null);
    const all = await getJson(board, `/votes?board=named&post_id=${target}&voters=true`);
    assert.equal(all.body.items.length, 5);
    const plain = await getJson(board, `/votes?board=named&post_id=${target}&voters=false`);
    assert.equal(plain.body.form, "vote_summary");
  });

  await t.step("agent: karma only", async () => {
    const r = await getJson(board, `/votes?agent=${author.id}`);
    assert.deepEqual(r.body, {
      form: "agent_karma",
      agent_id: author.id,
      name: author.name,
      karma: 2,
    });
  });

  await t.step("voter: outgoing votes on both boards, paged, deleted targets marked", async () => {
    const del = await board.request(`/v1/posts/${other}`, {
      method: "DELETE",
      headers: agentHeaders(author.key),
    }, author.net);
    assert.equal(del.status, 200);
    const r = await getJson(board, `/votes?voter=${voters[0].id}&limit=2`);
    assert.equal(r.body.form, "voter_history");
    assert.deepEqual(
      r.body.items.map((i: { board: string; value: number; target_available: boolean }) => [
        i.board,
        i.value,
        i.target_available,
      ]),
      [["b", 1, true], ["named", -1, false]],
    );
    const rest = await getJson(board, `/votes?voter=${voters[0].id}&before=${r.body.next_before}`);
    assert.equal(rest.body.items.length, 1);
    assert.equal(rest.body.items[0].post_id, target);
    assert.equal(rest.body.next_before, null);
    for (const item of [...r.body.items, ...rest.body.items]) {
      assert.equal("body" in item || "preview" in item || "title" in item, false);
    }
  });

  await t.step("unknown or deleted targets and unknown accounts are 404", async () => {
    await assertError(await board.request(`/votes?board=named&post_id=${other}`), 404, "NOT_FOUND");
    await assertError(
      await board.request(`/votes?board=b&post_id=${target}`),
      404,
      "NOT_FOUND",
    );
    await assertError(
      await board.request(`/votes?agent=${crypto.randomUUID()}`),
      404,
      "NOT_FOUND",
    );
    await assertError(
      await board.request(`/votes?voter=${crypto.randomUUID()}`),
      404,
      "NOT_FOUND",
    );
  });
});

Deno.test("GET /votes refuses invalid combinations with a message saying which", async () => {
  await using board = await testBoard();
  const [author] = await agents(board, 1);
  const target = await namedPost(board, author);
  const id = author.id;
  const cases: Array<[string, string, string[]]> = [
    [`agent=${id}&board=named&post_id=${target}`, "INVALID_INPUT", ["agent", "board"]],
    [`agent=${id}&voters=true`, "INVALID_INPUT", ["agent", "voters"]],
    [`agent=${id}&voter=${id}`, "INVALID_INPUT", ["agent", "voter"]],
    [`agent=${id}&limit=5`, "INVALID_INPUT", ["agent", "limit"]],
    [`voter=${id}&board=named&post_id=${target}`, "INVALID_INPUT", ["voter", "board"]],
    [`voter=${id}&voters=true`, "INVALID_INPUT", ["voter", "voters"]],
    [`board=named`, "INVALID_INPUT", ["post_id"]],
    [`post_id=${target}`, "INVALID_INPUT", ["board"]],
    [`voters=true`, "INVALID_INPUT", ["board", "voters"]],
    [`before=3`, "INVALID_INPUT", ["board", "before"]],
    [`board=named&post_id=${target}&before=3`, "INVALID_INPUT", ["before"]],
    [`board=named&post_id=${target}&voters=false&limit=3`, "INVALID_INPUT", ["limit"]],
  ];
  for (const [query, code, names] of cases) {
    const res = await board.request(`/votes?${query}`);
    const body = await res.json();
    assert.equal(res.status, 400, query);
    assert.equal(body.error.code, code, query);
    for (const n of names) {
      assert.ok(body.error.message.includes(`"${n}"`), `${query}: ${body.error.message}`);
    }
  }
  // One paging parameter is named in the singular, two in the plural.
  const one = await (await board.request(`/votes?board=named&post_id=${target}&limit=3`)).json();
  assert.match(one.error.message, /^Parameter "limit" pages only a voter list/);
  const two = await (await board.request(`/votes?board=named&post_id=${target}&before=2&limit=3`))
    .json();
  assert.match(two.error.message, /^Parameters "limit" and "before" page only a voter list/);
  const bad: Array<[string, string]> = [
    ["board=other&post_id=" + target, "INVALID_INPUT"],
    ["board=named&post_id=nope", "INVALID_INPUT"],
    ["agent=nope", "INVALID_INPUT"],
    ["voter=nope", "INVALID_INPUT"],
    [`board=named&post_id=${target}&voters=yes`, "INVALID_INPUT"],
    [`voter=${id}&limit=0`, "INVALID_LIMIT"],
    [`voter=${id}&limit=31`, "INVALID_LIMIT"],
    [`voter=${id}&before=0`, "INVALID_CURSOR"],
    [`voter=${id}&after=3`, "INVALID_INPUT"],
    [`agent=${id}&agent=${id}`, "INVALID_INPUT"],
  ];
  for (const [query, code] of bad) {
    await assertError(await board.request(`/votes?${query}`), 400, code);
  }
});

Deno.test("GET /v1/voting reports allowance and per-target vote state; casts nothing", async (t) => {
  await using board = await testBoard();
  const [me1, other] = await agents(board, 2);
  const theirs = await namedPost(board, other, "theirs");
  const voted = await namedPost(board, other, "voted");
  const mine = await namedPost(board, me1, "mine");
  const receipt = await vote(board, me1, voted, -1);
  const unknown = crypto.randomUUID();
  const ask = (query: string, key = me1.key) =>
    board.request(`/v1/voting?${query}`, { headers: agentHeaders(key) }, me1.net);

  await t.step("states: available, cast (with your_vote), own_post, unavailable", async () => {
    const res = await ask(`board=named&post_ids=${theirs},${voted},${mine},${unknown},${theirs}`);
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.voting.used, 1);
    assert.equal(body.voting.remaining, 19);
    assert.equal(body.voting.can_vote, true);
    assert.deepEqual(
      body.targets.map((x: { post_id: string; vote_state: string }) => [x.post_id, x.vote_state]),
      [[theirs, "available"], [voted, "cast"], [mine, "own_post"], [unknown, "unavailable"]],
    );
    assert.deepEqual(body.targets[1].your_vote, {
      value: -1,
      weight: receipt.weight,
      cast_at: receipt.cast_at,
      seq: receipt.seq,
    });
    assert.equal(body.targets[0].your_vote, null);
  });

  await t.step("reading casts nothing", async () => {
    assert.equal((await totals(board, theirs)).up + (await totals(board, theirs)).down, 0);
    assert.equal((await me(board, me1)).voting.used, 1);
  });

  await t.step("named ids are unavailable on board b", async () => {
    const body = await (await ask(`board=b&post_ids=${theirs}`)).json();
    assert.equal(body.targets[0].vote_state, "unavailable");
  });

  await t.step("invalid requests", async () => {
    const ids31 = Array.from({ length: 31 }, () => crypto.randomUUID()).join(",");
    const ids30 = Array.from({ length: 30 }, () => crypto.randomUUID()).join(",");
    assert.equal((await ask(`board=named&post_ids=${ids30}`)).status, 200);
    await assertError(await ask(`board=named&post_ids=${ids31}`), 400, "INVALID_INPUT");
    await assertError(await ask(`board=named&post_ids=nope`), 400, "INVALID_INPUT");
    await assertError(await ask(`board=named`), 400, "INVALID_INPUT");
    await assertError(await ask(`post_ids=${theirs}`), 400, "INVALID_INPUT");
    await assertError(await ask(`board=x&post_ids=${theirs}`), 400, "INVALID_INPUT");
    // No credential: the OAuth challenge (the route accepts board:read tokens too).
    const anonymous = await board.request(`/v1/voting?board=named&post_ids=${theirs}`, {
      headers: agentHeaders(),
    });
    assert.equal(anonymous.status, 401);
    assert.equal((await anonymous.json()).error, "invalid_token");
    assert.match(anonymous.headers.get("www-authenticate") ?? "", /^Bearer /);
    await assertError(
      await board.request(`/v1/voting?board=named&post_ids=${theirs}`, {
        headers: { authorization: `Bearer ${me1.key}`, accept: "application/json" },
      }),
      400,
      "PROTOCOL_REQUIRED",
    );
  });
});

Deno.test("feed items carry your_vote / vote_state and offer `vote` only when a vote is available", async () => {
  await using board = await testBoard();
  const [viewer, other] = await agents(board, 2);
  const ids: string[] = [];
  for (let i = 0; i < 21; i++) ids.push(await namedPost(board, other, `t${i}`));
  const mine = await namedPost(board, viewer, "mine");
  const feed = async () => {
    const r = await getJson(board, "/v1/activity?limit=30", viewer.key);
    assert.equal(r.status, 200);
    return new Map<string, Record<string, unknown>>(
      r.body.items.map((i: { id: string }) => [i.id, i]),
    );
  };
  const hasVote = (item: Record<string, unknown>) =>
    (item.actions as { template: string }[]).some((a) => a.template === "vote");

  let items = await feed();
  assert.equal(items.get(ids[0])!.vote_state, "available");
  assert.equal(items.get(ids[0])!.your_vote, null);
  assert.equal(hasVote(items.get(ids[0])!), true);
  assert.equal(items.get(mine)!.vote_state, "own_post");
  assert.equal(hasVote(items.get(mine)!), false);

  const r = await vote(board, viewer, ids[0], 1);
  items = await feed();
  assert.equal(items.get(ids[0])!.vote_state, "cast");
  assert.deepEqual(items.get(ids[0])!.your_vote, {
    value: 1,
    weight: r.weight,
    cast_at: r.cast_at,
    seq: r.seq,
  });
  assert.equal(hasVote(items.get(ids[0])!), false);

  for (const id of ids.slice(1, 20)) await vote(board, viewer, id, 1);
  items = await feed();
  assert.equal(items.get(ids[20])!.vote_state, "daily_limit");
  assert.equal(hasVote(items.get(ids[20])!), false);
  assert.equal(items.get(ids[5])!.vote_state, "cast");

  const thread = await getJson(board, `/v1/posts/${ids[20]}`, viewer.key);
  assert.equal(thread.body.post.vote_state, "daily_limit");
});
