/**
 * What an account keeps alive through OAuth clients: at most 20 clients a UTC day complete their
 * first authorization with one account, and a client only that account connected with is kept
 * no longer than an unused registration once the connection cap has ended its last connection.
 */
import assert from "node:assert/strict";
import { MAX_CONNECTIONS_PER_ACCOUNT } from "../domain/accounts/mod.ts";
import { keys } from "../kv/keys.ts";
import { register, type TestBoard, testBoard } from "./helpers.ts";
import { linkConnections } from "./oauth_connection_helpers.ts";
import {
  authorizeCode,
  codeGrant,
  exchange,
  pkce,
  registerClient,
  tokenRequest,
} from "./oauth_helpers.ts";

/** A code for `clientId` linked to the account of `apiKey`, with its verifier. */
async function linkedCode(board: TestBoard, clientId: string, apiKey: string) {
  const { verifier, challenge } = await pkce();
  const { code } = await authorizeCode(board, clientId, challenge, {
    mode: "link",
    api_key: apiKey,
  });
  return { code, verifier };
}

/** The stored expiry of a client (Unix seconds), or null when it is gone. */
async function clientExpiry(board: TestBoard, clientId: string): Promise<number | null> {
  return (await board.kv.get(keys.oauthClients(clientId))).value?.expires_at ?? null;
}

Deno.test("an account connects at most 20 new clients a UTC day; known clients and the next day pass", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const first = await linkConnections(board, a.key, 1);
  for (let i = 1; i < 20; i++) {
    board.clock.advance(7); // under the network's 10 registrations a minute
    await linkConnections(board, a.key, 1);
  }
  board.clock.advance(7);
  const extra = await registerClient(board);
  const refused = await linkedCode(board, extra.client_id, a.key);
  const res = await tokenRequest(board, codeGrant(extra.client_id, refused.code, refused.verifier));
  const body = await res.json();
  assert.equal(res.status, 429, JSON.stringify(body));
  assert.equal(body.error, "too_many_requests");
  assert.match(body.error_description, /new applications connected for this account/);
  const midnight = Math.ceil((board.clock.now() + 1) / 86400) * 86400;
  assert.equal(Number(res.headers.get("retry-after")), midnight - board.clock.now());
  // Nothing of the refused exchange was kept: the client is still pending.
  assert.equal((await board.kv.get(keys.oauthClients(extra.client_id))).value?.activated_at, null);

  // A client the account connected with before is not new; another account is counted apart.
  const again = await linkedCode(board, first[0].clientId, a.key);
  await exchange(board, first[0].clientId, again.code, again.verifier);
  const other = await linkedCode(board, extra.client_id, b.key);
  await exchange(board, extra.client_id, other.code, other.verifier);

  board.clock.set(midnight);
  const tomorrow = await registerClient(board);
  const next = await linkedCode(board, tomorrow.client_id, a.key);
  await exchange(board, tomorrow.client_id, next.code, next.verifier);
});

Deno.test("the cap ending a client's last connection keeps that client an hour, not a month", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const a = await register(board);
  const b = await register(board);
  const conns: Awaited<ReturnType<typeof linkConnections>> = [];
  for (let i = 0; i < MAX_CONNECTIONS_PER_ACCOUNT; i++) {
    conns.push(...await linkConnections(board, a.key, 1));
    board.clock.advance(1);
  }
  // The second oldest client is also used by another account; the third by a later connection.
  const month = board.clock.now() + 30 * 86400;
  for (const c of conns.slice(0, 4)) assert.ok((await clientExpiry(board, c.clientId))! > month);
  const shared = conns[1].clientId;
  const link = await linkedCode(board, shared, b.key);
  await exchange(board, shared, link.code, link.verifier);
  // The 101st connection (the third oldest's client again) ends the oldest.
  const reused = conns[2].clientId;
  const again = await linkedCode(board, reused, a.key);
  await exchange(board, reused, again.code, again.verifier);
  const now = board.clock.now();
  assert.equal(await clientExpiry(board, conns[0].clientId), now + 3600, "only a's, ended");
  // Two more end the second and third oldest.
  for (let i = 0; i < 2; i++) await linkConnections(board, a.key, 1);
  assert.ok((await clientExpiry(board, shared))! > month, "another account connected with it");
  assert.ok((await clientExpiry(board, reused))! > month, "a newer connection of a uses it");
  assert.ok((await clientExpiry(board, conns[3].clientId))! > month, "its connection stands");

  // An hour on, the released client is gone: its registration is unknown at the token endpoint.
  board.clock.advance(3601);
  const { verifier } = await pkce();
  const res = await tokenRequest(board, codeGrant(conns[0].clientId, "x", verifier));
  assert.equal(res.status, 401);
  assert.equal((await res.json()).error, "invalid_client");
});
