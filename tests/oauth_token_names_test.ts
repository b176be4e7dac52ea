/**
 * OAuth tokens and codes name the records their checks read (the agent, and for tokens the
 * grant), so an access token resolves in one KV round trip and the token endpoint reads in one
 * batch; tokens and codes issued before they named them keep working until they expire.
 */
import assert from "node:assert/strict";
import { secretHash, TTL } from "../domain/accounts/mod.ts";
import { keys } from "../kv/keys.ts";
import { KvMeter, setMeterSource } from "../kv/meter.ts";
import { MAX_CONNECTIONS_PER_ACCOUNT } from "../domain/accounts/mod.ts";
import { ManualClock } from "../domain/clock.ts";
import { meteredKv } from "./bench/kv_cost.ts";
import { assertStatus, boardOn, register, statusOf, testBoard } from "./helpers.ts";
import { seedGrants } from "./oauth_connection_helpers.ts";
import {
  authorizeCode,
  codeGrant,
  connect,
  pkce,
  refresh,
  registerClient,
  tokenRequest,
  whoami,
} from "./oauth_helpers.ts";

/** A secret in the format issued before tokens named their records. */
function legacySecret(prefix = ""): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return prefix + btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** The KV round trips of one request, counted as the round-trip test counts them. */
async function roundTrips(send: () => Promise<Response>): Promise<[number, Response]> {
  const meter = new KvMeter({ lockstep: true });
  setMeterSource(() => meter);
  try {
    const res = await send();
    await res.body?.cancel();
    return [meter.roundTrips, res];
  } finally {
    setMeterSource(() => undefined);
  }
}

Deno.test("an access token names its agent and grant: one round trip, and the names are bound", async () => {
  await using board = await testBoard();
  const { tokens } = await connect(board);
  const [, agentId, grantId] = tokens.access_token.split(".");
  const [trips, res] = await roundTrips(() => whoami(board, tokens.access_token));
  assert.equal(res.status, 200);
  assert.equal(trips, 1, "the record, grant, agent and read versions in one getMany");
  // Another account's id in the token finds no record: the hash covers the names.
  const other = await register(board);
  const [secret] = tokens.access_token.split(".");
  assert.equal(await statusOf(whoami(board, `${secret}.${other.id}.${grantId}`)), 401);
  assert.equal(await statusOf(whoami(board, `${secret}.${agentId}.${other.id}`)), 401);
  assert.equal(await statusOf(whoami(board, secret)), 401);
});

Deno.test("tokens issued before tokens named their records keep working", async (t) => {
  await using board = await testBoard();
  const { clientId, tokens } = await connect(board);
  const grantId = tokens.access_token.split(".")[2];

  await t.step("an access token of the old format (checked in two round trips)", async () => {
    const named = await board.kv.get(
      keys.oauthAccessTokens(await secretHash("access", tokens.access_token)),
    );
    assert.ok(named.value);
    const legacy = legacySecret("pb_at_");
    assert.match(legacy, /^pb_at_[A-Za-z0-9_-]{43}$/);
    await board.kv.set(keys.oauthAccessTokens(await secretHash("access", legacy)), named.value);
    const [trips, res] = await roundTrips(() => whoami(board, legacy));
    assert.equal(res.status, 200);
    assert.equal(trips, 2);
  });

  await t.step("a refresh token of the old format is exchanged for named tokens", async () => {
    // As the grant stood before: its current refresh token is one of the old format.
    const legacy = legacySecret("pb_rt_");
    const hash = await secretHash("refresh", legacy);
    const old = await board.kv.get(
      keys.oauthRefreshTokens(await secretHash("refresh", tokens.refresh_token)),
    );
    const grant = await board.kv.get(keys.oauthGrants(grantId));
    assert.ok(old.value && grant.value);
    await board.kv.set(keys.oauthRefreshTokens(hash), old.value);
    await board.kv.set(keys.oauthGrants(grantId), { ...grant.value, refresh_hash: hash });
    const res = await refresh(board, clientId, legacy);
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.match(body.refresh_token, /^pb_rt_[A-Za-z0-9_-]{43}\./);
    assert.equal(await statusOf(whoami(board, body.access_token)), 200);
    // Presented again within a minute (parallel refreshes), it gets the same successor.
    const again = await refresh(board, clientId, legacy);
    assert.equal(again.status, 200);
    assert.equal((await again.json()).refresh_token, body.refresh_token);
    // A minute on, it revokes the connection, as any replaced token does.
    board.clock.advance(TTL.refreshGrace);
    assert.equal(await statusOf(refresh(board, clientId, legacy)), 400);
    assert.equal(await statusOf(whoami(board, body.access_token)), 401);
  });

  await t.step("a code of the old format is exchanged", async () => {
    const client = await registerClient(board);
    const { verifier, challenge } = await pkce();
    const a = await register(board);
    const { code } = await authorizeCode(board, client.client_id, challenge, {
      mode: "link",
      api_key: a.key,
    });
    assert.match(code, new RegExp(`^[A-Za-z0-9_-]{43}\\.${a.id}\\.[A-Za-z0-9_-]{43}$`));
    const stored = await board.kv.get(keys.oauthCodes(await secretHash("code", code)));
    assert.ok(stored.value);
    // Before codes named their agent; and before the name was tagged.
    for (const legacy of [legacySecret(), `${legacySecret()}.${a.id}`]) {
      await board.kv.set(keys.oauthCodes(await secretHash("code", legacy)), stored.value);
      const res = await tokenRequest(board, codeGrant(client.client_id, legacy, verifier));
      const body = await res.json();
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(await statusOf(whoami(board, body.access_token)), 200);
    }
  });

  await t.step("revoking an old-format refresh token ends its connection", async () => {
    const fresh = await connect(board);
    const freshGrant = fresh.tokens.access_token.split(".")[2];
    const legacy = legacySecret("pb_rt_");
    const hash = await secretHash("refresh", legacy);
    const old = await board.kv.get(
      keys.oauthRefreshTokens(await secretHash("refresh", fresh.tokens.refresh_token)),
    );
    assert.ok(old.value);
    await board.kv.set(keys.oauthRefreshTokens(hash), old.value);
    const res = await board.request("/oauth/revoke", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: legacy, client_id: fresh.clientId }).toString(),
    });
    await assertStatus(res, 200);
    assert.equal((await board.kv.get(keys.oauthGrants(freshGrant))).value, null);
    assert.equal(await statusOf(whoami(board, fresh.tokens.access_token)), 401);
  });
});

Deno.test("a made-up code naming a real account reads none of that account's records", async () => {
  let meter: ReturnType<typeof meteredKv> | undefined;
  await using board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: (raw) => (meter = meteredKv(raw)).kv,
  });
  const a = await register(board);
  await seedGrants(board.kv, a.id, MAX_CONNECTIONS_PER_ACCOUNT, board.clock.now());
  const client = await registerClient(board);
  const { verifier } = await pkce();
  // The shapes of a code naming the account: untagged, and with a tag the board did not make.
  for (const code of [`${legacySecret()}.${a.id}`, `${legacySecret()}.${a.id}.${legacySecret()}`]) {
    meter!.take();
    const res = await tokenRequest(board, codeGrant(client.client_id, code, verifier));
    const cost = meter!.take();
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error, "invalid_grant");
    // The client, the code, its use mark: not the account, its grant head or its 100 connections.
    assert.ok(cost.entriesRead <= 6, `${cost.entriesRead} entries read`);
  }
});

Deno.test("revocation: a named refresh token ends its grant, a named access token only itself", async () => {
  await using board = await testBoard();
  const { clientId, tokens } = await connect(board);
  const revoke = (token: string) =>
    board.request("/oauth/revoke", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token, client_id: clientId }).toString(),
    });
  // The access token alone: the refresh token still works.
  assert.equal(await statusOf(revoke(tokens.access_token)), 200);
  assert.equal(await statusOf(whoami(board, tokens.access_token)), 401);
  const res = await refresh(board, clientId, tokens.refresh_token);
  const next = await res.json();
  assert.equal(res.status, 200, JSON.stringify(next));
  // The refresh token: the whole connection.
  assert.equal(await statusOf(revoke(next.refresh_token)), 200);
  assert.equal(await statusOf(whoami(board, next.access_token)), 401);
  assert.equal(await statusOf(refresh(board, clientId, next.refresh_token)), 400);
});
