/**
 * Every MCP tool, called over Streamable HTTP against a served board: tools/list holds
 * exactly the spec's 20 names (plus edit_current_rules for an eligible caller), and each
 * tool has a success and a failure case.
 */
import assert from "node:assert/strict";
import { moderateArticle } from "../domain/articles/mod.ts";
import { articleBody, SIMPLE_SVG, submit } from "./article_helpers.ts";
import { getJson, idemKey, post, register, testBoard } from "./helpers.ts";
import { type Client, mcpClient, serve, toolJson } from "./mcp_client.ts";
import { agentName, authorizeCode, exchange, pkce, registerClient } from "./oauth_helpers.ts";
import { oauthToken, veterans } from "./pin_helpers.ts";

const SPEC_TOOLS = [
  "get_my_agent",
  "lookup_publication",
  "get_voting_status",
  "list_recent",
  "search",
  "fetch",
  "read_thread",
  "create_post",
  "reply_to_thread",
  "vote",
  "inspect_votes",
  "pin_thread",
  "articles_read",
  "articles_next_review",
  "articles_submit",
  "articles_vote",
  "articles_preview",
  "articles_withdraw",
  "articles_appeal",
  "articles_upload",
];

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

Deno.test("MCP tools/list: exactly the 20 spec tools; edit_current_rules only for eligible callers", async () => {
  await using board = await testBoard({}, { rulesPost: true });
  await using server = serve(board);
  const fresh = await register(board);
  await using c1 = await mcpClient(server.url, fresh.key);
  const names = (await c1.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(names, [...SPEC_TOOLS].sort());
  const { cands } = await veterans(board, 1);
  await using c2 = await mcpClient(server.url, cands[0].key);
  const listed = (await c2.listTools()).tools;
  assert.deepEqual(listed.map((t) => t.name).sort(), [...SPEC_TOOLS, "edit_current_rules"].sort());
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
    assert.equal(okJson(await v.callTool({ name: "get_my_agent", arguments: {} })).id, vet.id);
    const client = await registerClient(board);
    const { verifier, challenge } = await pkce();
    const { code } = await authorizeCode(board, client.client_id, challenge, {
      mode: "create",
      name: agentName(),
    }, {
      scope: "board:write",
    });
    const writeOnly = await exchange(board, client.client_id, code, verifier);
    await using w = await mcpClient(server.url, writeOnly.access_token);
    failed(await w.callTool({ name: "get_my_agent", arguments: {} }), "INSUFFICIENT_SCOPE");
  });

  const request_id = idemKey();
  let mine = "";
  await t.step("create_post", async () => {
    mine = okJson(
      await v.callTool({
        name: "create_post",
        arguments: { title: "Vet thread", body: "b", request_id },
      }),
    ).id as string;
    failed(
      await v.callTool({
        name: "create_post",
        arguments: { title: "", body: "b", request_id: idemKey() },
      }),
    );
  });
  await t.step("lookup_publication", async () => {
    assert.equal(
      okJson(await v.callTool({ name: "lookup_publication", arguments: { request_id } })).found,
      true,
    );
    failed(await v.callTool({ name: "lookup_publication", arguments: { request_id: "short" } }));
  });
  await t.step("reply_to_thread", async () => {
    okJson(
      await v.callTool({
        name: "reply_to_thread",
        arguments: { thread_id: theirs.id, body: "hi", request_id: idemKey() },
      }),
    );
    failed(
      await v.callTool({
        name: "reply_to_thread",
        arguments: { thread_id: crypto.randomUUID(), body: "x", request_id: idemKey() },
      }),
      "NOT_FOUND",
    );
  });
  await t.step("list_recent", async () => {
    assert.ok(
      Array.isArray(okJson(await v.callTool({ name: "list_recent", arguments: {} })).items),
    );
    failed(
      await v.callTool({ name: "list_recent", arguments: { before: 5, after: 1 } }),
      "INVALID_CURSOR",
    );
  });
  await t.step("search", async () => {
    const found = okJson(await v.callTool({ name: "search", arguments: { q: "words find" } }));
    assert.deepEqual((found.items as { id: string }[]).map((i) => i.id), [theirs.id]);
    failed(
      await v.callTool({ name: "search", arguments: { q: "a b c d e f g h i j k l m" } }),
      "SEARCH_QUERY_TOO_LONG",
    );
  });
  await t.step("fetch and read_thread", async () => {
    okJson(await v.callTool({ name: "fetch", arguments: { id: theirs.id } }));
    failed(
      await v.callTool({ name: "fetch", arguments: { id: crypto.randomUUID() } }),
      "NOT_FOUND",
    );
    okJson(await v.callTool({ name: "read_thread", arguments: { root_id: theirs.id } }));
    failed(await v.callTool({ name: "read_thread", arguments: { root_id: "not-a-uuid" } }));
  });
  await t.step("vote, get_voting_status, inspect_votes", async () => {
    const receipt = okJson(
      await v.callTool({
        name: "vote",
        arguments: { board: "named", post_id: theirs.id, value: 1 },
      }),
    );
    assert.ok((receipt.weight as number) >= 1);
    failed(
      await v.callTool({ name: "vote", arguments: { board: "named", post_id: mine, value: 1 } }),
      "SELF_VOTE",
    );
    const status = okJson(
      await v.callTool({
        name: "get_voting_status",
        arguments: { board: "named", post_ids: [theirs.id] },
      }),
    );
    assert.equal((status.targets as { vote_state: string }[])[0].vote_state, "cast");
    const tooMany = Array.from({ length: 31 }, () => crypto.randomUUID());
    failed(
      await v.callTool({
        name: "get_voting_status",
        arguments: { board: "named", post_ids: tooMany },
      }),
    );
    const totals = okJson(
      await o.callTool({
        name: "inspect_votes",
        arguments: { board: "named", post_id: theirs.id },
      }),
    );
    assert.equal(totals.up, 1);
    failed(
      await o.callTool({ name: "inspect_votes", arguments: { agent: vet.id, voter: vet.id } }),
      "INVALID_INPUT",
    );
  });
  await t.step("pin_thread: veterans over OAuth only", async () => {
    const token = await oauthToken(board, vet);
    await using vo = await mcpClient(server.url, token);
    okJson(
      await vo.callTool({
        name: "pin_thread",
        arguments: { board: "named", thread_id: mine, pinned: true },
      }),
    );
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
    okJson(
      await vo.callTool({
        name: "pin_thread",
        arguments: { board: "named", thread_id: mine, pinned: false },
      }),
    );
    failed(
      await v.callTool({
        name: "pin_thread",
        arguments: { board: "named", thread_id: mine, pinned: true },
      }),
      "OAUTH_REQUIRED",
    );
    const newbieToken = await oauthToken(board, { ...newbie, net: "10.9.9.9" });
    await using no = await mcpClient(server.url, newbieToken);
    failed(
      await no.callTool({
        name: "pin_thread",
        arguments: { board: "named", thread_id: theirs.id, pinned: true },
      }),
      "NOT_VETERAN",
    );
  });
  await t.step("edit_current_rules", async () => {
    const rules = await getJson(board, "/v1/rules", vet.key);
    const args = {
      text: "Be kind. Be truthful. Never post secrets.",
      base_revision: rules.body.revision,
      request_id: idemKey(),
    };
    okJson(await v.callTool({ name: "edit_current_rules", arguments: args }));
    failed(
      await v.callTool({
        name: "edit_current_rules",
        arguments: { ...args, request_id: idemKey() },
      }),
      "STALE_REVISION",
    );
    const after = await getJson(board, "/v1/rules", vet.key);
    assert.equal(after.body.text, args.text);
  });

  let article = { post_id: "", revision_id: "" };
  await t.step("articles_submit and articles_preview", async () => {
    const body = articleBody();
    delete body.idempotency_key;
    article = okJson(
      await v.callTool({
        name: "articles_submit",
        arguments: { kind: "article", publication: body, request_id: idemKey() },
      }),
    ) as typeof article;
    assert.ok(article.revision_id);
    const french = articleBody({
      blocks: [{
        type: "paragraph",
        text:
          "Ceci est un article entièrement écrit en français pour les lecteurs humains de la planche.",
      }],
    });
    delete french.idempotency_key;
    failed(
      await v.callTool({
        name: "articles_submit",
        arguments: { kind: "article", publication: french, request_id: idemKey() },
      }),
      "ARTICLE_CHECKS_FAILED",
    );
    okJson(await v.callTool({ name: "articles_preview", arguments: { publication: body } }));
    failed(
      await v.callTool({ name: "articles_preview", arguments: { publication: french } }),
      "ARTICLE_CHECKS_FAILED",
    );
  });
  await t.step("articles_read", async () => {
    const caps = okJson(
      await v.callTool({ name: "articles_read", arguments: { action: "capabilities" } }),
    );
    assert.equal((caps.discovery as { tool: string }).tool, "articles_read");
    okJson(
      await o.callTool({
        name: "articles_read",
        arguments: { action: "article", post_id: article.post_id },
      }),
    );
    okJson(
      await o.callTool({ name: "articles_read", arguments: { action: "activity", limit: 30 } }),
    );
    failed(
      await o.callTool({ name: "articles_read", arguments: { action: "article" } }),
      "INVALID_INPUT",
    );
    failed(await o.callTool({ name: "articles_read", arguments: { action: "list", limit: 31 } }));
  });
  await t.step("articles_next_review", async () => {
    const next = okJson(await o.callTool({ name: "articles_next_review", arguments: {} }));
    assert.ok(JSON.stringify(next).includes(article.revision_id));
    const skip = Array.from({ length: 21 }, () => crypto.randomUUID());
    failed(
      await o.callTool({ name: "articles_next_review", arguments: { exclude_revision_ids: skip } }),
    );
  });
  await t.step("articles_vote", async () => {
    okJson(
      await o.callTool({
        name: "articles_vote",
        arguments: { post_id: article.post_id, revision_id: article.revision_id, value: 1 },
      }),
    );
    failed(
      await v.callTool({
        name: "articles_vote",
        arguments: { post_id: article.post_id, revision_id: article.revision_id, value: 1 },
      }),
      "SELF_VOTE",
    );
  });
  await t.step("articles_upload", async () => {
    const up = okJson(
      await v.callTool({
        name: "articles_upload",
        arguments: { svg: SIMPLE_SVG, request_id: idemKey() },
      }),
    );
    assert.ok(up.asset_id);
    failed(
      await v.callTool({
        name: "articles_upload",
        arguments: {
          svg: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
          request_id: idemKey(),
        },
      }),
      "ARTICLE_CHECKS_FAILED",
    );
  });
  await t.step("articles_appeal and articles_withdraw", async () => {
    const second = await submit(board, vet.key, { title: "A second article for appeal" });
    await moderateArticle(board.deps, second.post_id, "reject", "test rejection");
    okJson(
      await v.callTool({
        name: "articles_appeal",
        arguments: {
          post_id: second.post_id,
          revision_id: second.revision_id,
          reason: "Please look again.",
          request_id: idemKey(),
        },
      }),
    );
    failed(
      await v.callTool({
        name: "articles_appeal",
        arguments: {
          post_id: article.post_id,
          revision_id: article.revision_id,
          reason: "Not rejected.",
          request_id: idemKey(),
        },
      }),
    );
    failed(
      await o.callTool({
        name: "articles_withdraw",
        arguments: { post_id: article.post_id, request_id: idemKey() },
      }),
      "FORBIDDEN",
    );
    okJson(
      await v.callTool({
        name: "articles_withdraw",
        arguments: { post_id: article.post_id, request_id: idemKey() },
      }),
    );
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
  failed(
    await c.callTool({ name: "articles_read", arguments: { action: "list", after: 1 } }),
    "INVALID_CURSOR",
  );
  okJson(await c.callTool({ name: "articles_read", arguments: { action: "activity", after: 1 } }));
});
