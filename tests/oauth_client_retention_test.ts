/**
 * What an account and a network keep alive through OAuth clients: at most 20 clients a UTC day
 * complete their first authorization with one account, and 100 consents a day from one network
 * go to never-activated clients; a client only one account connected with is kept no longer
 * than an unused registration once its last connection ended: at once when the connection cap
 * ends it, after the tidy-up sweep when it was ended any other way.
 */
import assert from "node:assert/strict";
import { MAX_CONNECTIONS_PER_ACCOUNT, registerAgent } from "../domain/accounts/mod.ts";
import { runSweeps } from "../domain/upkeep/mod.ts";
import { keys } from "../kv/keys.ts";
import {
  agentHeaders,
  assertStatus,
  freshNetwork,
  getJson,
  idemKey,
  register,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { linkConnections } from "./oauth_connection_helpers.ts";
import {
  agentName,
  authorizeCode,
  authorizePath,
  codeGrant,
  exchange,
  openConsent,
  pkce,
  REDIRECT,
  registerClient,
  registerRequest,
  type Requester,
  submitConsent,
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

Deno.test("a network consents to at most 100 new applications a UTC day; known ones, other networks and the next day pass", async () => {
  await using board = await testBoard({ limitScale: 0.03 }); // 3 new applications a day
  const other: Requester = { request: (path, init) => board.request(path, init, "10.77.0.1") };
  const accounts = await Promise.all(
    [0, 1, 2, 3, 4, 5].map(async (i) =>
      await registerAgent(board.deps, {
        name: `net-clients-${i}-${crypto.randomUUID().slice(0, 6)}`,
        participation_basis: "owner_directed",
      })
    ),
  );
  const pending = async () => {
    const res = await registerRequest(board, {
      client_name: "Pending client",
      redirect_uris: [REDIRECT],
    }, freshNetwork());
    assert.equal(res.status, 201);
    return (await res.json()).client_id as string;
  };
  const { challenge, verifier } = await pkce();
  /** A consent page opened and a link form submitted from `from`. */
  const consent = async (from: Requester, clientId: string, fields: Record<string, string>) => {
    board.clock.advance(61); // the network's OAuth requests of a minute (9 at this scale)
    const page = await openConsent(from, authorizePath(clientId, challenge));
    assert.equal(page.res.status, 200);
    return await submitConsent(
      from,
      { participation_basis: "owner_directed", ...fields, csrf: page.csrf! },
      page.cookie,
    );
  };
  const link = (from: Requester, clientId: string, i: number) =>
    consent(from, clientId, { mode: "link", api_key: accounts[i].apiKey });

  const clients = [];
  for (let i = 0; i < 3; i++) {
    clients.push(await pending());
    const res = await link(board, clients[i], i);
    assert.equal(res.status, 303, await res.clone().text());
    if (i === 0) {
      const code = new URL(res.headers.get("location")!).searchParams.get("code")!;
      await exchange(board, clients[0], code, verifier);
    }
  }
  const fourth = await pending();
  const refused = await link(board, fourth, 3);
  const html = await refused.text();
  assert.equal(refused.status, 429, html);
  assert.match(html, /Your network has connected 3 new applications this UTC day/);
  const midnight = Math.ceil((board.clock.now() + 1) / 86400) * 86400;
  assert.equal(Number(refused.headers.get("retry-after")), midnight - board.clock.now());
  // Creating an agent still works; its Continue is refused the same way (no code).
  const created = await consent(board, fourth, { mode: "create", name: agentName() });
  assert.equal(created.status, 429);
  assert.equal(Number(created.headers.get("retry-after")), midnight - board.clock.now());
  const createdHtml = await created.text();
  assert.match(createdHtml, /3 new applications/);
  assert.doesNotMatch(createdHtml, /Continue again|Submit the form again/);
  assert.doesNotMatch(html, /Continue again|Submit the form again/);
  assert.equal((await board.kv.get(keys.oauthClients(fourth))).value?.activated_at, null);

  // An application connected before is not new; another network counts apart.
  assert.equal((await link(board, clients[0], 4)).status, 303);
  assert.equal((await link(other, fourth, 3)).status, 303);
  board.clock.set(midnight);
  assert.equal((await link(board, await pending(), 5)).status, 303);
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

Deno.test("connections ended by DELETE, revocation or key rotation: the sweep keeps their clients an hour", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const [deleted] = await linkConnections(board, a.key, 1);
  const [revoked] = await linkConnections(board, a.key, 1);
  const [shared] = await linkConnections(board, a.key, 1);
  const twice = await linkConnections(board, a.key, 2);
  const [rotated] = await linkConnections(board, a.key, 1);
  const other = await linkedCode(board, shared.clientId, b.key);
  await exchange(board, shared.clientId, other.code, other.verifier);
  const month = board.clock.now() + 30 * 86400;

  const list = (await getJson(board, "/v1/me/connections", a.key)).body.connections as {
    id: string;
    client_id: string;
  }[];
  const endConnection = async (clientId: string) => {
    const id = list.find((c) => c.client_id === clientId)!.id;
    await assertStatus(
      await board.request(`/v1/me/connections/${id}`, {
        method: "DELETE",
        headers: agentHeaders(a.key),
      }),
      200,
    );
  };
  await endConnection(deleted.clientId);
  await endConnection(shared.clientId);
  await endConnection(twice[0].clientId); // one of its two connections
  const revoke = await board.request("/oauth/revoke", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      token: revoked.tokens.refresh_token,
      client_id: revoked.clientId,
    }).toString(),
  });
  await assertStatus(revoke, 200);

  // Before the sweep every client keeps its month; after it, those only a used and a no
  // longer uses are kept an hour.
  const all = [deleted, revoked, shared, twice[0], rotated].map((c) => c.clientId);
  for (const id of all) assert.ok((await clientExpiry(board, id))! > month, id);
  assert.equal((await runSweeps(board.deps)).oauth_clients_released, 2);
  const hour = board.clock.now() + 3600;
  assert.equal(await clientExpiry(board, deleted.clientId), hour, "ended with DELETE");
  assert.equal(await clientExpiry(board, revoked.clientId), hour, "ended with /oauth/revoke");
  assert.ok((await clientExpiry(board, shared.clientId))! > month, "b connected with it too");
  assert.ok((await clientExpiry(board, twice[0].clientId))! > month, "another connection stands");

  // A key rotation ends the rest: the sweep releases them, the shared one still keeps its month.
  await assertStatus(
    await board.request("/v1/me/rotate-key", {
      method: "POST",
      headers: agentHeaders(a.key, { "idempotency-key": idemKey() }),
    }),
    200,
  );
  assert.equal((await runSweeps(board.deps)).oauth_clients_released, 2);
  assert.equal(await clientExpiry(board, twice[0].clientId), hour, "its last connection ended");
  assert.equal(await clientExpiry(board, rotated.clientId), hour, "ended by the rotation");
  assert.ok((await clientExpiry(board, shared.clientId))! > month);
  // Every mark is checked once: the next sweep has nothing left to do.
  assert.equal((await runSweeps(board.deps)).oauth_clients_released, 0);
  assert.equal(
    (await Array.fromAsync(board.kv.list({ prefix: keys.oauthClientReleases.range() }))).length,
    0,
  );
});
