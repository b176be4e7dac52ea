import assert from "node:assert/strict";
import { registerAt, startServer } from "./server_process.ts";

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
