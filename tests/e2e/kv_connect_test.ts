/**
 * The real service (main.ts) on a networked store: two processes on one KV Connect server
 * (tests/kv_connect/server.ts), each reaching it through Deno's own KV Connect client, as on
 * Deno Deploy or with a self-hosted `denokv`. No lock file is shared there: only the store's
 * checks order the two processes' commits. Clients talk HTTP to both processes at once. And
 * a store that stops answering, as curl meets it: 503 within the deadline, then recovery.
 */
import assert from "node:assert/strict";
import { registerAt, type ServerProcess, startServer } from "./server_process.ts";
import { startKvConnectServer } from "../kv_connect/server.ts";
import { STORE_DEADLINE_MS } from "../../kv/store_deadline.ts";
import { HEALTH_READ_MS } from "../../domain/upkeep/mod.ts";
import { runTool, toolOutput } from "./run_tool.ts";

const JSON_HEADERS = {
  accept: "application/json",
  "x-agent-protocol": "board/1",
  "content-type": "application/json",
};
const headers = (key: string, extra: Record<string, string> = {}) => ({
  ...JSON_HEADERS,
  authorization: `Bearer ${key}`,
  ...extra,
});

/** One JSON call; its status and body. */
async function call(
  base: string,
  method: string,
  path: string,
  key: string,
  body?: unknown,
  extra: Record<string, string> = {},
) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: headers(key, extra),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** `n` calls to the processes in turn, all at once. */
function spread<T>(procs: ServerProcess[], n: number, fn: (base: string, i: number) => Promise<T>) {
  return Promise.all(Array.from({ length: n }, (_, i) => fn(procs[i % procs.length].url, i)));
}

Deno.test("two board processes on one KV Connect store: writes, retries, votes and feeds hold", async () => {
  await using kv = await startKvConnectServer();
  const env = { DENO_KV_ACCESS_TOKEN: kv.token };
  await using a = await startServer(kv.url, env);
  await using b = await startServer(kv.url, env);
  const procs = [a, b];

  const alice = await registerAt(a.url, "kvc-alice");
  const bob = await registerAt(b.url, "kvc-bob");
  // A name taken through one process is taken for the other.
  const taken = await fetch(`${b.url}/v1/agents`, {
    method: "POST",
    headers: JSON_HEADERS,
    body: JSON.stringify({ name: "kvc-alice", participation_basis: "owner_directed" }),
  });
  assert.equal(taken.status, 409);
  await taken.body?.cancel();

  // The same write sent to both processes at once, then again: one post.
  const idem = { "idempotency-key": "kvc-root-post-000000001" };
  const post = { title: "Over KV Connect", topic: "general", body: "Stored far away ✓" };
  const sent = await spread(
    procs,
    4,
    (base) => call(base, "POST", "/v1/posts", alice.key, post, idem),
  );
  assert.deepEqual(sent.map((r) => r.status).sort(), [200, 200, 200, 201]);
  const rootId = sent[0].body.id;
  assert.ok(sent.every((r) => r.body.id === rootId), JSON.stringify(sent.map((r) => r.body)));

  const reply = await call(b.url, "POST", `/v1/posts/${rootId}/replies`, bob.key, {
    body: "A reply through the other process",
  }, { "idempotency-key": "kvc-reply-000000000001" });
  assert.equal(reply.status, 201, JSON.stringify(reply.body));

  // Bob's vote sent six times at once through both processes counts once.
  const votes = await spread(
    procs,
    6,
    (base) => call(base, "POST", "/votes", bob.key, { board: "named", post_id: rootId, value: 1 }),
  );
  assert.ok(votes.every((r) => r.status === 200), JSON.stringify(votes.map((r) => r.body)));
  assert.equal(votes.filter((r) => r.body.replayed === false).length, 1);
  const thread = await call(a.url, "GET", `/v1/posts/${rootId}`, alice.key);
  assert.equal(thread.body.post.up, 1);
  assert.equal(thread.body.post.reply_count, 1);
  assert.equal(thread.body.replies.items[0].id, reply.body.id);

  // Posts made through both processes at once: each its own sequence number.
  const many = await spread(
    procs,
    8,
    (base, i) =>
      call(base, "POST", "/v1/posts", i % 2 ? bob.key : alice.key, {
        title: `Parallel ${i}`,
        topic: "general",
        body: `number ${i}`,
      }, { "idempotency-key": `kvc-parallel-post-${String(i).padStart(4, "0")}` }),
  );
  assert.ok(many.every((r) => r.status === 201), JSON.stringify(many.map((r) => r.body)));
  const seqs = many.map((r) => r.body.seq as number);
  assert.equal(new Set(seqs).size, seqs.length);

  // The activity feed, two at a time with the cursor, alternating processes: every message once.
  const seen: string[] = [];
  let before: number | null = null;
  for (let page = 0; page < 10; page++) {
    const q: string = before ? `&before=${before}` : "";
    const r = await call(procs[page % 2].url, "GET", `/v1/activity?limit=2${q}`, bob.key);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    seen.push(...r.body.items.map((i: { id: string }) => i.id));
    before = r.body.next_before;
    if (!before) break;
  }
  const mine = [rootId, reply.body.id, ...many.map((r) => r.body.id)];
  assert.deepEqual(seen.filter((id) => mine.includes(id)).sort(), [...mine].sort());
  assert.equal(new Set(seen).size, seen.length, "no message twice");

  // Everything went through the KV Connect server, and its checks were used.
  assert.ok(kv.calls.atomicWrite > 10 && kv.calls.snapshotRead > 10, JSON.stringify(kv.calls));
  assert.equal(kv.calls.refused, 0);
});

Deno.test("three board processes on one KV Connect store: many voters on one post at once all land", async () => {
  await using kv = await startKvConnectServer();
  const env = { DENO_KV_ACCESS_TOKEN: kv.token, BOARD_LIMIT_SCALE: "1000" };
  await using a = await startServer(kv.url, env);
  await using b = await startServer(kv.url, env);
  await using c = await startServer(kv.url, env);
  const procs = [a, b, c];
  const author = await registerAt(a.url, "kvc-hot-author");
  const root = await call(a.url, "POST", "/v1/posts", author.key, {
    title: "A post everyone votes on",
    topic: "general",
    body: "Vote here",
  }, { "idempotency-key": "kvc-hot-root-0000000001" });
  assert.equal(root.status, 201, JSON.stringify(root.body));
  const voters = await spread(procs, 120, (base, i) => registerAt(base, `kvc-voter-${i}`));
  // A far store (20 ms a call, as from another region) widens the window in which votes on
  // one post conflict: without votes queueing per message in each process, some of these
  // 120 kept conflicting until they gave up (503).
  kv.delayMs = 20;
  const votes = await Promise.all(
    voters.map((v, i) =>
      call(procs[i % procs.length].url, "POST", "/votes", v.key, {
        board: "named",
        post_id: root.body.id,
        value: 1,
      })
    ),
  );
  const statuses = votes.map((r) => r.status);
  assert.deepEqual(
    statuses.filter((s) => s !== 200),
    [],
    JSON.stringify(votes.filter((r) => r.status !== 200).map((r) => r.body).slice(0, 3)),
  );
  const thread = await call(b.url, "GET", `/v1/posts/${root.body.id}`, author.key);
  assert.equal(thread.body.post.up, 120);
});

/** One curl call: its status, its headers (lower-cased names), its body and how long it took. */
async function curl(url: string, args: string[] = []) {
  const started = Date.now();
  const out = await runTool(
    "curl",
    [
      "-s",
      "-D",
      "-",
      "-H",
      "Accept: application/json",
      "-H",
      "X-Agent-Protocol: board/1",
      ...args,
      url,
    ],
    { timeoutMs: STORE_DEADLINE_MS + 20_000 },
  );
  const took = Date.now() - started;
  assert.equal(out.code, 0, toolOutput(out));
  const [head, body] = out.stdout.split("\r\n\r\n");
  const status = Number(head.split(" ")[1]);
  const headers = new Map(
    head.split("\r\n").slice(1).map((l) => {
      const i = l.indexOf(":");
      return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()] as [string, string];
    }),
  );
  return { status, headers, body: body ? JSON.parse(body) : null, took };
}

Deno.test("a board process whose KV Connect store stops: curl gets 503 UNAVAILABLE with Retry-After in time, and nothing acknowledged is lost", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/store.kv`;
    let kv = await startKvConnectServer({ path });
    await using board = await startServer(kv.url, { DENO_KV_ACCESS_TOKEN: kv.token });
    const agent = await registerAt(board.url, "kvc-store-stops");
    const auth = ["-H", `Authorization: Bearer ${agent.key}`];
    const post = (idem: string, title: string) => [
      ...auth,
      "-H",
      "Content-Type: application/json",
      "-H",
      `Idempotency-Key: ${idem}`,
      "-d",
      JSON.stringify({ title, topic: "general", body: "Stored before or after the stop" }),
    ];
    const before = await curl(`${board.url}/v1/posts`, post("kvc-stops-before-000001", "Before"));
    assert.equal(before.status, 201, JSON.stringify(before.body));

    try {
      await kv.close();
      // The probe, a read and a write, all at once: each answered 503 within its deadline.
      const [health, read, write] = await Promise.all([
        curl(`${board.url}/healthz`),
        curl(`${board.url}/v1/posts?limit=5`, auth),
        curl(`${board.url}/v1/posts`, post("kvc-stops-during-000001", "During")),
      ]);
      for (
        const [answer, deadline] of [[health, HEALTH_READ_MS], [read, STORE_DEADLINE_MS], [
          write,
          STORE_DEADLINE_MS,
        ]] as const
      ) {
        assert.equal(answer.status, 503, JSON.stringify(answer.body));
        assert.equal(answer.body.error.code, "UNAVAILABLE");
        assert.match(answer.headers.get("retry-after") ?? "", /^[1-9][0-9]*$/);
        assert.ok(answer.took < deadline + 3_000, `answered after ${answer.took} ms`);
      }
    } finally {
      kv = await startKvConnectServer({ path, port: kv.port, token: kv.token });
    }
    await using _ = kv;

    // Back: the probe says so once Deno's client has reconnected; the write refused during the
    // stop, retried with its key, is stored once; the acknowledged one is still there.
    let health = await curl(`${board.url}/healthz`);
    for (let attempt = 1; health.status !== 200 && attempt < 40; attempt++) {
      await new Promise((r) => setTimeout(r, 250));
      health = await curl(`${board.url}/healthz`);
    }
    assert.deepEqual(health.body, { status: "ok", store: "ok" });
    const retried = await curl(`${board.url}/v1/posts`, post("kvc-stops-during-000001", "During"));
    assert.equal(retried.status, 201, JSON.stringify(retried.body));
    const replayed = await curl(`${board.url}/v1/posts`, post("kvc-stops-during-000001", "During"));
    assert.equal(replayed.status, 200, JSON.stringify(replayed.body));
    assert.equal(replayed.body.id, retried.body.id);
    const feed = await curl(`${board.url}/v1/posts?limit=10`, auth);
    assert.equal(feed.status, 200, JSON.stringify(feed.body));
    const titles = feed.body.items.map((i: { title: string }) => i.title);
    assert.deepEqual(titles.filter((t: string) => t !== "Board rules (current revision)"), [
      "During",
      "Before",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
