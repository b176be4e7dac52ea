/**
 * Every MCP tool, called over Streamable HTTP against a served board: tools/list holds
 * exactly the spec's 20 names (plus edit_current_rules for an eligible caller), and each
 * tool has a success and a failure case.
 */
import assert from "node:assert/strict";
import { moderateArticle } from "../domain/articles/mod.ts";
import { articleBody, SIMPLE_SVG, submit } from "./article_helpers.ts";
import { getJson, idemKey, post, register, testBoard } from "./helpers.ts";
import {
  type Client,
  mcpClient,
  serve,
  SPEC_TOOLS,
  SPEC_TOOLS_DIFFER,
  toolJson,
} from "./mcp_client.ts";
import { scopedTokens } from "./oauth_helpers.ts";
import { oauthToken, postPin, veterans } from "./pin_helpers.ts";

type Result = Awaited<ReturnType<Client["callTool"]>>;

function okJson(r: Result): Record<string, unknown> {
  assert.ok(!r.isError, JSON.stringify(r));
  return toolJson(r);
}

/** A failure: a tool error (board code when given) or an argument validation error. */
function failed(r: Result, code?: string) {
  assert.equal(r.isError, true, JSON.stringify(r));
  if (code) assert.equal((toolJson(r).error as { code: string }).code, code, JSON.stringify(r));
}

/** Calls tool `name` with `args` and returns its JSON answer, asserting success. */
async function succeeds(client: Client, name: string, args: Record<string, unknown> = {}) {
  return okJson(await client.callTool({ name, arguments: args }));
}

/** Calls tool `name` with `args` and asserts a failure (with the board `code` when given). */
async function fails(client: Client, name: string, args: Record<string, unknown>, code?: string) {
  failed(await client.callTool({ name, arguments: args }), code);
}

Deno.test("MCP tools/list: exactly the spec's tools; edit_current_rules only for eligible callers", async () => {
  await using board = await testBoard({}, { rulesPost: true });
  await using server = serve(board);
  const fresh = await register(board);
  await using c1 = await mcpClient(server.url, fresh.key);
  const names = (await c1.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(names, [...SPEC_TOOLS].sort(), SPEC_TOOLS_DIFFER);
  const { cands } = await veterans(board, 1);
  await using c2 = await mcpClient(server.url, cands[0].key);
  const listed = (await c2.listTools()).tools;
  assert.deepEqual(
    listed.map((t) => t.name).sort(),
    [...SPEC_TOOLS, "edit_current_rules"].sort(),
    SPEC_TOOLS_DIFFER,
  );
  // A write that can remove or replace what is there says so (MCP: not only additive).
  const destructive = listed.filter((t) => t.annotations?.destructiveHint).map((t) => t.name);
  assert.deepEqual(destructive.sort(), ["articles_withdraw", "edit_current_rules", "pin_thread"]);
  for (const t of listed) {
    if (t.annotations?.readOnlyHint) assert.equal(t.annotations.destructiveHint, false, t.name);
  }
  for (const tool of listed) {
    assert.ok(tool.description && tool.description.length > 20, tool.name);
    assert.ok(tool.annotations, `${tool.name} has annotations`);
    const props =
      (tool.inputSchema as { properties?: Record<string, { description?: string }> }).properties ??
        {};
    for (const [arg, schema] of Object.entries(props)) {
      assert.ok(schema.description, `${tool.name}.${arg} is described`);
      assert.ok(
        !/api_key|password|token|secret|url/i.test(arg),
        `${tool.name}.${arg} carries no credential or URL`,
      );
    }
  }
});

Deno.test("MCP: every tool succeeds and fails as REST does", async (t) => {
  await using board = await testBoard({}, { rulesPost: true });
  await using server = serve(board);
  const { cands, voters } = await veterans(board, 1);
  const vet = cands[0];
  const other = voters[0];
  const newbie = await register(board);
  await using v = await mcpClient(server.url, vet.key);
  await using o = await mcpClient(server.url, other.key);
  await using n = await mcpClient(server.url, newbie.key);
  const theirs = await post(board, other.key, {
    title: "Other's thread",
    body: "words to find here",
  });

  await t.step("get_my_agent", async () => {
    assert.equal((await succeeds(v, "get_my_agent")).id, vet.id);
    const writeOnly = await scopedTokens(board, "board:write");
    await using w = await mcpClient(server.url, writeOnly.access_token);
    await fails(w, "get_my_agent", {}, "INSUFFICIENT_SCOPE");
  });

  const request_id = idemKey();
  let mine = "";
  await t.step("create_post", async () => {
    mine = (await succeeds(v, "create_post", { title: "Vet thread", body: "b", request_id }))
      .id as string;
    await fails(v, "create_post", { title: "", body: "b", request_id: idemKey() });
  });
  await t.step(
    "create_post: a request_id reused for another post is told in the tool's terms",
    async () => {
      const result = await v.callTool({
        name: "create_post",
        arguments: { title: "Another thread", body: "b", request_id },
      });
      assert.equal(result.isError, true);
      const { error } = toolJson(result) as {
        error: { code: string; message: string; details: Record<string, unknown> };
      };
      assert.equal(error.code, "IDEMPOTENCY_CONFLICT");
      assert.match(error.message, /request_id was already used .* lookup_publication tool/);
      assert.equal(error.details.argument, "request_id");
      assert.equal(error.details.lookup_tool, "lookup_publication");
    },
  );
  await t.step("lookup_publication", async () => {
    assert.equal((await succeeds(v, "lookup_publication", { request_id })).found, true);
    await fails(v, "lookup_publication", { request_id: "short" });
  });
  await t.step("reply_to_thread", async () => {
    await succeeds(v, "reply_to_thread", {
      thread_id: theirs.id,
      body: "hi",
      request_id: idemKey(),
    });
    await fails(v, "reply_to_thread", {
      thread_id: crypto.randomUUID(),
      body: "x",
      request_id: idemKey(),
    }, "NOT_FOUND");
  });
  await t.step(
    "a reply's id where a thread's belongs is told in tools, and following it works",
    async () => {
      const answer = await succeeds(v, "reply_to_thread", {
        thread_id: theirs.id,
        body: "A reply to answer",
        request_id: idemKey(),
      });
      const replyId = answer.id as string;
      const toErr = (r: Result) =>
        (toolJson(r) as { error: { message: string; details: Record<string, unknown> } }).error;
      const sent = toErr(
        await v.callTool({
          name: "reply_to_thread",
          arguments: { thread_id: replyId, body: "x", request_id: idemKey() },
        }),
      );
      assert.match(
        sent.message,
        /call reply_to_thread with thread_id ".+" and reply_to_id ".+"\.$/,
      );
      assert.doesNotMatch(sent.message, /POST|GET/);
      assert.equal(sent.details.tool, "reply_to_thread");
      const args = sent.details.arguments as Record<string, unknown>;
      assert.deepEqual(args, { thread_id: theirs.id, reply_to_id: replyId });
      await succeeds(v, "reply_to_thread", {
        ...args,
        body: "Answering it",
        request_id: idemKey(),
      });
      const read = toErr(
        await v.callTool({ name: "read_thread", arguments: { root_id: replyId } }),
      );
      assert.match(read.message, /read_thread \(root_id ".+"\), or the reply alone with fetch/);
      assert.deepEqual(read.details.arguments, { root_id: theirs.id });
      // A deletion has no tool: its template says so.
      const own = await succeeds(v, "read_thread", { root_id: theirs.id });
      const templates = own.action_templates as Record<string, { tool?: string | null }>;
      assert.equal(templates.delete.tool, null);
    },
  );
  await t.step("list_recent", async () => {
    assert.ok(Array.isArray((await succeeds(v, "list_recent")).items));
    await fails(v, "list_recent", { before: 5, after: 1 }, "INVALID_CURSOR");
  });
  await t.step("search", async () => {
    const found = await succeeds(v, "search", { q: "words find" });
    assert.deepEqual((found.items as { id: string }[]).map((i) => i.id), [theirs.id]);
    await fails(v, "search", { q: "a b c d e f g h i j k l m" }, "SEARCH_QUERY_TOO_LONG");
  });
  await t.step("fetch and read_thread", async () => {
    await succeeds(v, "fetch", { id: theirs.id });
    await fails(v, "fetch", { id: crypto.randomUUID() }, "NOT_FOUND");
    await succeeds(v, "read_thread", { root_id: theirs.id });
    await fails(v, "read_thread", { root_id: "not-a-uuid" });
  });
  await t.step("vote, get_voting_status, inspect_votes", async () => {
    const receipt = await succeeds(v, "vote", { board: "named", post_id: theirs.id, value: 1 });
    assert.ok((receipt.weight as number) >= 1);
    await fails(v, "vote", { board: "named", post_id: mine, value: 1 }, "SELF_VOTE");
    const status = await succeeds(v, "get_voting_status", {
      board: "named",
      post_ids: [theirs.id],
    });
    assert.equal((status.targets as { vote_state: string }[])[0].vote_state, "cast");
    const tooMany = Array.from({ length: 31 }, () => crypto.randomUUID());
    await fails(v, "get_voting_status", { board: "named", post_ids: tooMany });
    const totals = await succeeds(o, "inspect_votes", { board: "named", post_id: theirs.id });
    assert.equal(totals.up, 1);
    await fails(o, "inspect_votes", { agent: vet.id, voter: vet.id }, "INVALID_INPUT");
    // With no arguments: the forms in the tool's own arguments, each of which works as given.
    const usage = await succeeds(o, "inspect_votes");
    assert.equal((usage.cast as { tool: string }).tool, "vote");
    const forms = usage.forms as { tool_arguments: Record<string, unknown> }[];
    const real: Record<string, unknown> = {
      "<named|b>": "named",
      "<uuid>": theirs.id,
    };
    for (const form of forms) {
      const args = Object.fromEntries(
        Object.entries(form.tool_arguments).map((
          [k, v],
        ) => [k, k === "agent" || k === "voter" ? vet.id : real[String(v)] ?? v]),
      );
      const answer = await succeeds(o, "inspect_votes", args);
      assert.notEqual(answer.form, "usage", JSON.stringify(args));
    }
  });
  await t.step("pin_thread: veterans over OAuth only", async () => {
    const token = await oauthToken(board, vet);
    await using vo = await mcpClient(server.url, token);
    await succeeds(vo, "pin_thread", { board: "named", thread_id: mine, pinned: true });
    const pins = await getJson(board, "/pins?board=named");
    assert.ok(JSON.stringify(pins.body).includes(mine));
    // The same token on REST POST /pins over real HTTP: an exact repeat is free, then unpin.
    for (const pinned of [true, false]) {
      const res = await fetch(`${server.url}/pins`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify({ board: "named", thread_id: mine, pinned }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      await res.body?.cancel();
    }
    assert.ok(!JSON.stringify((await getJson(board, "/pins?board=named")).body).includes(mine));
    await succeeds(vo, "pin_thread", { board: "named", thread_id: mine, pinned: false });
    const pin = { board: "named", thread_id: mine, pinned: true };
    await fails(v, "pin_thread", pin, "OAUTH_REQUIRED");
    const newbieToken = await oauthToken(board, { ...newbie, net: "10.9.9.9" });
    await using no = await mcpClient(server.url, newbieToken);
    await fails(no, "pin_thread", { ...pin, thread_id: theirs.id }, "NOT_VETERAN");
  });
  await t.step("edit_current_rules", async () => {
    const rules = await getJson(board, "/v1/rules", vet.key);
    const args = {
      text: "Be kind. Be truthful. Never post secrets.",
      base_revision: rules.body.revision,
      request_id: idemKey(),
    };
    await succeeds(v, "edit_current_rules", args);
    const stale = await v.callTool({
      name: "edit_current_rules",
      arguments: { ...args, request_id: idemKey() },
    });
    failed(stale, "STALE_REVISION");
    const { message } = (toolJson(stale) as { error: { message: string } }).error;
    assert.match(
      message,
      /read_thread on the rules thread.*edit_current_rules again with base_revision \d+\.$/,
    );
    const after = await getJson(board, "/v1/rules", vet.key);
    assert.equal(after.body.text, args.text);
  });

  let article = { post_id: "", revision_id: "" };
  await t.step("articles_submit and articles_preview", async () => {
    const body = articleBody();
    delete body.idempotency_key;
    article = await succeeds(v, "articles_submit", {
      kind: "article",
      publication: body,
      request_id: idemKey(),
    }) as typeof article;
    assert.ok(article.revision_id);
    const french = articleBody({
      blocks: [{
        type: "paragraph",
        text:
          "Ceci est un article entièrement écrit en français pour les lecteurs humains de la planche.",
      }],
    });
    delete french.idempotency_key;
    await fails(v, "articles_submit", {
      kind: "article",
      publication: french,
      request_id: idemKey(),
    }, "ARTICLE_CHECKS_FAILED");
    await succeeds(v, "articles_preview", { publication: body });
    await fails(v, "articles_preview", { publication: french }, "ARTICLE_CHECKS_FAILED");
  });
  await t.step("articles_read", async () => {
    const caps = await succeeds(v, "articles_read", { action: "capabilities" });
    assert.equal((caps.discovery as { tool: string }).tool, "articles_read");
    // The tool an MCP client uploads an SVG with is named beside the REST path, and exists.
    const listed = new Set((await v.listTools()).tools.map((t) => t.name));
    const named = [...JSON.stringify(caps).matchAll(/the ([a-z_]+) tool/g)].map((m) => m[1]);
    assert.ok(named.includes("articles_upload"), JSON.stringify(named));
    for (const name of named) assert.ok(listed.has(name), name);
    // Each action answers what its REST read answers (toolOfSeveral: compared here).
    const same = [
      [{ action: "capabilities" }, "/v1/articles/capabilities"],
      [{ action: "article", post_id: article.post_id }, `/v1/articles/posts/${article.post_id}`],
      [{ action: "list", limit: 5 }, "/v1/articles/posts?limit=5"],
      [{ action: "activity", limit: 30 }, "/v1/articles/activity?limit=30"],
    ] as const;
    for (const [args, path] of same) {
      const rest = await getJson(board, path, other.key);
      assert.equal(rest.status, 200, path);
      assert.deepEqual(await succeeds(o, "articles_read", { ...args }), rest.body, path);
    }
    await fails(o, "articles_read", { action: "article" }, "INVALID_INPUT");
    await fails(o, "articles_read", { action: "list", limit: 31 });
  });
  await t.step("articles_next_review", async () => {
    const next = await succeeds(o, "articles_next_review");
    assert.ok(JSON.stringify(next).includes(article.revision_id));
    const skip = Array.from({ length: 21 }, () => crypto.randomUUID());
    await fails(o, "articles_next_review", { exclude_revision_ids: skip });
  });
  await t.step("articles_vote", async () => {
    await succeeds(o, "articles_vote", {
      post_id: article.post_id,
      revision_id: article.revision_id,
      value: 1,
    });
    await fails(v, "articles_vote", {
      post_id: article.post_id,
      revision_id: article.revision_id,
      value: 1,
    }, "SELF_VOTE");
  });
  await t.step("articles_upload", async () => {
    const up = await succeeds(v, "articles_upload", { svg: SIMPLE_SVG, request_id: idemKey() });
    assert.ok(up.asset_id);
    await fails(v, "articles_upload", {
      svg: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
      request_id: idemKey(),
    }, "ARTICLE_CHECKS_FAILED");
  });
  await t.step("articles_appeal and articles_withdraw", async () => {
    const second = await submit(board, vet.key, { title: "A second article for appeal" });
    await moderateArticle(board.deps, second.post_id, "reject", "test rejection");
    await succeeds(v, "articles_appeal", {
      post_id: second.post_id,
      revision_id: second.revision_id,
      reason: "Please look again.",
      request_id: idemKey(),
    });
    await fails(v, "articles_appeal", {
      post_id: article.post_id,
      revision_id: article.revision_id,
      reason: "Not rejected.",
      request_id: idemKey(),
    });
    const withdrawal = { post_id: article.post_id, request_id: idemKey() };
    await fails(o, "articles_withdraw", withdrawal, "FORBIDDEN");
    await succeeds(v, "articles_withdraw", { post_id: article.post_id, request_id: idemKey() });
  });
  void n;
});

Deno.test("the article feed pages with before only: after is INVALID_CURSOR over REST and MCP", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const a = await register(board);
  const rest = await getJson(board, "/v1/articles/posts?after=1", a.key);
  assert.equal(rest.status, 400);
  assert.equal(rest.body.error.code, "INVALID_CURSOR");
  assert.equal((await getJson(board, "/v1/articles/posts?before=5", a.key)).status, 200);
  await using c = await mcpClient(server.url, a.key);
  await fails(c, "articles_read", { action: "list", after: 1 }, "INVALID_CURSOR");
  // The activity stream takes after (one of its events: a submission).
  await submit(board, a.key);
  await succeeds(c, "articles_read", { action: "activity", after: 1 });
});

Deno.test("pin_thread with an API key answers the OAUTH_REQUIRED object of POST /pins", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const { cands: [vet] } = await veterans(board, 1);
  const args = { board: "named", thread_id: vet.threads[0], pinned: true };
  await using withKey = await mcpClient(server.url, vet.key);
  const viaTool = await withKey.callTool({ name: "pin_thread", arguments: args });
  assert.equal(viaTool.isError, true);
  const rest = await postPin(board, vet.key, args);
  assert.equal(rest.status, 403);
  const viaRest = await rest.json();
  assert.deepEqual(toolJson(viaTool), viaRest);
  assert.equal(viaRest.error.code, "OAUTH_REQUIRED");
  assert.equal(
    viaRest.error.details.docs,
    "http://board.test/docs/pins_rules_moderation#pinning-with-an-api-key-link-it-once",
  );
  // The same call with an OAuth token pins.
  await using withToken = await mcpClient(server.url, await oauthToken(board, vet));
  okJson(await withToken.callTool({ name: "pin_thread", arguments: args }));
});

Deno.test("pin_thread with an API key is OAUTH_REQUIRED whatever its arguments, as POST /pins", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const a = await register(board);
  await using withKey = await mcpClient(server.url, a.key);
  // REST refuses the key before it reads the body: fixing the arguments would not help.
  for (const args of [{}, { board: "x", thread_id: "nope" }, { board: "named", pinned: "yes" }]) {
    const viaTool = await withKey.callTool({ name: "pin_thread", arguments: args });
    assert.equal(viaTool.isError, true);
    const rest = await postPin(board, a.key, args);
    assert.equal(rest.status, 403);
    const viaRest = await rest.json();
    assert.deepEqual(toolJson(viaTool), viaRest, JSON.stringify(args));
    assert.equal(viaRest.error.code, "OAUTH_REQUIRED");
  }
  // With an OAuth token the same arguments are checked, as REST checks the body.
  const token = await oauthToken(board, { ...a, net: "10.9.9.9" });
  await using withToken = await mcpClient(server.url, token);
  await fails(withToken, "pin_thread", { board: "x" }, "INVALID_INPUT");
});

Deno.test("pin_thread's description says a raw API key cannot pin, as the call answers", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const a = await register(board);
  await using client = await mcpClient(server.url, a.key);
  const pin = (await client.listTools()).tools.find((t) => t.name === "pin_thread")!;
  // An agent connected with its key learns before earning veteran status that pins need OAuth.
  assert.match(pin.description!, /OAuth/);
  assert.match(pin.description!, /API key/);
  assert.match(pin.description!, /OAUTH_REQUIRED/);
});

Deno.test("MCP SDK client: create_post is held to the REST body's limit; the same text that fits is posted", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const a = await register(board);
  await using client = await mcpClient(server.url, a.key);
  const quotes = '"'.repeat(8192); // 8,192 bytes of text, twice that escaped as a REST body
  const refused = await client.callTool({
    name: "create_post",
    arguments: { title: "Quotes", body: quotes, request_id: idemKey() },
  });
  failed(refused, "PAYLOAD_TOO_LARGE");
  assert.equal(
    (toolJson(refused).error as { details: { limit_bytes: number } }).details.limit_bytes,
    16384,
  );
  await succeeds(client, "create_post", {
    title: "Fits",
    body: "x".repeat(8192),
    request_id: idemKey(),
  });
  const feed = await getJson(board, "/v1/posts", a.key);
  assert.deepEqual(feed.body.items.map((i: { title: string }) => i.title), ["Fits"]);
});

Deno.test("articles_submit takes the publication body as the spec gives it: its idempotency_key stands for a missing request_id", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const a = await register(board);
  await using client = await mcpClient(server.url, a.key);
  // The spec's arguments: kind, target_id, the publication body (with its idempotency_key).
  const publication = articleBody();
  const first = await succeeds(client, "articles_submit", { kind: "article", publication });
  assert.equal(first.state, "pending");
  const again = await succeeds(client, "articles_submit", { kind: "article", publication });
  assert.deepEqual([again.revision_id, again.replayed], [first.revision_id, true]);
  // The same key sent as request_id too is the same write.
  const both = await succeeds(client, "articles_submit", {
    kind: "article",
    publication,
    request_id: publication.idempotency_key,
  });
  assert.equal(both.revision_id, first.revision_id);
  // Neither: the key is asked for where the tool takes it.
  const keyless = articleBody({ title: "An article without a key" });
  delete keyless.idempotency_key;
  const r = await client.callTool({
    name: "articles_submit",
    arguments: { kind: "article", publication: keyless },
  });
  failed(r, "INVALID_INPUT");
  assert.equal((toolJson(r).error as { details: { field: string } }).details.field, "request_id");
  const list = await getJson(board, "/v1/articles/posts", a.key);
  assert.equal(list.body.items.length, 1, "one article was written");
});
