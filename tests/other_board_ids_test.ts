/**
 * Ids of both boards look alike: a 404 for a thread or message whose id is the other board's
 * says where it is (`details.found_on_board`), on every route that reads or writes a message
 * by id, REST, `GET /votes` and the MCP tools (which name their `board` argument, when they
 * have one); an article's, revision's or comment's id says what it is and where it is read; an
 * id that is none of these stays a plain 404.
 */
import assert from "node:assert/strict";
import {
  agentHeaders,
  assertError,
  freshNetwork,
  idemKey,
  jsonInit,
  register,
  testBoard,
} from "./helpers.ts";
import { anonymousPost, namedPost } from "./vote_helpers.ts";
import { mcpClient, serve, toolJson } from "./mcp_client.ts";
import { comment } from "./article_helpers.ts";
import { publishedArticle } from "./website_helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";

Deno.test("an id of the other board: the 404 says which board it is on", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const bId = await anonymousPost(board);
  const namedId = await namedPost(board, { ...a, net: freshNetwork() }, "On the named board");
  const key = a.key;

  const expectOn = async (res: Response, on: string) => {
    const d = await assertError(res.clone(), 404, "NOT_FOUND");
    assert.equal(d.found_on_board, on, JSON.stringify(d));
    assert.match((await res.json()).error.message, new RegExp(`it is on the ${on} board`));
  };
  await t.step("a /b id on /v1 routes and GET /votes?board=named", async () => {
    await expectOn(await board.request(`/v1/posts/${bId}`, { headers: agentHeaders(key) }), "b");
    await expectOn(
      await board.request(`/v1/messages/${bId}`, { headers: agentHeaders(key) }),
      "b",
    );
    await expectOn(
      await board.request(
        `/v1/posts/${bId}/replies`,
        jsonInit("POST", { body: "A reply" }, key, { "idempotency-key": idemKey() }),
      ),
      "b",
    );
    await expectOn(
      await board.request(`/v1/posts/${bId}`, {
        method: "DELETE",
        headers: { ...agentHeaders(key), "idempotency-key": idemKey() },
      }),
      "b",
    );
    await expectOn(await board.request(`/votes?board=named&post_id=${bId}`), "b");
  });
  await t.step("a named id on /b routes", async () => {
    await expectOn(
      await board.request(`/b/posts/${namedId}`, { headers: agentHeaders() }),
      "named",
    );
  });
  await t.step(
    "MCP tools (the SDK client): the same hint, naming the board argument where there is one",
    async () => {
      await using server = serve(board);
      await using client = await mcpClient(server.url, key);
      const calls: [string, Record<string, unknown>][] = [
        ["fetch", { id: bId }],
        ["read_thread", { root_id: bId }],
        ["reply_to_thread", { thread_id: bId, body: "A reply", request_id: idemKey() }],
        ["fetch", { id: namedId, board: "b" }],
        // Tools whose domain call finds the other board itself say it the tool's way too.
        ["inspect_votes", { board: "named", post_id: bId }],
        // Ids are case-insensitive: an upper-case one gets the same hint.
        ["inspect_votes", { board: "named", post_id: bId.toUpperCase() }],
        ["vote", { board: "named", post_id: bId, value: 1 }],
      ];
      for (const [name, args] of calls) {
        const result = await client.callTool({ name, arguments: args });
        assert.equal(result.isError, true, name);
        const { error } = toolJson(result) as {
          error: { code: string; message: string; details: Record<string, unknown> };
        };
        assert.equal(error.code, "NOT_FOUND", name);
        const on = args.board === "b" ? "named" : "b";
        assert.equal(error.details.found_on_board, on, name);
        // A tool with a board argument is told to set it; one without, the other board's routes.
        const fix = name === "reply_to_thread" ? "use its routes \\(/b/" : `send "board": "${on}"`;
        assert.match(error.message, new RegExp(fix), name);
      }
    },
  );
  await t.step("GET /v1/voting: an unavailable target of the other board names it", async () => {
    const unknown = crypto.randomUUID();
    const ask = async (on: string, ids: string[]) => {
      const res = await board.request(`/v1/voting?board=${on}&post_ids=${ids.join(",")}`, {
        headers: agentHeaders(key),
      });
      assert.equal(res.status, 200);
      return (await res.json()).targets as Record<string, unknown>[];
    };
    const named = await ask("named", [namedId, bId, unknown]);
    assert.equal(named[0].available, true);
    assert.equal(named[0].found_on_board, undefined);
    assert.deepEqual(named[1], {
      post_id: bId,
      available: false,
      your_vote: null,
      vote_state: "unavailable",
      found_on_board: "b",
    });
    assert.equal(named[2].vote_state, "unavailable");
    assert.equal(named[2].found_on_board, undefined, "an id on neither board");
    const onB = await ask("b", [namedId]);
    assert.equal(onB[0].found_on_board, "named");
  });
  await t.step("an id on neither board: the plain 404", async () => {
    const res = await board.request(`/v1/posts/${crypto.randomUUID()}`, {
      headers: agentHeaders(key),
    });
    const d = await assertError(res, 404, "NOT_FOUND");
    assert.equal(d.found_on_board, undefined);
  });
});

Deno.test("DELETE /mod/posts with an id of the other board: the 404 names the board parameter to send", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const a = await register(board);
  const bId = await anonymousPost(board);
  const namedId = await namedPost(board, { ...a, net: freshNetwork() }, "On the named board");
  const key = idemKey();
  // A /b message removed without ?board=b (the default is named): not "no message was found".
  const res = await modRequest(board, "DELETE", `/mod/posts/${bId}`, undefined, key);
  const body = await res.clone().json();
  const d = await assertError(res, 404, "NOT_FOUND");
  assert.equal(d.found_on_board, "b", JSON.stringify(d));
  assert.match(body.error.message, /it is on the b board: send board=b in the query/);
  // The refusal is recorded with its hint: a retry with the key answers the same.
  const again = await modRequest(board, "DELETE", `/mod/posts/${bId}`, undefined, key);
  const replayed = (await again.json()).error;
  assert.equal(replayed.message, body.error.message);
  assert.equal(replayed.details.found_on_board, "b");
  const other = await modRequest(
    board,
    "DELETE",
    `/mod/posts/${namedId}?board=b`,
    undefined,
    idemKey(),
  );
  assert.equal((await assertError(other, 404, "NOT_FOUND")).found_on_board, "named");
  // Both messages are still there.
  for (const [id, on] of [[bId, "b"], [namedId, "named"]]) {
    const path = on === "b" ? `/b/messages/${id}` : `/v1/messages/${id}`;
    assert.equal((await board.request(path, { headers: agentHeaders(a.key) })).status, 200);
  }
  const unknown = await modRequest(
    board,
    "DELETE",
    `/mod/posts/${crypto.randomUUID()}`,
    undefined,
    idemKey(),
  );
  assert.equal((await assertError(unknown, 404, "NOT_FOUND")).found_on_board, undefined);
});

Deno.test("POST /mod/pins with a thread of the other board: the audit trail records the 404 the moderator was answered", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const bId = await anonymousPost(board);
  const key = idemKey();
  const body = { board: "named", thread_id: bId, pinned: true };
  const res = await modRequest(board, "POST", "/mod/pins", body, key);
  const answered = (await res.clone().json()).error;
  assert.equal((await assertError(res, 404, "NOT_FOUND")).found_on_board, "b");
  assert.match(answered.message, /it is on the b board: send "board": "b"/);
  const audit = await modRequest(board, "GET", "/mod/audit?limit=1");
  const [record] = (await audit.json()).items;
  assert.deepEqual(
    [record.action, record.outcome, record.status, record.result],
    ["official_pin", "error", 404, { error: answered }],
  );
  const again = await modRequest(board, "POST", "/mod/pins", body, key);
  const replayed = (await again.json()).error;
  assert.deepEqual(replayed, { ...answered, details: { ...answered.details, replayed: true } });
});

Deno.test("an article's id, its revision's or a comment's sent as a thread or message: the 404 says what it is and where to read it", async (t) => {
  await using board = await testBoard();
  const article = await publishedArticle(board);
  const reader = await register(board);
  const said = await comment(board, reader.key, article.revision);
  const cases: [string, string, string, string][] = [
    ["the article", article.id, "article", `GET /v1/articles/posts/${article.id}`],
    ["its revision", article.revision, "article", `GET /v1/articles/posts/${article.id}`],
    [
      "a comment",
      said.comment_id,
      "article_comment",
      `GET /v1/articles/posts/${article.id}/comments`,
    ],
  ];
  await t.step("REST: a thread read, a message read, a reply", async () => {
    for (const [what, id, found, use] of cases) {
      for (
        const res of [
          await board.request(`/v1/posts/${id}`, { headers: agentHeaders(reader.key) }),
          await board.request(`/v1/messages/${id}`, { headers: agentHeaders(reader.key) }),
          await board.request(
            `/v1/posts/${id}/replies`,
            jsonInit("POST", { body: "A reply" }, reader.key, { "idempotency-key": idemKey() }),
          ),
        ]
      ) {
        const d = await assertError(res.clone(), 404, "NOT_FOUND");
        assert.equal(d.found, found, `${what}: ${JSON.stringify(d)}`);
        assert.equal(d.post_id, article.id, what);
        assert.equal(d.use, use, what);
        assert.match((await res.json()).error.message, /is an article/, what);
      }
    }
  });
  await t.step("MCP: read_thread and fetch name the articles_read tool", async () => {
    await using server = serve(board);
    await using client = await mcpClient(server.url, reader.key);
    type Told = { error: { message: string; details: Record<string, unknown> } };
    const thread = await client.callTool({
      name: "read_thread",
      arguments: { root_id: article.id },
    });
    const error = (toolJson(thread) as Told).error;
    assert.equal(error.details.found, "article");
    assert.equal(error.details.tool, "articles_read");
    assert.deepEqual(error.details.arguments, { action: "article", post_id: article.id });
    assert.match(error.message, /read it with the articles_read tool/);
    const fetched = await client.callTool({ name: "fetch", arguments: { id: said.comment_id } });
    const told = (toolJson(fetched) as Told).error;
    assert.equal(told.details.found, "article_comment", JSON.stringify(told));
    assert.deepEqual(told.details.arguments, { action: "comments", post_id: article.id });
  });
  await t.step("an id that is nothing stays a plain 404", async () => {
    const d = await assertError(
      await board.request(`/v1/posts/${crypto.randomUUID()}`, {
        headers: agentHeaders(reader.key),
      }),
      404,
      "NOT_FOUND",
    );
    assert.equal(d.found, undefined);
  });
});
