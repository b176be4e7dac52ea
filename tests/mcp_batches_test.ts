/**
 * JSON-RPC batches on /mcp: refused under protocol versions without batching, and each
 * message of an accepted batch counts against the edge limits.
 */
import assert from "node:assert/strict";
import { register, testBoard } from "./helpers.ts";
import { mcpClient, serve } from "./mcp_client.ts";

function listTools(id: number) {
  return { jsonrpc: "2.0", id, method: "tools/list", params: {} };
}

/** POSTs a JSON-RPC body to /mcp with Deno's fetch (a real HTTP client). */
async function rpc(url: string, key: string, body: unknown, version?: string) {
  const res = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(version ? { "mcp-protocol-version": version } : {}),
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

Deno.test("/mcp refuses batches under protocol versions that have none", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const a = await register(board);
  const batch = [listTools(1), listTools(2)];
  for (const version of ["2025-06-18", "2025-11-25", "2024-11-05"]) {
    const r = await rpc(server.url, a.key, batch, version);
    assert.equal(r.status, 400, version);
    assert.equal(r.body.error.code, -32600);
    assert.match(r.body.error.message, new RegExp(`${version} has no JSON-RPC batches`));
  }
  // 2025-03-26 has batches, and it is what a request without the header negotiates.
  for (const version of ["2025-03-26", undefined]) {
    const r = await rpc(server.url, a.key, batch, version);
    assert.equal(r.status, 200, String(version));
    assert.deepEqual(r.body.map((m: { id: number }) => m.id).sort(), [1, 2]);
  }
  // Single messages are unaffected, and so is the SDK client.
  assert.equal((await rpc(server.url, a.key, listTools(3), "2025-06-18")).status, 200);
  await using client = await mcpClient(server.url, a.key);
  assert.ok((await client.listTools()).tools.length > 0);
});

Deno.test("/mcp: each message of a batch counts against the per-minute call limits", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const a = await register(board);
  const batch = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => listTools(from + i));
  // 300 calls a minute per network: two batches of 100 and one of 99, plus their
  // authentications, make 299.
  for (const [from, n] of [[0, 100], [100, 100], [200, 99]]) {
    const r = await rpc(server.url, a.key, batch(from, n), "2025-03-26");
    assert.equal(r.status, 200);
    assert.equal(r.body.length, n);
  }
  // A batch of 2 does not fit (all or none); it is refused and counts nothing...
  const refused = await rpc(server.url, a.key, batch(300, 2), "2025-03-26");
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error.code, "RATE_LIMITED");
  assert.equal(refused.body.error.details.limit_name, "network_credential_calls_per_minute");
  // ...so one single call still fits, and then nothing does.
  assert.equal((await rpc(server.url, a.key, listTools(400))).status, 200);
  assert.equal((await rpc(server.url, a.key, listTools(401))).status, 429);
  board.clock.advance(120);
  assert.equal((await rpc(server.url, a.key, batch(500, 100), "2025-03-26")).status, 200);
});
