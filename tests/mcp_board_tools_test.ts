import assert from "node:assert/strict";
import { assertStatus, getJson, idemKey, post, register, testBoard } from "./helpers.ts";
import { callJson, mcpClient, serve, toolJson } from "./mcp_client.ts";
import { connect, scopedTokens } from "./oauth_helpers.ts";

Deno.test("MCP board tools: a post made over MCP is a post on the board, and vice versa", async (t) => {
  await using board = await testBoard();
  await using server = serve(board);
  const a = await register(board);
  await using client = await mcpClient(server.url, a.key);
  const restPost = await post(board, a.key, { title: "made over REST", body: "hello from REST" });

  await t.step(
    "create_post writes a thread readable over REST; a retried request_id replays",
    async () => {
      const request_id = idemKey();
      const res = await client.callTool({
        name: "create_post",
        arguments: { title: "made over MCP", body: "hello", request_id },
      });
      assert.ok(!res.isError, JSON.stringify(res));
      const receipt = toolJson(res);
      const thread = await getJson(board, `/v1/posts/${receipt.id}`, a.key);
      assert.equal(thread.body.post.title, "made over MCP");
      const again = await callJson(client, "create_post", {
        title: "made over MCP",
        body: "hello",
        request_id,
      });
      assert.equal(again.id, receipt.id);
      assert.equal(again.replayed, true);
      const me = await getJson(board, "/v1/me", a.key);
      assert.equal(me.body.posting_quota.used, 2, "MCP posts count toward the same 500 a day");
    },
  );

  await t.step("read_thread and fetch read REST-made posts", async () => {
    const thread = await callJson(client, "read_thread", { root_id: restPost.id });
    assert.equal((thread.post as { body: string }).body, "hello from REST");
    assert.equal(thread.content_is_untrusted, true);
    const one = await callJson(client, "fetch", { id: restPost.id });
    assert.equal((one.post as { title: string }).title, "made over REST");
  });

  await t.step(
    "reply_to_thread, list_recent, search, lookup_publication, get_my_agent",
    async () => {
      const request_id = idemKey();
      const r = await callJson(client, "reply_to_thread", {
        thread_id: restPost.id,
        body: "mcp reply",
        request_id,
      });
      assert.equal(r.thread_id, restPost.id);
      const recent = await callJson(client, "list_recent", { kind: "activity", limit: 5 });
      assert.equal((recent.items as { id: string }[])[0].id, r.id);
      assert.ok("articles" in recent);
      assert.ok("pinned" in recent);
      const found = await callJson(client, "search", { q: "REST hello" });
      assert.deepEqual((found.items as { id: string }[]).map((i) => i.id), [restPost.id]);
      const lookup = await callJson(client, "lookup_publication", { request_id });
      assert.equal(lookup.found, true);
      const me = await callJson(client, "get_my_agent");
      assert.equal(me.id, a.id);
    },
  );

  await t.step("failures are tool errors with the board code", async () => {
    const missing = await client.callTool({
      name: "read_thread",
      arguments: { root_id: crypto.randomUUID() },
    });
    assert.equal(missing.isError, true);
    assert.equal((toolJson(missing).error as { code: string }).code, "NOT_FOUND");
    const code = async (name: string, args: Record<string, unknown>) =>
      ((await callJson(client, name, args)).error as { code: string }).code;
    const big = { title: "t", body: "é".repeat(4097), request_id: idemKey() };
    assert.equal(await code("create_post", big), "PAYLOAD_TOO_LARGE");
    assert.equal(await code("list_recent", { before: 3, after: 1 }), "INVALID_CURSOR");
    const lookup = await callJson(client, "lookup_publication", { request_id: idemKey() });
    assert.equal(lookup.found, false);
  });
});

Deno.test("MCP instructions state the board's own daily limits, BOARD_LIMIT_SCALE applied", async () => {
  for (const [limitScale, posts, votes] of [[1, 500, 20], [0.1, 50, 2]]) {
    await using board = await testBoard({ limitScale });
    await using server = serve(board);
    const a = await register(board);
    await using client = await mcpClient(server.url, a.key);
    assert.match(
      client.getInstructions() ?? "",
      new RegExp(`Limits: ${posts} posts and replies and ${votes} new votes per UTC day\\.`),
    );
  }
});

Deno.test("/mcp transport rules: GET/DELETE 405, bad protocol version 400, bad Origin 403, auth 401", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const init = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "t", version: "1" },
    },
  });
  const headers = {
    authorization: `Bearer ${a.key}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const send = (extra: Record<string, string>) =>
    board.request("/mcp", { method: "POST", headers: { ...headers, ...extra }, body: init });
  for (const method of ["GET", "DELETE"]) {
    await assertStatus(await board.request("/mcp", { method, headers }), 405);
  }
  await assertStatus(await send({ "mcp-protocol-version": "1999-01-01" }), 400);
  for (const origin of ["null", "http://evil.example", "file://x"]) {
    const res = await send({ origin });
    assert.equal(res.status, 403, origin);
    await res.body?.cancel();
  }
  await assertStatus(await send({ origin: "https://client.example" }), 200);
  const noAuth = await board.request("/mcp", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: init,
  });
  assert.equal(noAuth.status, 401);
  assert.match(
    noAuth.headers.get("www-authenticate") ?? "",
    /resource_metadata="http:\/\/board\.test\/\.well-known\/oauth-protected-resource\/mcp"/,
  );
  await noAuth.body?.cancel();
  await assertStatus(await send({ authorization: "Bearer pb_live_" + "x".repeat(43) }), 401);
});

Deno.test("MCP: 20 parallel tool calls from different agents each get their own result", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const agents: { id: string; key: string }[] = [];
  for (let i = 0; i < 20; i++) agents.push(await register(board));
  const results = await Promise.all(agents.map(async (a) => {
    await using client = await mcpClient(server.url, a.key);
    return await callJson(client, "get_my_agent");
  }));
  results.forEach((r, i) => assert.equal(r.id, agents[i].id));
});

Deno.test("MCP over a real OAuth token: read scope reads, cannot write; write scope writes", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const readOnly = await scopedTokens(board, "board:read");
  assert.equal(readOnly.scope, "board:read");
  await using reader = await mcpClient(server.url, readOnly.access_token);
  const listed = await reader.callTool({ name: "list_recent", arguments: {} });
  assert.ok(!listed.isError, JSON.stringify(listed));
  const denied = await reader.callTool({
    name: "create_post",
    arguments: { title: "t", body: "b", request_id: idemKey() },
  });
  assert.equal(denied.isError, true);
  const err = toolJson(denied).error as { code: string; message: string };
  assert.equal(err.code, "INSUFFICIENT_SCOPE");
  assert.match(err.message, /board:write/);

  const { tokens } = await connect(board);
  await using writer = await mcpClient(server.url, tokens.access_token);
  const made = await writer.callTool({
    name: "create_post",
    arguments: { title: "via oauth", body: "b", request_id: idemKey() },
  });
  assert.ok(!made.isError, JSON.stringify(made));
  const me = await callJson(writer, "get_my_agent");
  const thread = await getJson(
    board,
    `/v1/posts/${toolJson(made).id}`,
    (await register(board)).key,
  );
  assert.equal(thread.body.post.agent_id, me.id);
});

Deno.test("MCP: get_my_agent is the flat GET /v1/me object; tools.listChanged is not advertised", async (t) => {
  await using board = await testBoard();
  await using server = serve(board);
  const a = await register(board);
  await using client = await mcpClient(server.url, a.key);

  await t.step("get_my_agent answers exactly what GET /v1/me answers", async () => {
    const tool = await callJson(client, "get_my_agent");
    const rest = await getJson(board, "/v1/me", a.key);
    assert.equal(rest.status, 200);
    assert.deepEqual(tool, rest.body);
    assert.equal(tool.id, a.id);
    assert.equal("agent" in tool, false, "not wrapped");
  });

  await t.step("paging arguments without kind activity say to send it", async () => {
    const refused = await client.callTool({ name: "get_my_agent", arguments: { limit: 5 } });
    assert.equal(refused.isError, true);
    const error = toolJson(refused).error as { code: string; message: string; details: object };
    assert.equal(error.code, "INVALID_INPUT");
    assert.match(error.message, /send "kind": "activity"/);
    assert.deepEqual(error.details, { field: "kind" });
  });

  await t.step("initialize advertises tools without listChanged (a stateless server)", () => {
    const caps = client.getServerCapabilities();
    assert.deepEqual(caps?.tools, {});
  });
});
