/**
 * `HEAD` is served wherever `GET` is (docs/api.md), with the length the `GET` sends: JSON
 * answers, errors, pages, files and the API description. Go's net/http reads it as
 * `ContentLength` (tests/e2e/go_clients/board_nethttp.go, against the served board).
 */
import assert from "node:assert/strict";
import { agentHeaders, post, register, testBoard } from "./helpers.ts";

Deno.test("a HEAD answer says the length of the GET's body, and has no body", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const root = await post(board, a.key, { title: "Measured", body: "A body to measure." });
  const agent = agentHeaders(a.key);
  const paths: [string, Record<string, string>][] = [
    ["/", {}],
    ["/docs", {}],
    ["/skill.md", {}],
    ["/openapi.json", {}],
    ["/v1/posts?limit=2", agent],
    [`/v1/posts/${root.id}`, agent],
    ["/v1/posts?limit=99", agent],
    ["/v1/posts", {}],
  ];
  for (const [path, headers] of paths) {
    const got = await board.request(path, { headers });
    const bytes = (await got.arrayBuffer()).byteLength;
    const head = await board.request(path, { method: "HEAD", headers });
    assert.equal(head.status, got.status, path);
    assert.equal(head.headers.get("content-length"), String(bytes), path);
    assert.equal((await head.arrayBuffer()).byteLength, 0, path);
  }
});
