/**
 * The cap on an account's OAuth connections, and every read of its connections bounded: the
 * listing pages through the per-agent index with `limit` and `before`, and teardowns run in
 * bounded batches, even for an account that holds far more connections than the cap (stored
 * directly, as before the cap existed).
 */
import assert from "node:assert/strict";
import {
  GRANTS_ENDED_IN_COMMIT,
  markAccountsOverCap,
  MAX_CONNECTIONS_PER_ACCOUNT,
  TEARDOWN_RUN_ENTRIES,
} from "../domain/accounts/mod.ts";
import { ManualClock } from "../domain/clock.ts";
import { runSweeps } from "../domain/upkeep/mod.ts";
import { keys } from "../kv/keys.ts";
import { meteredKv } from "./bench/kv_cost.ts";
import {
  agentHeaders,
  assertError,
  assertStatus,
  boardOn,
  getJson,
  idemKey,
  register,
  statusOf,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { linkConnections, seedGrants } from "./oauth_connection_helpers.ts";
import { authorizeCode, exchange, pkce, refresh, registerClient, whoami } from "./oauth_helpers.ts";

/** How many index entries the account has (read in pages, as a test may). */
async function indexSize(board: TestBoard, agentId: string): Promise<number> {
  let n = 0;
  for await (const _ of board.kv.list({ prefix: keys.oauthGrantsByAgent.range(agentId) })) n++;
  return n;
}

Deno.test("an account holds at most 100 connections: the next one ends the oldest", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const a = await register(board);
  // A second apart: connections are ordered by when they were authorized (to the millisecond).
  const conns: Awaited<ReturnType<typeof linkConnections>> = [];
  for (let i = 0; i < MAX_CONNECTIONS_PER_ACCOUNT; i++) {
    conns.push(...await linkConnections(board, a.key, 1));
    board.clock.advance(1);
  }
  assert.equal(await indexSize(board, a.id), MAX_CONNECTIONS_PER_ACCOUNT);
  const [newest] = await linkConnections(board, a.key, 1);
  assert.equal(await indexSize(board, a.id), MAX_CONNECTIONS_PER_ACCOUNT, "still at the cap");
  // The oldest connection ended with its tokens; the second oldest and the newest stand.
  const oldest = conns[0];
  assert.equal(await statusOf(whoami(board, oldest.tokens.access_token)), 401);
  await assertStatus(await refresh(board, oldest.clientId, oldest.tokens.refresh_token), 400);
  assert.equal(await statusOf(whoami(board, conns[1].tokens.access_token)), 200);
  assert.equal(await statusOf(whoami(board, newest.tokens.access_token)), 200);
  // One page (the default limit) shows them all, newest first.
  const list = await getJson(board, "/v1/me/connections", a.key);
  assert.equal(list.status, 200);
  assert.equal(list.body.connections.length, MAX_CONNECTIONS_PER_ACCOUNT);
  assert.equal(list.body.next_before, null);
  assert.equal(list.body.truncated, false);
});

Deno.test("GET /v1/me/connections stays bounded with 1,500 connections stored before the cap", async (t) => {
  let meter: ReturnType<typeof meteredKv> | undefined;
  await using board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: (raw) => (meter = meteredKv(raw)).kv,
  });
  const a = await register(board);
  const ids = await seedGrants(board.kv, a.id, 1500, board.clock.now());
  const newestFirst = [...ids].reverse();

  await t.step("a page of 10 reads a few dozen entries, not 1,500", async () => {
    meter!.take();
    const page = await getJson(board, "/v1/me/connections?limit=10", a.key);
    const cost = meter!.take();
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.deepEqual(
      page.body.connections.map((c: { id: string }) => c.id),
      newestFirst.slice(0, 10),
    );
    assert.equal(page.body.next_before, newestFirst[9]);
    assert.equal(page.body.truncated, true);
    assert.ok(cost.entriesRead <= 60, `${cost.entriesRead} entries read`);
  });
  await t.step("the default page (100) reads a few hundred entries at most", async () => {
    meter!.take();
    const page = await getJson(board, "/v1/me/connections", a.key);
    const cost = meter!.take();
    assert.equal(page.body.connections.length, 100);
    assert.ok(cost.entriesRead <= 300, `${cost.entriesRead} entries read`);
  });
  await t.step("next_before pages on, newest first, without gaps or repeats", async () => {
    let before: string | null = null;
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const q: string = before ? `&before=${before}` : "";
      const page = await getJson(board, `/v1/me/connections?limit=25${q}`, a.key);
      seen.push(...page.body.connections.map((c: { id: string }) => c.id));
      before = page.body.next_before;
    }
    assert.deepEqual(seen, newestFirst.slice(0, 75));
  });
  await t.step("bad paging parameters are 400", async () => {
    for (
      const [q, code] of [
        ["limit=0", "INVALID_LIMIT"],
        ["limit=101", "INVALID_LIMIT"],
        ["before=12", "INVALID_CURSOR"],
        [`before=${ids[0]}&before=${ids[1]}`, "INVALID_CURSOR"],
        [`after=${ids[0]}`, "INVALID_CURSOR"],
      ]
    ) {
      const res = await board.request(`/v1/me/connections?${q}`, { headers: agentHeaders(a.key) });
      await assertError(res, 400, code);
    }
  });
});

Deno.test("teardown of 1,500 connections runs in bounded batches: rotation, then the sweep", async () => {
  let meter: ReturnType<typeof meteredKv> | undefined;
  await using board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: (raw) => (meter = meteredKv(raw)).kv,
  });
  const a = await register(board);
  await seedGrants(board.kv, a.id, 1500, board.clock.now());
  meter!.take();
  const rot = await board.request("/v1/me/rotate-key", {
    method: "POST",
    headers: agentHeaders(a.key, { "idempotency-key": idemKey() }),
  });
  const body = await rot.json();
  const cost = meter!.take();
  assert.equal(rot.status, 200, JSON.stringify(body));
  // The rotation commit deletes the newest connections it can hold (their index entries
  // read with the account), then one bounded run: its index entries and their grants.
  assert.ok(
    cost.entriesRead <= GRANTS_ENDED_IN_COMMIT + 1 + 2 * TEARDOWN_RUN_ENTRIES + 60,
    `${cost.entriesRead} read`,
  );
  assert.equal(
    await indexSize(board, a.id),
    1500 - GRANTS_ENDED_IN_COMMIT - TEARDOWN_RUN_ENTRIES,
  );
  assert.ok((await board.kv.get(keys.connectionTeardowns(a.id))).value, "the mark stays");
  // No connection of the old key shows, and none is read past the page.
  const list = await getJson(board, "/v1/me/connections?limit=5", body.api_key);
  assert.deepEqual(list.body.connections, []);
  // The sweep finishes it within its budget.
  meter!.take();
  const report = await runSweeps(board.deps);
  assert.equal(report.connection_teardowns_resumed, 1);
  assert.equal(await indexSize(board, a.id), 0);
  assert.equal((await board.kv.get(keys.connectionTeardowns(a.id))).value, null);
  assert.equal(await indexSize(board, a.id), 0);
});

Deno.test("an account stored above the cap is trimmed to its newest 100 after its next connection", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const a = await register(board);
  const ids = await seedGrants(board.kv, a.id, 400, board.clock.now());
  const [fresh] = await linkConnections(board, a.key, 1);
  assert.ok((await board.kv.get(keys.connectionTeardowns(a.id))).value, "a teardown is marked");
  const report = await runSweeps(board.deps);
  assert.equal(report.connection_teardowns_resumed, 1);
  assert.equal(await indexSize(board, a.id), MAX_CONNECTIONS_PER_ACCOUNT);
  assert.equal(await statusOf(whoami(board, fresh.tokens.access_token)), 200);
  // The newest 99 seeded ones stand with it; the older ones are gone.
  const kept = new Set<string>();
  for await (const e of board.kv.list({ prefix: keys.oauthGrantsByAgent.range(a.id) })) {
    kept.add(String(e.key[2]));
  }
  for (const id of ids.slice(-99)) assert.ok(kept.has(id));
  for (const id of ids.slice(0, -99)) assert.ok(!kept.has(id));
});

Deno.test("two code exchanges at once one below the cap leave the account at the cap", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const a = await register(board);
  await seedGrants(board.kv, a.id, MAX_CONNECTIONS_PER_ACCOUNT - 1, board.clock.now());
  // Two clients: the exchanges share no record but the account's.
  const codes = [];
  for (let i = 0; i < 2; i++) {
    const client = await registerClient(board);
    const { verifier, challenge } = await pkce();
    const { code } = await authorizeCode(board, client.client_id, challenge, {
      mode: "link",
      api_key: a.key,
    });
    codes.push({ clientId: client.client_id, code, verifier });
  }
  const both = await Promise.all(
    codes.map((c) => exchange(board, c.clientId, c.code, c.verifier)),
  );
  assert.equal(both.length, 2);
  assert.equal(await indexSize(board, a.id), MAX_CONNECTIONS_PER_ACCOUNT);
  for (const t of both) assert.equal(await statusOf(whoami(board, t.access_token)), 200);
});

Deno.test("start-up marks accounts stored above the cap once; the sweep trims them to 100", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const ids = await seedGrants(board.kv, a.id, 400, board.clock.now());
  await seedGrants(board.kv, b.id, 20, board.clock.now());
  await board.kv.delete(keys.metaConnectionCap()); // as on a store from before the cap
  assert.equal(await markAccountsOverCap(board.deps), 1);
  assert.ok((await board.kv.get(keys.connectionTeardowns(a.id))).value);
  assert.equal((await board.kv.get(keys.connectionTeardowns(b.id))).value, null);
  assert.equal(await markAccountsOverCap(board.deps), 0, "once per cap");
  await runSweeps(board.deps);
  assert.equal(await indexSize(board, a.id), MAX_CONNECTIONS_PER_ACCOUNT);
  assert.equal(await indexSize(board, b.id), 20);
  const list = await getJson(board, "/v1/me/connections", a.key);
  assert.deepEqual(
    list.body.connections.map((c: { id: string }) => c.id),
    ids.slice(-MAX_CONNECTIONS_PER_ACCOUNT).reverse(),
  );
});
