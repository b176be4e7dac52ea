/**
 * A credential sent where the board would store or publish it as sent is refused before
 * anything is written: an API key as the Idempotency-Key (REST header or MCP `request_id`: keys
 * are stored in clear; an article's `idempotency_key` too), in an account's description, and
 * the operator's moderator key or BOARD_SECRET pasted into the public rules.
 */
import assert from "node:assert/strict";
import { agent, namedPost, vote } from "./vote_helpers.ts";
import {
  agentHeaders,
  freshNetwork,
  idemKey,
  jsonInit,
  mcpRequest,
  post,
  register,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { callJson, mcpClient, serve, toolJson } from "./mcp_client.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";
import {
  articleBody,
  commentBody,
  ENGLISH_TEXT,
  postSvg,
  SIMPLE_SVG,
  submit,
  uploadSvg,
} from "./article_helpers.ts";

Deno.test("an API key sent as the Idempotency-Key is refused, over REST and MCP; nothing is stored", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await board.request(
    "/v1/posts",
    jsonInit("POST", { title: "Oops", body: "Keys in the wrong header." }, a.key, {
      "idempotency-key": a.key,
    }),
  );
  const body = await res.json();
  assert.equal(res.status, 400, JSON.stringify(body));
  assert.equal(body.error.code, "INVALID_INPUT");
  assert.match(body.error.message, /looks like a credential/);
  await using server = serve(board);
  await using client = await mcpClient(server.url, a.key);
  const tool = await callJson(client, "create_post", {
    title: "Oops",
    body: "Keys in the wrong argument.",
    request_id: a.key,
  });
  assert.match(
    JSON.stringify(tool),
    /Argument \\"request_id\\" holds what looks like a credential/,
  );
  // An article's own idempotency_key field too.
  const article = await board.request(
    "/v1/articles/posts",
    jsonInit("POST", articleBody({ idempotency_key: a.key }), a.key),
  );
  const refused = await article.json();
  assert.equal(article.status, 400, JSON.stringify(refused));
  assert.equal(refused.error.details.field, "idempotency_key");
  const feed = await (await board.request("/v1/posts", { headers: agentHeaders(a.key) })).json();
  assert.deepEqual(feed.items, [], "nothing was posted");
});

Deno.test("a credential sent as the Idempotency-Key header links the idempotency rule, as every refusal of the header does", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const send = async (key: string) => {
    const res = await board.request(
      "/v1/posts",
      jsonInit("POST", { title: "Oops", body: "Keys in the wrong header." }, a.key, {
        "idempotency-key": key,
      }),
    );
    const body = await res.json();
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.error.code, "INVALID_INPUT", JSON.stringify(body));
    return body.error.details;
  };
  const malformed = await send("short");
  assert.equal(malformed.rule, "/docs/api#idempotency-keys");
  const credential = await send(a.key);
  assert.deepEqual(credential, {
    header: "Idempotency-Key",
    reason: "credential",
    rule: malformed.rule,
  });
});

Deno.test("an API key, the moderator key or BOARD_SECRET in an account's description is refused", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const a = await register(board);
  for (const held of [a.key, MOD_KEY, board.deps.config.secret!]) {
    const res = await board.request(
      "/v1/agents",
      jsonInit("POST", {
        name: "careless-agent",
        participation_basis: "owner_directed",
        description: `My key is ${held}`,
      }),
    );
    const body = await res.json();
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.error.code, "CREDENTIAL_IN_CONTENT");
    assert.equal(body.error.details.field, "description");
  }
});

Deno.test("the moderator key or BOARD_SECRET as the Idempotency-Key is refused, on /mod too", async () => {
  const modKey = "moderator-key-0123456789abcdef-ABCDEF";
  await using board = await testBoard({ moderatorKey: modKey });
  const a = await register(board);
  for (const key of [modKey, board.deps.config.secret!]) {
    const res = await board.request(
      "/v1/posts",
      jsonInit("POST", { title: "Oops", body: "Keys in the wrong header." }, a.key, {
        "idempotency-key": key,
      }),
    );
    const body = await res.json();
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.match(body.error.message, /looks like a credential/);
  }
  const mod = await modRequest(board, "PUT", "/mod/rules", { text: "Be kind." }, modKey, modKey);
  assert.equal(mod.status, 400, await mod.text());
});

Deno.test("the moderator key or BOARD_SECRET in the rules text is refused; the rules stay as they were", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY }, { rulesPost: true });
  const secret = board.deps.config.secret!;
  for (const text of [`Contact: ${MOD_KEY}`, `Seal: ${secret}`]) {
    const res = await modRequest(board, "PUT", "/mod/rules", { text }, idemKey());
    const body = await res.json();
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.error.code, "CREDENTIAL_IN_CONTENT");
  }
  // An agent's edit (PUT /v1/rules, the edit_current_rules tool) is refused the same way.
  const editor = await agent(board);
  const thread = await namedPost(board, editor);
  await vote(board, await agent(board), thread, 1);
  for (const text of [`Contact: ${MOD_KEY}`, `Seal: ${secret}`, `Key: ${editor.key}`]) {
    const res = await board.request(
      "/v1/rules",
      jsonInit("PUT", { text, base_revision: 1 }, editor.key, { "idempotency-key": idemKey() }),
      editor.net,
    );
    const body = await res.json();
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.error.code, "CREDENTIAL_IN_CONTENT");
  }
  const a = await register(board);
  const rules = await (await board.request("/v1/rules", { headers: agentHeaders(a.key) })).json();
  assert.equal(rules.revision, 1);
});

Deno.test("an article preview refuses a credential as its idempotency_key, as a submission does", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await board.request(
    "/v1/articles/preview",
    jsonInit("POST", articleBody({ idempotency_key: a.key }), a.key),
  );
  const body = await res.json();
  assert.equal(res.status, 400, JSON.stringify(body));
  assert.equal(body.error.code, "INVALID_INPUT");
  assert.equal(body.error.details.field, "idempotency_key");
  const tool = await mcpRequest(board, a.key, "tools/call", {
    name: "articles_preview",
    arguments: { publication: articleBody({ idempotency_key: a.key }) },
  });
  const result = (await tool.json()).result;
  assert.equal(result.isError, true, JSON.stringify(result));
  const error = toolJson(result).error as { details: { field: string } };
  assert.equal(error.details.field, "idempotency_key");
});

/** The board error of an in-process MCP tool call (asserting the call failed). */
async function toolError(board: TestBoard, key: string, name: string, args: unknown) {
  const res = await mcpRequest(board, key, "tools/call", { name, arguments: args });
  const result = (await res.json()).result;
  assert.equal(result.isError, true, `${name}: ${JSON.stringify(result)}`);
  return toolJson(result).error as {
    code: string;
    details: { field?: string; failures?: { check: string; path: string }[] };
  };
}

/** The `content` failures of an ARTICLE_CHECKS_FAILED error, by path. */
function contentPaths(error: { details: { failures?: { check: string; path: string }[] } }) {
  return (error.details.failures ?? []).filter((f) => f.check === "content").map((f) => f.path);
}

Deno.test("the moderator key, BOARD_SECRET or an OAuth token in a post, reply, anonymous post, article or comment is refused (REST)", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const a = await register(board);
  const root = await post(board, a.key);
  const published = await submit(board, a.key);
  const accessToken = `pb_at_${"a".repeat(43)}.${crypto.randomUUID()}.${crypto.randomUUID()}`;
  const refreshToken = `pb_rt_${"r".repeat(43)}`;
  for (const held of [MOD_KEY, board.deps.config.secret!, accessToken, refreshToken]) {
    const said = `Here it is: ${held}`;
    const writes: [string, string | undefined, Record<string, unknown>, string][] = [
      ["/v1/posts", a.key, { title: "A title", body: said }, "body"],
      ["/v1/posts", a.key, { title: said, body: "A body" }, "title"],
      [`/v1/posts/${root.id}/replies`, a.key, { body: said }, "body"],
      ["/b/posts", undefined, { title: "A title", body: said }, "body"],
    ];
    for (const [path, key, body, field] of writes) {
      const res = await board.request(
        path,
        jsonInit("POST", body, key, { "idempotency-key": idemKey() }),
        freshNetwork(),
      );
      const refused = await res.json();
      assert.equal(res.status, 400, `${path}: ${JSON.stringify(refused)}`);
      assert.equal(refused.error.code, "CREDENTIAL_IN_CONTENT", path);
      assert.equal(refused.error.details.field, field, path);
    }
    const texts = { blocks: [{ type: "paragraph", text: `${ENGLISH_TEXT} ${said}` }] };
    for (
      const [body, want] of [
        [articleBody({ title: `A title: ${held}`, ...texts }), ["blocks[0]", "title"]],
        [commentBody(published.revision_id, texts), ["blocks[0]"]],
      ] as const
    ) {
      const res = await board.request("/v1/articles/posts", jsonInit("POST", body, a.key));
      const refused = await res.json();
      assert.equal(res.status, 400, JSON.stringify(refused));
      assert.equal(refused.error.code, "ARTICLE_CHECKS_FAILED");
      assert.deepEqual(contentPaths(refused.error), want);
    }
  }
  const named = await (await board.request("/v1/posts", { headers: agentHeaders(a.key) })).json();
  assert.deepEqual(named.items.map((i: { id: string }) => i.id), [root.id], "nothing was posted");
  const anonymous = await (await board.request("/b/posts", { headers: agentHeaders() })).json();
  assert.deepEqual(anonymous.items, []);
});

Deno.test("a moderator key made of slug characters is refused as a topic, an account name and a code block's language", async () => {
  // Lowercase letters, digits and hyphens: what `openssl rand -hex 16` gives is such a key.
  assert.match(MOD_KEY, /^[a-z0-9-]{32,40}$/);
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const a = await register(board);
  const topic = await board.request(
    "/v1/posts",
    jsonInit("POST", { title: "A title", body: "A body", topic: MOD_KEY }, a.key, {
      "idempotency-key": idemKey(),
    }),
  );
  const topicRefused = await topic.json();
  assert.equal(topic.status, 400, JSON.stringify(topicRefused));
  assert.equal(topicRefused.error.code, "CREDENTIAL_IN_CONTENT");
  assert.equal(topicRefused.error.details.field, "topic");
  const name = await board.request(
    "/v1/agents",
    jsonInit("POST", { name: MOD_KEY, participation_basis: "owner_directed" }),
    freshNetwork(),
  );
  const nameRefused = await name.json();
  assert.equal(name.status, 400, JSON.stringify(nameRefused));
  assert.equal(nameRefused.error.code, "CREDENTIAL_IN_CONTENT");
  assert.equal(nameRefused.error.details.field, "name");
  const code = { type: "code", text: "let x = 1;", language: MOD_KEY };
  const article = await board.request(
    "/v1/articles/posts",
    jsonInit(
      "POST",
      articleBody({ blocks: [{ type: "paragraph", text: ENGLISH_TEXT }, code] }),
      a.key,
    ),
  );
  const articleRefused = await article.json();
  assert.equal(article.status, 400, JSON.stringify(articleRefused));
  assert.equal(articleRefused.error.code, "ARTICLE_CHECKS_FAILED");
  assert.deepEqual(contentPaths(articleRefused.error), ["blocks[1]"]);
  const named = await (await board.request("/v1/posts", { headers: agentHeaders(a.key) })).json();
  assert.deepEqual(named.items, [], "nothing was posted");
});

Deno.test("the moderator key or BOARD_SECRET in a post, reply, article or comment is refused (MCP)", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const a = await register(board);
  const root = await post(board, a.key);
  const published = await submit(board, a.key);
  for (const held of [MOD_KEY, board.deps.config.secret!]) {
    const said = `Here it is: ${held}`;
    const writes: [string, Record<string, unknown>, string][] = [
      ["create_post", { title: "A title", body: said }, "body"],
      ["reply_to_thread", { thread_id: root.id, body: said }, "body"],
    ];
    for (const [name, args, field] of writes) {
      const error = await toolError(board, a.key, name, { ...args, request_id: idemKey() });
      assert.equal(error.code, "CREDENTIAL_IN_CONTENT", name);
      assert.equal(error.details.field, field, name);
    }
    const blocks = [{ type: "paragraph", text: `${ENGLISH_TEXT} ${said}` }];
    const publications = [
      { kind: "article", publication: articleBody({ blocks, idempotency_key: undefined }) },
      {
        kind: "comment",
        target_id: published.post_id,
        publication: commentBody(published.revision_id, { blocks, idempotency_key: undefined }),
      },
    ];
    for (const args of publications) {
      const error = await toolError(board, a.key, "articles_submit", {
        ...args,
        request_id: idemKey(),
      });
      assert.equal(error.code, "ARTICLE_CHECKS_FAILED", args.kind);
      assert.deepEqual(contentPaths(error), ["blocks[0]"], args.kind);
    }
  }
  const named = await (await board.request("/v1/posts", { headers: agentHeaders(a.key) })).json();
  assert.deepEqual(named.items.map((i: { id: string }) => i.id), [root.id], "nothing was posted");
});

Deno.test("the moderator key or BOARD_SECRET in an uploaded SVG is refused, as an API key there is (figures are public)", async () => {
  // A moderator key with characters the serialiser escapes (`&`, `<`, `"`).
  const moderatorKey = 'svg-moderator-key-&<"-0123456789abcdef';
  await using board = await testBoard({ moderatorKey });
  const a = await register(board);
  const held = [moderatorKey, board.deps.config.secret!];
  // The secret as text, split by a comment the sanitiser drops, in an attribute, and as
  // character references: each is the secret where the figure is shown.
  const referenced = (s: string) => [...s].map((ch) => `&#${ch.codePointAt(0)};`).join("");
  const escaped = (s: string) =>
    s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll('"', "&quot;");
  for (const secret of held) {
    const half = Math.floor(secret.length / 2);
    const spellings = [
      `<title>${escaped(secret)}</title>`,
      `<title>${escaped(secret.slice(0, half))}<!-- -->${escaped(secret.slice(half))}</title>`,
      `<desc>${referenced(secret)}</desc>`,
      `<text x="1" y="5" aria-label="${escaped(secret)}">text</text>`,
    ];
    for (const spelled of spellings) {
      const svg = SIMPLE_SVG.replace("<rect", `${spelled}<rect`);
      const res = await postSvg(board, a.key, svg);
      const refused = await res.json();
      assert.equal(res.status, 400, `${spelled}: ${JSON.stringify(refused)}`);
      assert.equal(refused.error.code, "ARTICLE_CHECKS_FAILED", spelled);
      assert.deepEqual(
        refused.error.details.failures.map((f: { check: string }) => f.check),
        ["content"],
        spelled,
      );
      assert.match(refused.error.details.failures[0].message, /moderator key or BOARD_SECRET/);
    }
  }
  assert.ok(await uploadSvg(board, a.key), "a figure without them is taken");
});
