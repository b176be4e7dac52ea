/**
 * A request with a credential that is refused and a body that stalls (the client declares
 * more than it sends and stops), on `POST /mcp` and on a write that plans while its credential
 * resolves: the refusal is answered as soon as the credential is known bad, not once the
 * body's time is up, and the server goes on serving. Real HTTP on a raw socket, so the body
 * really stalls.
 */
import assert from "node:assert/strict";
import { BODY_TIME_LIMIT_MS } from "../routes/body_reader.ts";
import { agentHeaders, register, testBoard } from "./helpers.ts";
import { serve } from "./mcp_client.ts";

/** Well within the body's time: a refusal that waited for the body cannot arrive by then. */
const PROMPT_MS = BODY_TIME_LIMIT_MS / 10;

/** The headers of `POST /mcp` but its credential. */
const MCP_HEADERS = [
  "Content-Type: application/json",
  "Accept: application/json, text/event-stream",
  "MCP-Protocol-Version: 2025-06-18",
];

/**
 * Sends `POST {path}` with `bearer` and the headers `sent`, declaring a body of 1,000 bytes
 * and sending only `start` of it, then reads the answer's head and body (up to its
 * `Content-Length`). Gives up after `PROMPT_MS`.
 */
async function stalledPost(
  port: number,
  path: string,
  sent: string[],
  bearer: string,
  start: string,
): Promise<{ ms: number; status: number; headers: Headers; body: string }> {
  const started = performance.now();
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const head = [
      `POST ${path} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      ...sent,
      `Authorization: Bearer ${bearer}`,
      "Content-Length: 1000",
      "",
      "",
    ].join("\r\n");
    await conn.write(new TextEncoder().encode(head + start));
    const decoder = new TextDecoder();
    let text = "";
    const buffer = new Uint8Array(16 * 1024);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), PROMPT_MS);
    });
    try {
      while (true) {
        const n = await Promise.race([conn.read(buffer), late]);
        assert.notEqual(n, "late", `no answer within ${PROMPT_MS} ms; received: ${text}`);
        if (n === null) break;
        text += decoder.decode(buffer.subarray(0, n as number));
        const end = text.indexOf("\r\n\r\n");
        if (end < 0) continue;
        const length = text.slice(0, end).match(/\r\ncontent-length:\s*(\d+)/i);
        if (length && text.length - end - 4 >= Number(length[1])) break;
      }
    } finally {
      clearTimeout(timer);
    }
    const ms = performance.now() - started;
    const end = text.indexOf("\r\n\r\n");
    const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
    const headers = new Headers(
      lines.map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()]),
    );
    return { ms, status: Number(statusLine.split(" ")[1]), headers, body: text.slice(end + 4) };
  } finally {
    conn.close();
  }
}

Deno.test("a refused credential is answered without waiting for a stalled body", async () => {
  await using board = await testBoard();
  await using server = serve(board);
  const revoked = await register(board);
  const revocation = await board.request("/v1/me/revoke", {
    method: "POST",
    headers: agentHeaders(revoked.key),
  });
  assert.equal(revocation.status, 200, await revocation.text());
  const unknownKey = `pb_live_${"A".repeat(22)}${"b".repeat(43)}`;
  const unknownToken = `pb_at_${"c".repeat(43)}`;

  const port = server.addr.port;
  const rpcStart = '{"jsonrpc":"2.0","id":1,"method":"tools/li';
  for (const bearer of [unknownKey, revoked.key]) {
    const answer = await stalledPost(port, "/mcp", MCP_HEADERS, bearer, rpcStart);
    assert.equal(answer.status, 401, answer.body);
    assert.ok(answer.ms < PROMPT_MS, `answered after ${answer.ms} ms`);
    assert.equal(JSON.parse(answer.body).error.code, "UNAUTHORIZED", answer.body);
    assert.match(answer.headers.get("www-authenticate") ?? "", /^Bearer error="invalid_token"/);
  }
  const token = await stalledPost(port, "/mcp", MCP_HEADERS, unknownToken, rpcStart);
  assert.equal(token.status, 401, token.body);
  assert.ok(token.ms < PROMPT_MS, `answered after ${token.ms} ms`);
  assert.equal(JSON.parse(token.body).error, "invalid_token", token.body);
  assert.match(token.headers.get("www-authenticate") ?? "", /^Bearer error="invalid_token"/);

  // A post, planned while its credential resolves, is refused as promptly.
  const posting = await stalledPost(
    port,
    "/v1/posts",
    [
      "Content-Type: application/json",
      "Accept: application/json",
      "X-Agent-Protocol: board/1",
      "Idempotency-Key: stalled-body-post-0001",
    ],
    unknownKey,
    '{"title":"A title","body":"A bo',
  );
  assert.equal(posting.status, 401, posting.body);
  assert.ok(posting.ms < PROMPT_MS, `answered after ${posting.ms} ms`);
  assert.equal(JSON.parse(posting.body).error.code, "UNAUTHORIZED", posting.body);

  // The bodies left half read broke nothing: the server answers the next request in full.
  const agent = await register(board);
  const res = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      authorization: `Bearer ${agent.key}`,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
  });
  const listed = await res.json();
  assert.equal(res.status, 200, JSON.stringify(listed));
  assert.ok(listed.result.tools.length > 0);
});
