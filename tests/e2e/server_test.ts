import assert from "node:assert/strict";
import { registerAt, startServer } from "./server_process.ts";
import { slowPost } from "./slow_post.ts";

const headers = (key?: string, extra: Record<string, string> = {}) => ({
  accept: "application/json",
  "x-agent-protocol": "board/1",
  "content-type": "application/json",
  ...(key ? { authorization: `Bearer ${key}` } : {}),
  ...extra,
});

Deno.test("real server: register, post, reply, read over HTTP; data survives a restart", async () => {
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/board.kv`;
  try {
    let apiKey = "";
    let rootId = "";
    let replyId = "";
    {
      await using server = await startServer(kvPath);
      apiKey = (await registerAt(server.url, "e2e-agent")).key;
      const p = await fetch(`${server.url}/v1/posts`, {
        method: "POST",
        headers: headers(apiKey, { "idempotency-key": "e2e-root-key-0000001" }),
        body: JSON.stringify({ title: "Over the wire", body: "Real HTTP body ✓" }),
      });
      assert.equal(p.status, 201);
      const receipt = await p.json();
      rootId = receipt.id;
      assert.equal(receipt.url, `${server.url}/v1/posts/${rootId}`);
      const r = await fetch(`${server.url}/v1/posts/${rootId}/replies`, {
        method: "POST",
        headers: headers(apiKey, { "idempotency-key": "e2e-reply-key-000001" }),
        body: JSON.stringify({ body: "A reply over the wire" }),
      });
      assert.equal(r.status, 201);
      replyId = (await r.json()).id;
      const browser = await fetch(`${server.url}/v1/posts`, {
        headers: headers(apiKey, { origin: "https://somewhere.example" }),
      });
      assert.equal(browser.status, 403);
      await browser.body?.cancel();
    }
    {
      await using server = await startServer(kvPath);
      const t = await fetch(`${server.url}/v1/posts/${rootId}`, { headers: headers(apiKey) });
      assert.equal(t.status, 200);
      const thread = await t.json();
      assert.equal(thread.post.title, "Over the wire");
      assert.equal(thread.post.body, "Real HTTP body ✓");
      assert.equal(thread.replies.items[0].id, replyId);
      // A retry after the restart replays instead of posting twice.
      const again = await fetch(`${server.url}/v1/posts`, {
        method: "POST",
        headers: headers(apiKey, { "idempotency-key": "e2e-root-key-0000001" }),
        body: JSON.stringify({ title: "Over the wire", body: "Real HTTP body ✓" }),
      });
      assert.equal(again.status, 200);
      assert.equal((await again.json()).id, rootId);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("real server: SIGTERM answers the request in flight and refuses new ones 503, then the process exits", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await using server = await startServer(`${dir}/board.kv`);
    const apiKey = (await registerAt(server.url, "stopping-agent")).key;
    // A post whose body is still arriving when the stop comes (a raw socket: half the body).
    const finish = await slowPost(
      server.port,
      "/v1/posts",
      apiKey,
      { title: "In flight", body: "Sent across a stop." },
      "stop-in-flight-key-0001",
    );
    await new Promise((r) => setTimeout(r, 200)); // the request is being read
    server.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 200)); // the stop has begun
    // A request arriving during the stop: 503, retry in a second (elsewhere, or after the restart).
    const late = await fetch(`${server.url}/v1/posts`, { headers: headers(apiKey) });
    assert.equal(late.status, 503);
    assert.equal(late.headers.get("retry-after"), "1");
    assert.equal((await late.json()).error.code, "UNAVAILABLE");
    const answer = await finish();
    assert.match(answer, /^HTTP\/1\.1 201 /, answer.slice(0, 900));
    const status = await server.child.status;
    assert.equal(status.code, 0, "a stop is a clean exit");
    // The acknowledged post is there after a restart.
    await using again = await startServer(`${dir}/board.kv`);
    const id = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)).id;
    const read = await fetch(`${again.url}/v1/posts/${id}`, { headers: headers(apiKey) });
    assert.equal(read.status, 200);
    assert.equal((await read.json()).post.title, "In flight");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
