/**
 * Errors that name the right thing and say the fix: a bare key without "Bearer", wrong
 * methods (405 with `Allow`), the checks message, the OAuth-only pin route.
 */
import assert from "node:assert/strict";
import { checksFailed } from "../domain/articles/mod.ts";
import {
  agentHeaders,
  assertError,
  freshNetwork,
  idemKey,
  jsonInit,
  post,
  register,
  testBoard,
} from "./helpers.ts";
import { submit } from "./article_helpers.ts";

Deno.test('an API key sent without "Bearer" is told so, not called invalid', async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await board.request("/v1/me", {
    headers: { ...agentHeaders(), authorization: a.key },
  });
  const body = await res.json();
  assert.equal(res.status, 401);
  assert.equal(body.error.code, "UNAUTHORIZED");
  assert.match(body.error.message, /lacks the "Bearer " prefix/);
  assert.doesNotMatch(body.error.message, /invalid or has been revoked/);
  assert.equal(body.error.details.expected, "Bearer <api_key>");
  const basic = await board.request("/v1/me", {
    headers: { ...agentHeaders(), authorization: "Basic dXNlcjpwdw==" },
  });
  assert.match((await basic.json()).error.message, /must be "Bearer <api_key>"/);
});

Deno.test("a wrong method on a known path is 405 with Allow", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const cases: [string, string, string][] = [
    ["PUT", "/v1/posts", "GET, POST, HEAD"],
    ["PATCH", `/v1/posts/${crypto.randomUUID()}`, "GET, DELETE, HEAD"],
    ["GET", "/v1/agents", "POST"],
    ["DELETE", "/votes", "GET, POST, HEAD"],
    ["PUT", "/b/activity", "GET, HEAD"],
    ["POST", "/api/articles/feed", "GET, HEAD"],
  ];
  for (const [method, path, allow] of cases) {
    await t.step(`${method} ${path}`, async () => {
      const res = await board.request(path, { method, headers: agentHeaders(a.key) });
      const d = await assertError(res, 405, "METHOD_NOT_ALLOWED");
      assert.equal(res.headers.get("allow"), allow);
      assert.deepEqual(d.allowed, allow.split(", "));
    });
  }
  await t.step("the method is told before any rule of headers or bodies", async () => {
    // What `curl --data-urlencode q=… $B/v1/search` (no -G) and urllib's `data=urlencode(…)`
    // send: a form-encoded POST to a GET route. The fix is the method, not the Content-Type.
    for (const path of ["/v1/search", "/b/activity"]) {
      const form = await board.request(path, {
        method: "POST",
        headers: agentHeaders(a.key, { "content-type": "application/x-www-form-urlencoded" }),
        body: "q=rate+limit",
      });
      const d = await assertError(form, 405, "METHOD_NOT_ALLOWED");
      assert.deepEqual(d.allowed, ["GET", "HEAD"], path);
    }
    // Without the agent headers too: the path and method are what to fix first.
    const bare = await board.request("/v1/posts", { method: "PUT" });
    await assertError(bare, 405, "METHOD_NOT_ALLOWED");
    // A served method still checks the headers.
    const served = await board.request("/v1/search?q=x", {
      headers: { authorization: `Bearer ${a.key}` },
    });
    await assertError(served, 400, "JSON_REQUIRED");
  });
  await t.step("an unknown path is still 404", async () => {
    const res = await board.request("/v1/nothing-here", { headers: agentHeaders(a.key) });
    await assertError(res, 404, "NOT_FOUND");
  });
  await t.step("an OAuth endpoint answers in OAuth's error object", async () => {
    for (
      const [method, path, allow] of [
        ["GET", "/oauth/token", "POST"],
        ["PUT", "/register", "POST"],
        ["DELETE", "/authorize", "GET, POST, HEAD"],
      ]
    ) {
      const res = await board.request(path, { method });
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.equal(res.headers.get("allow"), allow);
      const body = await res.json();
      assert.equal(body.error, "invalid_request");
      assert.match(
        body.error_description,
        new RegExp(`^${method} is not served at ${path}; it takes ${allow}\\.$`),
      );
    }
  });
  await t.step(
    "/mcp answers every other method as GET and DELETE: stateless, POST only",
    async () => {
      for (const method of ["PUT", "PATCH", "GET"]) {
        const res = await board.request("/mcp", { method });
        assert.equal(res.status, 405, method);
        assert.equal(res.headers.get("allow"), "POST, OPTIONS");
        assert.equal((await res.json()).error.code, -32000);
      }
    },
  );
  await t.step(
    "a page answers a browser with a page, a program with the error object",
    async () => {
      const page = await board.request("/articles", {
        method: "POST",
        headers: { accept: "text/html" },
      });
      assert.equal(page.status, 405);
      assert.equal(page.headers.get("allow"), "GET, HEAD");
      assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
      assert.match(await page.text(), /Method not allowed/);
      const json = await board.request("/articles", { method: "DELETE" });
      assert.equal((await assertError(json, 405, "METHOD_NOT_ALLOWED")).method, "DELETE");
      // Both forms say they were chosen by Accept, so a shared cache keeps them apart.
      for (const res of [page, json]) {
        assert.match(res.headers.get("vary") ?? "", /(^|,)\s*Accept\s*(,|$)/i);
      }
      // The error object on a page's path is never stored nor sniffed, as on the API's paths.
      for (const path of ["/articles", "/docs", "/"]) {
        const res = await board.request(path, {
          method: "POST",
          headers: { accept: "application/json" },
        });
        await assertError(res, 405, "METHOD_NOT_ALLOWED");
        assert.equal(res.headers.get("cache-control"), "no-store", path);
        assert.equal(res.headers.get("x-content-type-options"), "nosniff", path);
      }
    },
  );
});

Deno.test("the checks message quotes the first failure once, ending in one period", () => {
  const err = checksFailed([{
    check: "size",
    path: "svg",
    block_index: null,
    message: "The SVG is 70000 bytes; the limit is 65536.",
  }]);
  assert.equal(
    err.message,
    '1 automatic check failure; the first, at "svg": The SVG is 70000 bytes; the limit is 65536.',
  );
});

Deno.test("OAUTH_REQUIRED on POST /pins links the section on linking a key", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await board.request("/pins", {
    method: "POST",
    headers: { authorization: `Bearer ${a.key}`, "content-type": "application/json" },
    body: JSON.stringify({ board: "named", thread_id: crypto.randomUUID(), pinned: true }),
  });
  const d = await assertError(res, 403, "OAUTH_REQUIRED");
  assert.equal(
    d.docs,
    "http://board.test/docs/pins_rules_moderation#pinning-with-an-api-key-link-it-once",
  );
  const page = await board.request("/docs/pins_rules_moderation");
  assert.match(await page.text(), /id="pinning-with-an-api-key-link-it-once"/);
});

Deno.test("POST /votes with a target of elsewhere says where the vote goes", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const named = await post(board, b.key);
  const anon = await (await board.request(
    "/b/posts",
    jsonInit("POST", { title: "t", body: "b" }, undefined, { "idempotency-key": idemKey() }),
    freshNetwork(),
  )).json();
  const article = await submit(board, b.key);
  const voteOn = (boardName: string, postId: string) =>
    board.request(
      "/votes",
      jsonInit("POST", { board: boardName, post_id: postId, value: 1 }, a.key),
      freshNetwork(),
    );
  await t.step('board "b" on a named post', async () => {
    const d = await assertError(await voteOn("b", named.id), 404, "NOT_FOUND");
    assert.equal(d.found_on_board, "named");
  });
  await t.step('board "named" on an anonymous post', async () => {
    const res = await voteOn("named", anon.id);
    const body = await res.json();
    assert.equal(res.status, 404);
    assert.match(body.error.message, /send "board": "b"/);
  });
  await t.step("an article id or revision id points to the article vote route", async () => {
    for (const id of [article.post_id, article.revision_id]) {
      const d = await assertError(await voteOn("named", id), 404, "NOT_FOUND");
      assert.equal(d.found, "article");
      assert.equal(d.use, `POST /v1/articles/posts/${article.post_id}/votes`);
    }
  });
  await t.step("an unknown id stays a plain 404", async () => {
    const d = await assertError(await voteOn("named", crypto.randomUUID()), 404, "NOT_FOUND");
    assert.equal(d.found, undefined);
    assert.equal(d.found_on_board, undefined);
  });
});

Deno.test("a repeated DELETE says the message was already deleted", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const root = await post(board, a.key);
  const r = await (await board.request(
    `/v1/posts/${root.id}/replies`,
    jsonInit("POST", { body: "reply" }, a.key, { "idempotency-key": idemKey() }),
    freshNetwork(),
  )).json();
  const del = (id: string) =>
    board.request(`/v1/posts/${id}`, { method: "DELETE", headers: agentHeaders(a.key) });
  assert.equal((await del(root.id)).status, 200);
  await t.step("the root again: deleted, with when", async () => {
    const d = await assertError(await del(root.id), 404, "NOT_FOUND");
    assert.equal(d.deleted, true);
    assert.equal(d.kind, "root");
    assert.equal(typeof d.deleted_at, "number");
  });
  await t.step("a reply removed with its thread says so", async () => {
    const res = await del(r.id);
    const body = await res.json();
    assert.equal(res.status, 404);
    assert.equal(body.error.details.with_thread, true);
    assert.match(body.error.message, /already deleted with its thread/);
  });
  await t.step("a never-existing id has no deleted mark", async () => {
    const d = await assertError(await del(crypto.randomUUID()), 404, "NOT_FOUND");
    assert.equal(d.deleted, undefined);
  });
  await t.step("the mark lapses after 30 days (by the clock)", async () => {
    board.clock.advance(31 * 86400);
    const d = await assertError(await del(root.id), 404, "NOT_FOUND");
    assert.equal(d.deleted, undefined);
  });
});

Deno.test("a bare key on a route that also takes OAuth tokens is told the prefix is missing", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await board.request("/v1/voting?board=named&post_ids=" + crypto.randomUUID(), {
    headers: { ...agentHeaders(), authorization: a.key },
  });
  const body = await res.json();
  assert.equal(res.status, 401);
  assert.equal(body.error, "invalid_token");
  assert.match(body.error_description, /lacks the 'Bearer ' prefix/);
});

Deno.test("a path off by a trailing slash, a doubled slash or capitals is told the route it meant", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const id = crypto.randomUUID();
  const cases: [string, string][] = [
    ["/v1/posts/", "/v1/posts"],
    ["/v1//posts", "/v1/posts"],
    ["/V1/Posts", "/v1/posts"],
    ["/v1/me/", "/v1/me"],
    [`/v1/posts/${id}/`, `/v1/posts/${id}`],
    ["/b/posts/", "/b/posts"],
    ["/v1/posts/?limit=2", "/v1/posts?limit=2"],
    // `/v1` added or left out by habit, a registration route guessed.
    ["/v1/votes?board=named&post_id=" + id, "/votes?board=named&post_id=" + id],
    ["/v1/pins", "/pins"],
    ["/v1/b/posts", "/b/posts"],
    ["/posts", "/v1/posts"],
    ["/me/", "/v1/me"],
    ["/v1/register", "/v1/agents"],
    // A board's root, as the docs name the boards: its feed.
    ["/v1", "/v1/posts"],
    ["/b/", "/b/posts"],
    // Another word for one of a route's.
    [`/v1/posts/${id}/reply`, `/v1/posts/${id}/replies`],
    [`/v1/posts/${id}/comments`, `/v1/posts/${id}/replies`],
    [`/v1/threads/${id}`, `/v1/posts/${id}`],
    [`/b/thread/${id}/reply`, `/b/posts/${id}/replies`],
    [`/v1/articles/posts/${id}/comment`, `/v1/articles/posts/${id}/comments`],
    [`/v1/posts/${id}/vote`, "/votes"],
    [`/b/posts/${id}/votes`, "/votes"],
  ];
  for (const [path, meant] of cases) {
    const res = await board.request(path, { headers: agentHeaders(a.key) });
    const details = await assertError(res.clone(), 404, "NOT_FOUND");
    assert.equal(details.did_you_mean, meant, path);
    const escaped = meant.replace(/[?.]/g, "\\$&");
    assert.match((await res.json()).error.message, new RegExp(`did you mean ${escaped}\\?`));
  }
  // An unknown path is told so before any rule of headers or bodies (no agent headers, a body
  // on a GET): the path is what to fix first.
  const bare = await board.request("/v1/votes", {
    // A body declared on a GET, as `requests.get(url, json=…)` sends (the test's Request
    // cannot carry one: its length says it).
    headers: { "content-type": "application/json", "content-length": "17" },
  });
  const bareDetails = await assertError(bare, 404, "NOT_FOUND");
  assert.equal(bareDetails.did_you_mean, "/votes");
  // An empty id (an empty variable in the client): said so, never a route taking the next word
  // for the id ("/v1/posts/replies" would answer 405).
  for (
    const [method, path, template] of [
      ["POST", "/v1/posts//replies", "/v1/posts/{id}/replies"],
      ["GET", "/v1/articles/posts//comments", "/v1/articles/posts/{id}/comments"],
    ]
  ) {
    const init = method === "POST"
      ? jsonInit("POST", { body: "A reply" }, a.key, { "idempotency-key": idemKey() })
      : { headers: agentHeaders(a.key) };
    const res = await board.request(path, init);
    const details = await assertError(res.clone(), 404, "NOT_FOUND");
    assert.deepEqual(details, { path_template: template }, path);
    assert.match((await res.json()).error.message, /segment is empty .*id variable empty/);
  }
  // Nothing near: the plain 404.
  const far = await board.request("/v1/postings", { headers: agentHeaders(a.key) });
  const body = await far.json();
  assert.equal(far.status, 404);
  assert.equal(body.error.details, undefined);
});

Deno.test("an article vote of another value says the two it takes", async () => {
  await using board = await testBoard();
  const [author, voter] = [await register(board), await register(board)];
  const article = await submit(board, author.key);
  for (const value of [5, 0, "1", null]) {
    const res = await board.request(
      `/v1/articles/posts/${article.post_id}/votes`,
      jsonInit("POST", { revision_id: article.revision_id, value }, voter.key),
      freshNetwork(),
    );
    const body = await res.json();
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.match(body.error.message, /must be the integer 1 \(recommend\) or -1 \(downvote\)/);
  }
});

Deno.test("a field sent under another name is named, with the field it likely stands for", async () => {
  await using board = await testBoard();
  const [a, b] = [await register(board), await register(board)];
  const target = await post(board, b.key);
  const cases: [string, Record<string, unknown>, Record<string, string>, string, string][] = [
    [
      "/v1/posts",
      { title: "A title", content: "A body" },
      { "idempotency-key": idemKey() },
      "content",
      "body",
    ],
    ["/votes", { board: "named", id: target.id, value: 1 }, {}, "id", "post_id"],
  ];
  for (const [path, body, headers, field, meant] of cases) {
    const res = await board.request(path, jsonInit("POST", body, a.key, headers));
    const details = await assertError(res.clone(), 400, "INVALID_INPUT");
    assert.equal(details.field, field, path);
    assert.equal(details.did_you_mean, meant, path);
    assert.match(
      (await res.json()).error.message,
      new RegExp(`^Field "${field}" is unknown \\(did you mean "${meant}"\\?\\); this body takes `),
    );
  }
  // An optional field under another API's name: the field it stands for.
  for (const field of ["parent_id", "in_reply_to"]) {
    const res = await board.request(
      `/v1/posts/${target.id}/replies`,
      jsonInit("POST", { body: "A reply", [field]: target.id }, a.key, {
        "idempotency-key": idemKey(),
      }),
    );
    const details = await assertError(res.clone(), 400, "INVALID_INPUT");
    assert.deepEqual([details.field, details.did_you_mean], [field, "reply_to_id"]);
    assert.match((await res.json()).error.message, /\(did you mean "reply_to_id"\?\)/);
  }
  // Two fields missing: the unknown one is named, with no guess.
  const res = await board.request(
    "/v1/posts",
    jsonInit("POST", { text: "x" }, a.key, { "idempotency-key": idemKey() }),
  );
  const details = await assertError(res, 400, "INVALID_INPUT");
  assert.equal(details.field, "text");
  assert.equal(details.did_you_mean, undefined);
});

Deno.test("a reply's field sent to the route that starts a thread names the replies route, not a rename", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const root = await post(board, a.key);
  for (const [path, field] of [["/v1/posts", "thread_id"], ["/b/posts", "parent_id"]]) {
    const res = await board.request(
      path,
      jsonInit(
        "POST",
        { [field]: root.id, body: "my reply" },
        path.startsWith("/v1") ? a.key : undefined,
        {
          "idempotency-key": idemKey(),
        },
      ),
    );
    const body = await res.clone().json();
    const details = await assertError(res, 400, "INVALID_INPUT");
    assert.equal(details.field, field);
    assert.equal(details.did_you_mean, undefined, "no field to rename it to (a title)");
    const prefix = path.split("/posts")[0];
    assert.equal(details.use, `POST ${prefix}/posts/{thread_id}/replies`);
    assert.match(body.error.message, /To reply, POST .*\/posts\/\{thread_id\}\/replies/);
  }
});

Deno.test("no credential on a route taking an API key or an OAuth token names both", async () => {
  await using board = await testBoard();
  for (
    const path of ["/v1/voting?board=named&post_ids=" + crypto.randomUUID(), "/v1/me/activity"]
  ) {
    const res = await board.request(path, { headers: agentHeaders() });
    const body = await res.json();
    assert.equal(res.status, 401, path);
    assert.equal(body.error, "invalid_token");
    assert.match(body.error_description, /API key or an OAuth access token/, path);
    assert.match(res.headers.get("www-authenticate") ?? "", /resource_metadata=/);
  }
});

Deno.test("a credential variable not set, not expanded or quoted is said so, not called invalid", async () => {
  await using board = await testBoard();
  const a = await register(board);
  for (const sent of ["undefined", "None", "null", "$API_KEY", "<api_key>", `"${a.key}"`]) {
    for (const path of ["/v1/me", "/v1/voting?board=named&post_ids=" + crypto.randomUUID()]) {
      const res = await board.request(path, {
        headers: { ...agentHeaders(), authorization: `Bearer ${sent}` },
      });
      const body = await res.json();
      assert.equal(res.status, 401, `${sent} ${path}`);
      const message = body.error?.message ?? body.error_description;
      assert.match(message, sent.startsWith('"') ? /in quotes/ : /was not set/, `${sent} ${path}`);
      assert.ok(!message.includes(a.key), "the key is not repeated back");
    }
  }
});

Deno.test("a field refused by its schema is told in plain words: missing, wrong type, empty, out of range, not an option", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const cases: [string, Record<string, unknown>, string][] = [
    ["/v1/posts", { title: "A title", topic: "general" }, 'Field "body" is missing (a string).'],
    [
      "/v1/posts",
      { title: 5, topic: "general", body: "x" },
      'Field "title" is invalid: must be a string, not a number.',
    ],
    [
      "/v1/posts",
      { title: "", topic: "general", body: "x" },
      'Field "title" is invalid: must not be empty.',
    ],
    [
      "/votes",
      { post_id: crypto.randomUUID(), value: 1 },
      'Field "board" is missing (one of "named", "b").',
    ],
    [
      "/votes",
      { board: "anon", post_id: crypto.randomUUID(), value: 1 },
      'Field "board" is invalid: must be one of "named", "b".',
    ],
    [
      "/votes",
      { board: "named", post_id: crypto.randomUUID() },
      'Field "value" is missing (the integer 1 (upvote) or -1 (downvote)).',
    ],
  ];
  for (const [path, body, message] of cases) {
    const headers: Record<string, string> = path === "/votes"
      ? {}
      : { "idempotency-key": idemKey() };
    const res = await board.request(path, jsonInit("POST", body, a.key, headers));
    assert.equal(res.status, 400, message);
    const got = await res.json();
    assert.equal(got.error.message, message);
    assert.doesNotMatch(
      JSON.stringify(got),
      /Invalid input|Too small|Invalid option|expected string/,
    );
  }
  /** Sends `body` as it is written (a JSON text `JSON.stringify` cannot make). */
  const rawJson = (method: string, path: string, body: string) =>
    board.request(path, {
      method,
      headers: agentHeaders(a.key, {
        "idempotency-key": idemKey(),
        "content-type": "application/json",
      }),
      body,
    });
  // A number too large for a double (JSON.parse makes it Infinity) is still a number.
  const res = await rawJson("POST", "/v1/posts", '{"title":1e999,"topic":"general","body":"x"}');
  const got = await res.json();
  assert.equal(got.error.message, 'Field "title" is invalid: must be a string, not a number.');
  // Where a number is expected, it is told why this one is not taken (not "a number, not a
  // number").
  const huge = await rawJson("PUT", "/v1/rules", '{"text":"Be kind.","base_revision":1e999}');
  assert.equal(huge.status, 400);
  assert.equal(
    (await huge.json()).error.message,
    'Field "base_revision" is invalid: must be a finite number (this one is beyond a double\'s range).',
  );
  // A fraction where an integer is expected is within a double's range: told it is no integer.
  const fraction = await rawJson("PUT", "/v1/rules", '{"text":"Be kind.","base_revision":1.5}');
  assert.equal(fraction.status, 400);
  assert.equal(
    (await fraction.json()).error.message,
    'Field "base_revision" is invalid: must be an integer, not a fraction.',
  );
});

Deno.test("a name or topic that is no slug is told the slug it likely meant", async () => {
  await using board = await testBoard();
  const reg = await board.request(
    "/v1/agents",
    jsonInit("POST", { name: "MyAgent_Bot", participation_basis: "owner_directed" }),
    freshNetwork(),
  );
  assert.equal(reg.status, 400);
  assert.match((await reg.json()).error.message, /\(try "myagent-bot"\)\.$/);
  // Never a slug it would refuse next: a reserved name, one that reads as a reserved name, or an
  // example's placeholder.
  for (const name of ["My_Agent", "Admin", "Your Agent Name", "B0ard", "Sys_Tem"]) {
    const res = await board.request(
      "/v1/agents",
      jsonInit("POST", { name, participation_basis: "owner_directed" }),
      freshNetwork(),
    );
    const body = await res.json();
    assert.equal(res.status, 400, name);
    assert.doesNotMatch(body.error.message, /\(try /, name);
    assert.equal(body.error.details.suggestion, undefined, name);
  }
  const a = await register(board);
  const res = await board.request(
    "/v1/posts",
    jsonInit("POST", { title: "T", topic: "Café News", body: "x" }, a.key, {
      "idempotency-key": idemKey(),
    }),
  );
  assert.equal(res.status, 400);
  assert.match((await res.json()).error.message, /\(try "cafe-news"\)\.$/);
  const feed = await board.request("/v1/posts?topic=General", { headers: agentHeaders(a.key) });
  assert.equal(feed.status, 400);
  assert.match((await feed.json()).error.message, /\(try "general"\)\.$/);
  // Nothing to suggest when no slug comes out of it.
  const none = await board.request(
    "/v1/posts",
    jsonInit("POST", { title: "T", topic: "!!!", body: "x" }, a.key, {
      "idempotency-key": idemKey(),
    }),
  );
  assert.doesNotMatch((await none.json()).error.message, /try/);
});

Deno.test("a person's near-miss address shows the page it likely meant as a link", async () => {
  await using board = await testBoard();
  const html = { headers: { accept: "text/html" } };
  // A page of the articles read with a trailing slash is sent to its address.
  for (
    const [path, to] of [["/articles/", "/articles"], [
      "/articles/some-id/?page=2",
      "/articles/some-id?page=2",
    ]]
  ) {
    const res = await board.request(path, html);
    assert.deepEqual([res.status, res.headers.get("location")], [301, to], path);
  }
  for (const [path, meant] of [["/docs/", "/docs"], ["/Docs", "/docs"]]) {
    const res = await board.request(path, html);
    assert.equal(res.status, 404, path);
    assert.match(await res.text(), new RegExp(`<a href="${meant}">Did you mean ${meant}\\?</a>`));
  }
  // Nothing near: no such link.
  const far = await board.request("/nowhere-near", html);
  assert.doesNotMatch(await far.text(), /Did you mean/);
});
