/**
 * An account's OAuth connections: GET /v1/me/connections, DELETE /v1/me/connections/{id},
 * and the teardown a key rotation or revocation runs (batched, resumable after a crash,
 * tokens refused from the rotation commit on).
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { runSweeps } from "../domain/upkeep/mod.ts";
import { keys } from "../kv/keys.ts";
import { commitGate, wrapCommits } from "./commit_wrapper.ts";
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
import { GRANTS_ENDED_IN_COMMIT } from "../domain/accounts/mod.ts";
import {
  authorizeCode,
  codeGrant,
  pkce,
  refresh,
  registerClient,
  tokenRequest,
  whoami,
} from "./oauth_helpers.ts";

async function grantsOf(board: TestBoard, agentId: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of board.kv.list({ prefix: keys.oauthGrantsByAgent.range(agentId) })) {
    out.push(String(e.key[2]));
  }
  return out;
}

Deno.test("GET /v1/me/connections lists client name, created, last used and scopes; no secrets", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const [first] = await linkConnections(board, a.key, 1, "Alpha client");
  board.clock.advance(100);
  const [second] = await linkConnections(board, a.key, 1, "Beta client");
  board.clock.advance(50);
  await assertStatus(await refresh(board, first.clientId, first.tokens.refresh_token), 200);

  const res = await getJson(board, "/v1/me/connections", a.key);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const list = res.body.connections as Record<string, unknown>[];
  assert.equal(res.body.truncated, false);
  assert.deepEqual(list.map((c) => c.client_name), ["Beta client", "Alpha client"]);
  assert.deepEqual(list[0].scopes, ["board:read", "board:write"]);
  assert.equal(list[0].client_id, second.clientId);
  assert.equal(list[1].last_used_at, (list[1].created_at as number) + 150);
  assert.equal(list[0].last_used_at, list[0].created_at);
  const text = JSON.stringify(res.body);
  for (const secret of [first.tokens.access_token, first.tokens.refresh_token, a.key]) {
    assert.ok(!text.includes(secret));
  }
  assert.ok(!/pb_(?:live|at|rt)_/.test(text));
  // Another account sees none of them.
  const b = await register(board);
  assert.deepEqual((await getJson(board, "/v1/me/connections", b.key)).body.connections, []);
});

Deno.test("DELETE /v1/me/connections/{id} ends that connection at once, and only that one", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const [one, two] = await linkConnections(board, a.key, 2);
  const list = (await getJson(board, "/v1/me/connections", a.key)).body.connections;
  const target = list[0];
  const del = (key: string, id: string) =>
    board.request(`/v1/me/connections/${id}`, { method: "DELETE", headers: agentHeaders(key) });

  // Another account cannot end it.
  await assertError(await del(b.key, target.id), 404, "NOT_FOUND");
  await assertError(await del(a.key, "not-a-uuid"), 400, "INVALID_INPUT");
  const res = await del(a.key, target.id);
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { id: target.id, ended: true, client_id: one.clientId });
  await assertError(await del(a.key, target.id), 404, "NOT_FOUND");

  const remaining = (await getJson(board, "/v1/me/connections", a.key)).body.connections;
  assert.equal(remaining.length, 1);
  // Which tokens died: exactly those of the ended grant.
  const alive = await Promise.all(
    [one, two].map((c) => statusOf(whoami(board, c.tokens.access_token))),
  );
  assert.deepEqual([...alive].sort(), [200, 401]);
  const dead = alive[0] === 401 ? one : two;
  await assertStatus(await refresh(board, dead.clientId, dead.tokens.refresh_token), 400);
});

Deno.test("revoking the key ends and deletes every connection (12, more than one commit holds)", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const conns = await linkConnections(board, a.key, 12);
  assert.equal((await grantsOf(board, a.id)).length, 12);
  const res = await board.request("/v1/me/revoke", {
    method: "POST",
    headers: agentHeaders(a.key),
  });
  await assertStatus(res, 200);
  for (const c of conns) {
    assert.equal(await statusOf(whoami(board, c.tokens.access_token)), 401);
    assert.equal(await statusOf(refresh(board, c.clientId, c.tokens.refresh_token)), 400);
  }
  assert.deepEqual(await grantsOf(board, a.id), []);
  assert.equal((await board.kv.get(keys.connectionTeardowns(a.id))).value, null);
});

Deno.test("a code issued before a rotation cannot be redeemed after it", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const client = await registerClient(board);
  const { verifier, challenge } = await pkce();
  const { code } = await authorizeCode(board, client.client_id, challenge, {
    mode: "link",
    api_key: a.key,
  });
  const rot = await board.request("/v1/me/rotate-key", {
    method: "POST",
    headers: agentHeaders(a.key, { "idempotency-key": idemKey() }),
  });
  await assertStatus(rot, 200);
  const res = await tokenRequest(board, codeGrant(client.client_id, code, verifier));
  const body = await res.json();
  assert.equal(res.status, 400, JSON.stringify(body));
  assert.equal(body.error, "invalid_grant");
});

Deno.test("a teardown interrupted by a crash: tokens are refused at once, the sweep finishes it", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  let failAfter = Infinity;
  const wrap = (raw: Deno.Kv) =>
    wrapCommits(raw, (commit) => {
      if (failAfter-- <= 0) return Promise.reject(new Error("simulated crash"));
      return commit();
    });
  try {
    await using board = await boardOn(path, new ManualClock(), {}, { wrapKv: wrap });
    const a = await register(board);
    // More connections than the rotation commit deletes itself: older ones, stored directly.
    await seedGrants(board.kv, a.id, GRANTS_ENDED_IN_COMMIT + 20, board.clock.now());
    const conns = await linkConnections(board, a.key, 12);
    const held = (await grantsOf(board, a.id)).length;
    assert.ok(held > GRANTS_ENDED_IN_COMMIT);
    // The rotation commit lands (deleting the newest connections it holds); every later
    // commit (the teardown batches) fails.
    failAfter = 1;
    const error = console.error;
    const logged: unknown[] = [];
    console.error = (...args: unknown[]) => logged.push(args);
    let res: Response;
    try {
      res = await board.request("/v1/me/rotate-key", {
        method: "POST",
        headers: agentHeaders(a.key, { "idempotency-key": idemKey() }),
      });
    } finally {
      console.error = error;
    }
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(logged.length, 1, "the interrupted teardown is logged");
    failAfter = Infinity;

    // Only what the rotation commit holds was deleted, yet no token of the old key works.
    assert.equal((await grantsOf(board, a.id)).length, held - GRANTS_ENDED_IN_COMMIT);
    assert.ok((await board.kv.get(keys.connectionTeardowns(a.id))).value);
    for (const c of conns) {
      assert.equal(await statusOf(whoami(board, c.tokens.access_token)), 401);
    }
    assert.deepEqual(
      (await getJson(board, "/v1/me/connections", body.api_key)).body.connections,
      [],
    );

    // The sweep (also run at start-up) finishes the teardown; the new key's own link stays.
    const [kept] = await linkConnections(board, body.api_key, 1);
    const report = await runSweeps(board.deps);
    assert.equal(report.connection_teardowns_resumed, 1);
    assert.equal((await grantsOf(board, a.id)).length, 1);
    assert.equal((await board.kv.get(keys.connectionTeardowns(a.id))).value, null);
    assert.equal(await statusOf(whoami(board, kept.tokens.access_token)), 200);
    for (const c of conns) {
      assert.equal(await statusOf(refresh(board, c.clientId, c.tokens.refresh_token)), 400);
    }
  } finally {
    await Deno.remove(path).catch(() => {});
  }
});

Deno.test("a code exchange committed while a rotation is under way leaves no connection behind", async () => {
  const gate = commitGate();
  await using board = await boardOn(":memory:", new ManualClock(), { limitScale: 100 }, {
    wrapKv: gate.wrap,
  });
  const a = await register(board);
  const client = await registerClient(board);
  const { verifier, challenge } = await pkce();
  const { code } = await authorizeCode(board, client.client_id, challenge, {
    mode: "link",
    api_key: a.key,
  });
  // The rotation has read the account and its (empty) connection index; its commit is held
  // while the exchange adds a connection linked with the old key.
  gate.holdCommit(1);
  const rotation = board.request("/v1/me/rotate-key", {
    method: "POST",
    headers: agentHeaders(a.key, { "idempotency-key": idemKey() }),
  });
  await gate.reached;
  const exchanged = await tokenRequest(board, codeGrant(client.client_id, code, verifier));
  const tokens = await exchanged.json();
  assert.equal(exchanged.status, 200, JSON.stringify(tokens));
  assert.equal((await grantsOf(board, a.id)).length, 1);
  gate.release();
  await assertStatus(await rotation, 200);
  // The rotation read the account's grant head, which the exchange rewrote: its commit failed
  // its check, and the retry saw the new connection and deleted it with the key.
  assert.deepEqual(await grantsOf(board, a.id), []);
  assert.equal(await statusOf(whoami(board, tokens.access_token)), 401);
});
