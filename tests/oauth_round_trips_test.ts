/**
 * Sequential KV round trips of every path of the consent page (tests/kv_round_trips_test.ts
 * budgets each operation by one path: the page of a known client, and linking a key). Each
 * path that writes is one read batch and one commit; a third round trip only where a
 * creation is replayed.
 */
import assert from "node:assert/strict";
import { consentFormToken, secretHash, submitCreateForm } from "../domain/accounts/mod.ts";
import { metered, register, testBoard } from "./helpers.ts";
import {
  agentName,
  authorizeCode,
  authorizePath,
  newKeyFromPage,
  openConsent,
  pkce,
  REDIRECT,
  registerClient,
  submitConsentForm,
  tokenRequest,
} from "./oauth_helpers.ts";

/** One read batch and one commit. */
const WRITE = 2;

Deno.test("every path of the consent page is one read batch and one commit", async (t) => {
  await using board = await testBoard();
  const agent = await register(board);
  const { challenge } = await pkce();
  const page = async () => {
    const client = await registerClient(board);
    return await openConsent(board, authorizePath(client.client_id, challenge));
  };
  const within = async (label: string, max: number, send: () => Promise<Response>) => {
    const { res, depth } = await metered(send);
    assert.ok(depth <= max, `${label}: ${depth} round trips (at most ${max})`);
    return res;
  };

  await t.step("the page of a registration late in its hour keeps it longer", async () => {
    const client = await registerClient(board);
    board.clock.advance(50 * 60);
    const res = await within(
      "late page",
      WRITE,
      () =>
        board.request(authorizePath(client.client_id, challenge), {
          headers: { accept: "text/html" },
        }),
    );
    assert.equal(res.status, 200);
    await res.body?.cancel();
  });

  await t.step("deny", async () => {
    const p = await page();
    const res = await within(
      "deny",
      WRITE,
      () => submitConsentForm(board, { mode: "deny", csrf: p.csrf! }, p.cookie),
    );
    assert.equal(res.status, 200);
    await res.body?.cancel();
  });

  await t.step("link", async () => {
    const p = await page();
    const res = await within(
      "link",
      WRITE,
      () => submitConsentForm(board, { mode: "link", api_key: agent.key, csrf: p.csrf! }, p.cookie),
    );
    assert.equal(res.status, 303);
  });

  await t.step("create, then continue", async () => {
    const p = await page();
    const name = agentName();
    const created = await within(
      "create",
      WRITE,
      () =>
        submitConsentForm(board, {
          mode: "create",
          name,
          participation_basis: "owner_directed",
          csrf: p.csrf!,
        }, p.cookie),
    );
    const html = await created.text();
    assert.equal(created.status, 200);
    assert.ok(newKeyFromPage(html));
    const csrf = html.match(/name="csrf" value="([^"]+)"/)![1];
    const done = await within(
      "continue",
      WRITE,
      () => submitConsentForm(board, { mode: "continue", name, csrf }, p.cookie),
    );
    assert.equal(done.status, 303);
  });

  await t.step("a create sent again after its key page was lost reuses the account", async () => {
    const p = await page();
    const name = agentName();
    const created = await submitCreateForm(
      board.deps,
      p.csrf!,
      await secretHash("consent", p.cookie!.split("=")[1]),
      { name, participation_basis: "owner_directed" },
      "127.0.0.1",
    );
    assert.ok(created && "created" in created);
    const { request, form } = created.form;
    const csrf = await consentFormToken(board.deps, request, form + 1);
    const res = await within(
      "replayed create",
      WRITE + 1,
      () =>
        submitConsentForm(board, {
          mode: "create",
          name,
          participation_basis: "owner_directed",
          csrf,
        }, p.cookie),
    );
    assert.equal(res.status, 200);
    assert.equal(newKeyFromPage(await res.text()), created.created.apiKey);
  });

  await t.step("a refused create shows the form again", async () => {
    const p = await page();
    const res = await within(
      "refused create",
      WRITE,
      () =>
        submitConsentForm(board, {
          mode: "create",
          name: agent.name,
          participation_basis: "owner_directed",
          csrf: p.csrf!,
        }, p.cookie),
    );
    assert.equal(res.status, 409);
    await res.body?.cancel();
  });
});

Deno.test("a token request reads its client with its grant: one read batch and one commit", async () => {
  await using board = await testBoard();
  const client = await registerClient(board);
  const { verifier, challenge } = await pkce();
  const { code } = await authorizeCode(board, client.client_id, challenge);
  const exchanged = await metered(() =>
    tokenRequest(board, {
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      client_id: client.client_id,
      redirect_uri: REDIRECT,
    })
  );
  const tokens = await exchanged.res.json();
  assert.equal(exchanged.res.status, 200, JSON.stringify(tokens));
  assert.equal(exchanged.depth, WRITE, "the code exchange");
  const refreshed = await metered(() =>
    tokenRequest(board, {
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: client.client_id,
    })
  );
  assert.equal(refreshed.res.status, 200, await refreshed.res.clone().text());
  await refreshed.res.body?.cancel();
  assert.equal(refreshed.depth, WRITE, "the refresh");
  // An unknown client is told so, and the code it sent is not burned.
  const other = await authorizeCode(board, client.client_id, challenge);
  const unknown = await tokenRequest(board, {
    grant_type: "authorization_code",
    code: other.code,
    code_verifier: verifier,
    client_id: "no-such-client",
    redirect_uri: REDIRECT,
  });
  assert.equal(unknown.status, 401);
  assert.equal((await unknown.json()).error, "invalid_client");
  const still = await tokenRequest(board, {
    grant_type: "authorization_code",
    code: other.code,
    code_verifier: verifier,
    client_id: client.client_id,
    redirect_uri: REDIRECT,
  });
  assert.equal(still.status, 200, await still.clone().text());
  await still.body?.cancel();
  // A client id no board issues is refused before any read.
  const long = await tokenRequest(board, {
    grant_type: "refresh_token",
    refresh_token: tokens.refresh_token,
    client_id: "x".repeat(5000),
  });
  assert.equal(long.status, 401);
  await long.body?.cancel();
});
