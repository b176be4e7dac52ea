/**
 * JSON-RPC batches on /mcp: refused under protocol versions without batching, and each
 * message of an accepted batch counts against the edge limits.
 */
import assert from "node:assert/strict";
import { freshNetwork, mcpPost, register, type TestBoard, testBoard } from "./helpers.ts";
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

/** POSTs raw bytes to /mcp in process, from `network`, with optional extra headers. */
async function rawRpc(
  board: TestBoard,
  key: string,
  body: BodyInit,
  network: string,
  headers: Record<string, string> = {},
) {
  const res = await board.request("/mcp", mcpPost(key, body, headers), network);
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** A UTF-8 byte-order mark followed by the JSON text of `value`. */
function withBom(value: unknown): Uint8Array<ArrayBuffer> {
  const json = new TextEncoder().encode(JSON.stringify(value));
  const bytes = new Uint8Array(json.length + 3);
  bytes.set([0xef, 0xbb, 0xbf]);
  bytes.set(json, 3);
  return bytes;
}

const batchOf = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => listTools(from + i));

Deno.test("/mcp: a byte-order mark before a batch changes nothing: refused or counted like any batch", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const net = freshNetwork();
  await t.step("a BOM batch under 2025-06-18 is refused", async () => {
    const r = await rawRpc(board, a.key, withBom(batchOf(1, 2)), net, {
      "mcp-protocol-version": "2025-06-18",
    });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, -32600);
  });
  await t.step("BOM batches count every message they run", async () => {
    const a = await register(board);
    const net = freshNetwork();
    // 300 calls a minute per network: three BOM batches of 100 run 300 messages...
    for (const from of [0, 100, 200]) {
      const r = await rawRpc(board, a.key, withBom(batchOf(from, 100)), net);
      assert.equal(r.status, 200);
      assert.equal(r.body.length, 100, "the transport ran the parsed batch");
    }
    // ...so the network has no call left.
    const next = await rawRpc(board, a.key, JSON.stringify(listTools(300)), net);
    assert.equal(next.status, 429);
    assert.equal(next.body.error.details.limit_name, "network_credential_calls_per_minute");
  });
  await t.step("a single message behind a BOM runs once", async () => {
    const r = await rawRpc(board, a.key, withBom(listTools(7)), freshNetwork());
    assert.equal(r.status, 200);
    assert.equal(r.body.id, 7);
  });
  await t.step("bodies the transport refuses are refused before anything is counted", async () => {
    const a = await register(board);
    const other = freshNetwork();
    const tooMany = await rawRpc(board, a.key, JSON.stringify(batchOf(0, 101)), other);
    assert.equal(tooMany.status, 400);
    assert.match(tooMany.body.error.message, /must not exceed 100 messages/);
    const junk = await rawRpc(board, a.key, JSON.stringify([...batchOf(0, 99), { x: 1 }]), other);
    assert.equal(junk.status, 400);
    assert.equal(junk.body.error.code, -32600);
    const bad = await rawRpc(board, a.key, "[{", other);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, -32700);
    // Nothing above charged extras: a full batch of 100 still fits with room to spare.
    for (const from of [0, 100]) {
      assert.equal(
        (await rawRpc(board, a.key, JSON.stringify(batchOf(from, 100)), other)).status,
        200,
      );
    }
  });
});

Deno.test("/mcp: batches with tokens that are no credential charge nothing (the API ceiling stays open)", async () => {
  // Scale 0.05: 15 calls a minute per network, a ceiling of 300 a minute.
  await using board = await testBoard({ limitScale: 0.05 });
  const a = await register(board);
  for (let i = 0; i < 30; i++) {
    const token = i % 2 ? `junk-token-${i}` : "pb_at_" + String(i).padStart(43, "Z");
    const r = await rawRpc(board, token, JSON.stringify(batchOf(0, 15)), freshNetwork());
    assert.equal(r.status, 401, `junk batch ${i}: ${JSON.stringify(r.body)}`);
  }
  // 30 networks x 14 extra messages would have been 420 calls, over the ceiling of 300.
  const r = await rawRpc(board, a.key, JSON.stringify(listTools(1)), freshNetwork());
  assert.equal(r.status, 200, JSON.stringify(r.body));
});

Deno.test("/mcp: a cross-origin batch charges its extra messages to the cross-origin allowance", async () => {
  // Scale 0.05: 15 calls a minute per network.
  await using board = await testBoard({ limitScale: 0.05 });
  const [attacker, visitor] = [await register(board), await register(board)];
  const net = freshNetwork();
  const origin = { origin: "https://elsewhere.example" };
  const r = await rawRpc(board, attacker.key, JSON.stringify(batchOf(0, 14)), net, origin);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  // The cross-origin allowance has one call left; the visitor's own 15 are untouched.
  assert.equal(
    (await rawRpc(board, attacker.key, JSON.stringify(batchOf(0, 2)), net, origin)).status,
    429,
  );
  for (let i = 0; i < 15; i++) {
    const own = await rawRpc(board, visitor.key, JSON.stringify(listTools(i)), net);
    assert.equal(own.status, 200, `own call ${i}: ${JSON.stringify(own.body)}`);
  }
});
