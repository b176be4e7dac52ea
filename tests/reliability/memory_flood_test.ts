/**
 * A flood of concurrent requests against the real server with the memory flags of
 * `deno task start`: without load shedding (routes/load_shedding.ts) a few thousand feed reads
 * at once take the 96 MB heap past its limit and V8 ends the process. With it, the requests
 * past what memory allows are answered 503 UNAVAILABLE with `Retry-After`, the others 200,
 * and the process keeps serving.
 */
import assert from "node:assert/strict";
import { startServer } from "../e2e/server_process.ts";
import { startFlags } from "../bench/store.ts";

const FLOOD = 3000;
/** A body of `n` words, different for each `seed`. */
const words = (n: number, seed: number) =>
  Array.from({ length: n }, (_, i) => `word${(i * 7919 + seed * 104729) % 5000}`).join(" ");
const headers = (key: string, network: string) => ({
  accept: "application/json",
  "content-type": "application/json",
  "x-agent-protocol": "board/1",
  authorization: `Bearer ${key}`,
  "x-forwarded-for": network,
});

Deno.test({
  name: "a flood of concurrent reads is shed with 503 instead of ending the process",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    await using server = await startServer(
      `${dir}/board.kv`,
      { BOARD_TRUST_PROXY: "1" },
      undefined,
      [
        ...await startFlags(),
      ],
    );
    let exited = false;
    server.child.status.then(() => (exited = true));
    // Twenty agents and a feed of thirty threads, each write from a network of its own.
    const keys: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${server.url}/v1/agents`, {
        method: "POST",
        headers: { ...headers("", `10.1.0.${i}`), authorization: "" },
        body: JSON.stringify({ name: `flood-reader-${i}`, participation_basis: "owner_directed" }),
      });
      const body = await res.json();
      assert.equal(res.status, 201, JSON.stringify(body));
      keys.push(body.api_key);
    }
    for (let i = 0; i < 30; i++) {
      const res = await fetch(`${server.url}/v1/posts`, {
        method: "POST",
        headers: {
          ...headers(keys[i % 20], `10.2.0.${i}`),
          "idempotency-key": `flood-post-${i}-${crypto.randomUUID()}`,
        },
        body: JSON.stringify({ title: `Thread ${i}`, body: words(60, i) }),
      });
      assert.equal(res.status, 201, await res.text());
    }

    const statuses: Record<string, number> = {};
    let retryAfter = true;
    await Promise.all(Array.from({ length: FLOOD }, async (_, i) => {
      const network = `2001:db8:${(i >> 8).toString(16)}:${(i & 255).toString(16)}::1`;
      try {
        const res = await fetch(`${server.url}/v1/posts?limit=30`, {
          headers: headers(keys[i % 20], network),
        });
        const body = await res.json();
        if (res.status === 503) {
          assert.equal(body.error.code, "UNAVAILABLE");
          retryAfter &&= res.headers.get("retry-after") === "1";
        }
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      } catch (e) {
        const failure = String(e).slice(0, 40);
        statuses[failure] = (statuses[failure] ?? 0) + 1;
      }
    }));
    assert.equal(exited, false, `the server ended during the flood: ${JSON.stringify(statuses)}`);
    assert.deepEqual(Object.keys(statuses).sort(), ["200", "503"], JSON.stringify(statuses));
    assert.ok(retryAfter, "every 503 says when to retry");
    // Still serving, and what was written is there.
    const after = await fetch(`${server.url}/v1/posts?limit=30`, {
      headers: headers(keys[0], "10.3.0.1"),
    });
    assert.equal(after.status, 200);
    assert.equal((await after.json()).items.length, 30);
  },
});
