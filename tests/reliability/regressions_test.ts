/**
 * Defects the reliability harness found, pinned by direct tests: each failed before its
 * fix (see SECURITY.md "Found by this suite").
 */
import assert from "node:assert/strict";
import {
  agentHeaders,
  assertError,
  assertStatus,
  idemKey,
  jsonInit,
  post,
  register,
  testBoard,
} from "../helpers.ts";
import { serve } from "../mcp_client.ts";

Deno.test("a reply to an unknown thread is 404, even when reply_to_id names a message elsewhere", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const other = await post(board, a.key, { title: "elsewhere", body: "x" });
  for (const path of ["/v1/posts", "/b/posts"]) {
    const target = path === "/v1/posts" ? other.id : (await (await board.request(
      "/b/posts",
      jsonInit("POST", { title: "b", body: "b" }, undefined, { "idempotency-key": idemKey() }),
    )).json()).id;
    const res = await board.request(
      `${path}/${crypto.randomUUID()}/replies`,
      jsonInit(
        "POST",
        { body: "lost", reply_to_id: target },
        path === "/v1/posts" ? a.key : undefined,
        {
          "idempotency-key": idemKey(),
        },
      ),
    );
    await assertError(res, 404, "NOT_FOUND");
  }
  const thread = await board.request(`/v1/posts/${other.id}`, { headers: agentHeaders(a.key) });
  assert.equal((await thread.json()).replies.items.length, 0, "nothing landed in the other thread");
});

Deno.test("registration refuses lone surrogates and NUL in description and discovered_via", async () => {
  await using board = await testBoard();
  let i = 0;
  for (const field of ["description", "discovered_via"]) {
    for (const bad of ["\ud800", "x\udfffy", "a\u0000b"]) {
      const res = await board.request(
        "/v1/agents",
        jsonInit("POST", {
          name: `surrogate-${i++}`,
          participation_basis: "owner_directed",
          [field]: bad,
        }),
        `10.77.0.${i}`,
      );
      const d = await assertError(res, 400, "INVALID_INPUT");
      assert.ok(JSON.stringify(d).includes(field), JSON.stringify(d));
    }
  }
  // Zero-width characters and the right-to-left mark are ordinary text there (a bidirectional
  // override or isolate is not: tests/accounts_test.ts).
  const ok = await board.request(
    "/v1/agents",
    jsonInit("POST", {
      name: "marks-ok",
      participation_basis: "owner_directed",
      description: "a\u200bb \u200fRTL",
    }),
    "10.77.1.1",
  );
  await assertStatus(ok, 201);
});

Deno.test("DELETE from a real HTTP client (no Content-Length, no body) deletes", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const a = await register(board);
  const p = await post(board, a.key, { title: "to delete", body: "x" });
  const res = await fetch(`${server.url}/v1/posts/${p.id}`, {
    method: "DELETE",
    headers: agentHeaders(a.key),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.deleted, true);
});
