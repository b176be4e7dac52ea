/**
 * A store that stops answering: every KV call is given up after its deadline, so a request is
 * answered 503 UNAVAILABLE instead of waiting with Deno's KV client (which retries an
 * unreachable store without end), locks held across the call are let go, and a write given up
 * is retried safely with its idempotency key, whether its commit landed late or never.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { startKvConnectServer } from "./kv_connect/server.ts";
import {
  agentHeaders,
  assertError,
  boardOn,
  idemKey,
  jsonInit,
  mcpInit,
  register,
} from "./helpers.ts";

/**
 * A KV whose calls (or only its commits), while stalled, wait for `release()` before they reach
 * the store.
 */
function stallableKv() {
  let stalled: "all" | "commits" | false = false;
  let open!: () => void;
  let gate = Promise.resolve();
  const late: Promise<unknown>[] = [];
  const hold = <T>(call: () => Promise<T>, commit = false): Promise<T> => {
    if (!stalled || (stalled === "commits" && !commit)) return call();
    const p = gate.then(call);
    late.push(p.catch(() => {}));
    return p;
  };
  const wrap = (raw: Deno.Kv): Deno.Kv =>
    new Proxy(raw, {
      get(target, prop) {
        if (prop === "get" || prop === "getMany") {
          return (...args: unknown[]) =>
            hold(() =>
              (Reflect.get(target, prop) as (...a: unknown[]) => Promise<unknown>)
                .apply(target, args)
            );
        }
        if (prop === "atomic") {
          return () => {
            const op = target.atomic();
            const commit = op.commit.bind(op);
            op.commit = () => hold(commit, true);
            return op;
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  return {
    wrap,
    stall(what: "all" | "commits" = "all") {
      stalled = what;
      gate = new Promise((r) => (open = r));
    },
    unstall() {
      stalled = false;
    },
    /** Lets the held calls through and waits until they have run. */
    async release() {
      open();
      await Promise.all(late.splice(0));
    },
  };
}

function postInit(key: string, idem: string, title: string) {
  return jsonInit("POST", { title, body: "A body" }, key, { "idempotency-key": idem });
}

async function postCount(board: Awaited<ReturnType<typeof boardOn>>, key: string) {
  const res = await board.request("/v1/posts?limit=30", { headers: agentHeaders(key) });
  assert.equal(res.status, 200);
  return (await res.json()).items.length as number;
}

Deno.test("a store that stops answering: reads and writes are 503 after the deadline, and a retried write lands once", async (t) => {
  const store = stallableKv();
  await using board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: store.wrap,
    // Short for the test, yet far above what a store in memory takes on a loaded machine.
    deadlineMs: 250,
  });
  const agent = await register(board);

  await t.step("a read the store does not answer is 503 UNAVAILABLE with Retry-After", async () => {
    store.stall();
    const res = await board.request("/v1/posts", { headers: agentHeaders(agent.key) });
    assert.ok(res.headers.get("retry-after"), "Retry-After");
    await assertError(res, 503, "UNAVAILABLE");
    store.unstall();
    await store.release();
  });

  await t.step(
    "an MCP tool call and a website page say the same, each in its own form",
    async () => {
      store.stall();
      const rpc = await board.request(
        "/mcp",
        mcpInit(agent.key, "tools/call", { name: "read_feed", arguments: {} }),
      );
      // The caller's credential could not be read: refused at the HTTP level, as REST refuses it.
      await assertError(rpc, 503, "UNAVAILABLE");
      const page = await board.request("/", { headers: { accept: "text/html" } });
      assert.equal(page.status, 503);
      assert.match(page.headers.get("content-type") ?? "", /text\/html/);
      await page.body?.cancel();
      store.unstall();
      await store.release();
    },
  );

  await t.step(
    "a post whose commit lands after it was given up: the retry replays it",
    async () => {
      const idem = idemKey();
      store.stall("commits"); // the post's reads go through; its commit is held
      const first = board.request("/v1/posts", postInit(agent.key, idem, "Late commit"));
      const res = await first;
      await assertError(res, 503, "UNAVAILABLE");
      store.unstall();
      await store.release(); // the commit given up lands now
      const again = await board.request("/v1/posts", postInit(agent.key, idem, "Late commit"));
      const body = await again.json();
      assert.equal(again.status, 200, JSON.stringify(body));
      assert.equal(body.replayed, true);
      assert.equal(await postCount(board, agent.key), 1);
    },
  );

  await t.step("a post whose retry lands first: the late commit fails its checks", async () => {
    const idem = idemKey();
    store.stall("commits");
    await assertError(
      board.request("/v1/posts", postInit(agent.key, idem, "Retried first")),
      503,
      "UNAVAILABLE",
    );
    store.unstall();
    // The post's lock was let go with the call: the retry does not wait for the held commit.
    const again = await board.request("/v1/posts", postInit(agent.key, idem, "Retried first"));
    const body = await again.json();
    assert.equal(again.status, 201, JSON.stringify(body));
    await store.release();
    assert.equal(await postCount(board, agent.key), 2);
  });
});

Deno.test({
  name:
    "a KV Connect store that goes away and comes back: 503 while it is away, posts again once it is back",
  // Deno's KV client goes on retrying the calls given up while the store is away.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    const path = `${dir}/store.kv`;
    let server = await startKvConnectServer({ path });
    const before = Deno.env.get("DENO_KV_ACCESS_TOKEN");
    Deno.env.set("DENO_KV_ACCESS_TOKEN", server.token);
    try {
      // Long enough for a loaded machine's store calls, short beside Deno's client's retries.
      const deadlineMs = 1_500;
      await using board = await boardOn(server.url, new ManualClock(), {}, { deadlineMs });
      const agent = await register(board);
      assert.equal(
        (await board.request("/v1/posts", postInit(agent.key, idemKey(), "Before"))).status,
        201,
      );
      await server.close();

      // Each request waits for one call's deadline (its first read), not for the store.
      const refusedInTime = async (request: Promise<Response>) => {
        const started = Date.now();
        await assertError(request, 503, "UNAVAILABLE");
        const took = Date.now() - started;
        assert.ok(took < deadlineMs + 2_000, `answered after ${took} ms`);
      };
      await refusedInTime(board.request("/v1/posts", { headers: agentHeaders(agent.key) }));
      const idem = idemKey();
      await refusedInTime(board.request("/v1/posts", postInit(agent.key, idem, "While away")));

      server = await startKvConnectServer({ path, port: server.port, token: server.token });
      // Retried as a client does on a 503, until Deno's client has reconnected.
      let again: Response;
      for (let attempt = 1;; attempt++) {
        again = await board.request("/v1/posts", postInit(agent.key, idem, "While away"));
        if (again.status !== 503 || attempt === 20) break;
        await again.body?.cancel();
        await new Promise((r) => setTimeout(r, 250));
      }
      const body = await again.json();
      assert.ok(again.status === 201 || body.replayed === true, JSON.stringify(body));
      assert.equal(await postCount(board, agent.key), 2);
    } finally {
      await server.close();
      if (before === undefined) Deno.env.delete("DENO_KV_ACCESS_TOKEN");
      else Deno.env.set("DENO_KV_ACCESS_TOKEN", before);
      await Deno.remove(dir, { recursive: true });
    }
  },
});
