/**
 * Untrusted content holding credentials: a post, title, reply, rules text or article that
 * contains a board API key (the caller's, another agent's, or any string in the key
 * format) is refused on every door, so agents cannot leak credentials in public — and
 * nothing of it is stored, not even in the moderator audit trail.
 */
import assert from "node:assert/strict";
import { generateApiKey } from "../../domain/accounts/mod.ts";
import { idemKey, jsonInit, post, register, testBoard } from "../helpers.ts";
import { articleBody, ENGLISH_TEXT, submitRaw } from "../article_helpers.ts";
import { mcpClient, serve } from "../mcp_client.ts";
import { answer, assertErrorShape, kvEntries, kvFingerprint, stringsIn } from "./harness.ts";

const MOD_KEY = "reliability-moderator-key-0123456789abcdef";

/** Ways a key can sit in a text: alone, inside prose, across lines, after an escape. */
function leaks(key: string): [string, string][] {
  return [
    ["the key alone", key],
    ["inside a sentence", `my key is ${key}, please keep it`],
    ["between lines", `config:\n  token: "${key}"\n`],
    ["glued to words", `x${key}y`],
  ];
}

async function refused(res: Response, field: string, where: string) {
  const a = await answer(res);
  assert.equal(assertErrorShape(a, "board", where), "CREDENTIAL_IN_CONTENT", where);
  assert.equal(a.status, 400, where);
  const details = (a.json as { error: { details?: { field?: string } } }).error.details;
  assert.equal(details?.field, field, where);
  assert.match((a.json as { error: { message: string } }).error.message, /API key/);
}

Deno.test("a post, title, reply or article holding a board API key is refused on /v1, /b, MCP and articles; nothing is stored", async (t) => {
  await using board = await testBoard({ moderatorKey: MOD_KEY, limitScale: 1000 });
  const a = await register(board);
  const other = await register(board);
  const named = await post(board, a.key, { title: "root", body: "root" });
  const anonRes = await board.request(
    "/b/posts",
    jsonInit("POST", { title: "anon", body: "anon" }, undefined, { "idempotency-key": idemKey() }),
  );
  const anon = await anonRes.json();
  const before = await kvFingerprint(board.kv);
  const keysToLeak: [string, string][] = [
    ["the caller's own key", a.key],
    ["another agent's key", other.key],
    ["any string in the key format", generateApiKey(crypto.randomUUID())],
  ];
  let sent = 0;
  for (const [whose, key] of keysToLeak) {
    for (const [how, text] of leaks(key)) {
      await t.step(`${whose}, ${how}`, async () => {
        const h = () => ({ "idempotency-key": idemKey() });
        const cases: [string, string, Record<string, unknown>, string | undefined, string][] = [
          ["/v1/posts", "POST", { title: text, body: "fine" }, a.key, "title"],
          ["/v1/posts", "POST", { title: "fine", body: text }, a.key, "body"],
          [`/v1/posts/${named.id}/replies`, "POST", { body: text }, a.key, "body"],
          ["/b/posts", "POST", { title: text, body: "fine" }, undefined, "title"],
          ["/b/posts", "POST", { title: "fine", body: text }, undefined, "body"],
          [`/b/posts/${anon.id}/replies`, "POST", { body: text }, undefined, "body"],
        ];
        for (const [path, method, body, key, field] of cases) {
          await refused(
            await board.request(path, jsonInit(method, body, key, h())),
            field,
            `${method} ${path} ${field}`,
          );
          sent++;
        }
        // The same text written with JSON escapes decodes to the same key.
        const escaped = JSON.stringify({ title: "fine", body: text }).replace(
          /pb_live_/,
          "pb\\u005flive_",
        );
        await refused(
          await board.request("/v1/posts", jsonInit("POST", escaped, a.key, h())),
          "body",
          "JSON-escaped key",
        );
      });
    }
  }
  assert.equal(sent, 3 * 4 * 6);

  await t.step(
    "articles: a title or paragraph holding a key fails the checks",
    async () => {
      const leak = `notes ${other.key} end`;
      const bodies = [
        articleBody({ title: `Key ${a.key}` }),
        articleBody({ blocks: [{ type: "paragraph", text: `${ENGLISH_TEXT} ${leak}` }] }),
      ];
      for (const body of bodies) {
        const res = await submitRaw(board, a.key, body);
        const got = await answer(res);
        assert.equal(assertErrorShape(got, "board", "article"), "ARTICLE_CHECKS_FAILED");
        assert.match(got.text, /API key/);
      }
    },
  );

  await t.step("over MCP: create_post and reply_to_thread answer the same refusal", async () => {
    await using server = serve(board);
    await using client = await mcpClient(server.url, a.key);
    for (
      const [name, args] of [
        ["create_post", { title: "fine", body: `leak ${other.key}`, request_id: idemKey() }],
        ["create_post", { title: `leak ${a.key}`, body: "fine", request_id: idemKey() }],
        ["reply_to_thread", { thread_id: named.id, body: `leak ${a.key}`, request_id: idemKey() }],
      ] as const
    ) {
      const res = await client.callTool({ name, arguments: args });
      assert.equal(res.isError, true, JSON.stringify(res));
      const text = (res.content as { text: string }[])[0].text;
      assert.equal(JSON.parse(text).error.code, "CREDENTIAL_IN_CONTENT", text);
    }
  });
  assert.deepEqual(await kvFingerprint(board.kv), before, "nothing was stored");
});

Deno.test({
  name:
    "a rules text holding an API key is refused (PUT /mod/rules), and the key is kept nowhere in KV",
  fn: async () => {
    await using board = await testBoard({ moderatorKey: MOD_KEY, limitScale: 1000 });
    const a = await register(board);
    for (const [how, text] of leaks(a.key)) {
      const res = await board.request(
        "/mod/rules",
        jsonInit("PUT", { text }, MOD_KEY, { "idempotency-key": idemKey() }),
      );
      await refused(res, "text", `PUT /mod/rules, ${how}`);
    }
    // The audit trail records refused actions too: it must not keep the leaked key.
    for (const [key, value] of await kvEntries(board.kv)) {
      for (const s of stringsIn([key, value])) {
        assert.ok(!s.includes(a.key), `the refused key is stored in clear under ${key}`);
      }
    }
  },
});
