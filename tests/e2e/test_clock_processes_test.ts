/**
 * The test clock (`BOARD_TEST_CLOCK=1`) with two server processes on one store: a move made
 * through one process is the time of both, and a replay of the move through the other moves
 * nothing. Before the shift was kept in the store, a move through one process left the other
 * a day behind, and one post through the moved process then refused every post through the
 * other until the day had passed (the shared publication limits held a time a day ahead).
 */
import assert from "node:assert/strict";
import { agentHeaders } from "../helpers.ts";
import { registerAt, startServer } from "./server_process.ts";

const MOD_KEY = "test-clock-moderator-key-0123456789abcdef";
const DAY = 86400;

/** The service time a process answers with (`posting_quota.as_of` of GET /v1/me). */
async function serviceNow(url: string, key: string): Promise<number> {
  const res = await fetch(`${url}/v1/me`, { headers: agentHeaders(key) });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.posting_quota.as_of;
}

async function moveClock(url: string, seconds: number, idem: string) {
  const res = await fetch(`${url}/mod/clock`, {
    method: "POST",
    headers: {
      accept: "application/json",
      "content-type": "application/json",
      authorization: `Bearer ${MOD_KEY}`,
      "idempotency-key": idem,
    },
    body: JSON.stringify({ advance_seconds: seconds }),
  });
  return { status: res.status, body: await res.json() };
}

async function post(url: string, key: string, title: string) {
  const res = await fetch(`${url}/v1/posts`, {
    method: "POST",
    headers: agentHeaders(key, {
      "content-type": "application/json",
      "idempotency-key": crypto.randomUUID(),
    }),
    body: JSON.stringify({ title, body: "Posted after the clock moved." }),
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("test clock: every process on one store keeps the time POST /mod/clock set", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const env = { BOARD_TEST_CLOCK: "1", BOARD_MODERATOR_KEY: MOD_KEY };
    await using a = await startServer(`${dir}/board.kv`, env);
    await using b = await startServer(`${dir}/board.kv`, env);
    const { key } = await registerAt(a.url, "clock-follower");
    const before = await serviceNow(b.url, key);

    const idem = crypto.randomUUID();
    const moved = await moveClock(a.url, DAY, idem);
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    const onB = await serviceNow(b.url, key);
    assert.ok(onB >= before + DAY, `the other process moved too (${onB - before} s)`);
    assert.ok(onB - moved.body.now < 60, "both at the moved time");

    // The same move sent again through the other process replays it: no second day.
    const replay = await moveClock(b.url, DAY, idem);
    assert.deepEqual([replay.status, replay.body.replayed], [200, true]);
    for (const url of [a.url, b.url]) {
      const now = await serviceNow(url, key);
      assert.ok(now < before + 2 * DAY, `${url} moved once (${now - before} s)`);
    }

    // Posts through both processes are admitted (no limit holds a time ahead of the other).
    const first = await post(a.url, key, "Through the first process");
    const second = await post(b.url, key, "Through the second process");
    assert.deepEqual([first.status, second.status], [201, 201], JSON.stringify(second.body));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
