/**
 * Clients that fall back to the MCP specification's default endpoints (`/authorize`,
 * `/token`, `/register`) are served exactly as at `/oauth/…`; a registration that never
 * completed a flow lives while a person has its consent page (or a new key) open; the
 * "Unknown application" page says how to make the application forget a saved registration.
 */
import assert from "node:assert/strict";
import { register, testBoard } from "./helpers.ts";
import {
  agentName,
  authorizePath,
  codeGrant,
  newKeyFromPage,
  openConsent,
  pkce,
  REDIRECT,
  refreshGrant,
  registerRequest,
  submitConsent,
  submitConsentForm,
  tokenRequest,
} from "./oauth_helpers.ts";

Deno.test("the MCP default endpoints /register, /authorize and /token are aliases", async (t) => {
  await using board = await testBoard();
  let clientId = "";
  let refresh = "";
  const { verifier, challenge } = await pkce();

  await t.step("POST /register registers a client", async () => {
    const meta = { client_name: "Default paths", redirect_uris: [REDIRECT] };
    const res = await registerRequest(board, meta, undefined, "/register");
    const body = await res.json();
    assert.equal(res.status, 201, JSON.stringify(body));
    clientId = body.client_id;
  });

  await t.step("GET /authorize shows the consent page; the form completes it", async () => {
    const path = authorizePath(clientId, challenge).replace("/oauth/authorize", "/authorize");
    assert.ok(path.startsWith("/authorize?"));
    const page = await openConsent(board, path);
    assert.equal(page.res.status, 200, page.html);
    const agent = await register(board);
    const res = await submitConsent(
      board,
      { mode: "link", api_key: agent.key, csrf: page.csrf! },
      page.cookie,
    );
    assert.equal(res.status, 303, await res.clone().text());
    const code = new URL(res.headers.get("location")!).searchParams.get("code")!;
    const tokens = await tokenRequest(
      board,
      codeGrant(clientId, code, verifier),
      undefined,
      "/token",
    );
    const body = await tokens.json();
    assert.equal(tokens.status, 200, JSON.stringify(body));
    refresh = body.refresh_token;
  });

  await t.step("POST /token refreshes (as a restarted client with saved tokens does)", async () => {
    const res = await tokenRequest(board, refreshGrant(clientId, refresh), undefined, "/token");
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.ok(body.access_token.startsWith("pb_at_"));
  });

  await t.step("/token and /register answer CORS preflights like /oauth/…", async () => {
    for (const path of ["/token", "/register"]) {
      const res = await board.request(path, {
        method: "OPTIONS",
        headers: {
          origin: "https://inspector.example",
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type",
        },
      });
      await res.body?.cancel();
      assert.equal(res.headers.get("access-control-allow-origin"), "*", path);
    }
  });
});

Deno.test("a never-completed registration lives while a person finishes", async (t) => {
  await using board = await testBoard();
  const { client_id } = await (await registerRequest(board, { redirect_uris: [REDIRECT] })).json();
  const { challenge } = await pkce();

  await t.step("a page opened near the hour's end can still be completed after it", async () => {
    board.clock.advance(55 * 60);
    const page = await openConsent(board, authorizePath(client_id, challenge));
    assert.equal(page.res.status, 200);
    board.clock.advance(12 * 60); // 67 minutes after the registration
    const agent = await register(board);
    const res = await submitConsent(
      board,
      { mode: "link", api_key: agent.key, csrf: page.csrf! },
      page.cookie,
    );
    assert.equal(res.status, 303, await res.clone().text());
    await res.body?.cancel();
  });

  await t.step("the new key page gives ten more minutes to copy the key", async () => {
    const page = await openConsent(board, authorizePath(client_id, challenge));
    board.clock.advance(14 * 60);
    const shown = await submitConsentForm(board, {
      mode: "create",
      name: agentName(),
      participation_basis: "owner_directed",
      csrf: page.csrf!,
    }, page.cookie);
    const html = await shown.text();
    assert.equal(shown.status, 200, html);
    assert.ok(newKeyFromPage(html), "the key is shown");
    assert.match(shown.headers.get("set-cookie") ?? "", /Max-Age=600/, "session renewed");
    board.clock.advance(8 * 60); // 22 minutes after the page opened (requests last 15)
    const res = await submitConsentForm(board, {
      mode: "continue",
      name: html.match(/name="name" value="([^"]+)"/)![1],
      csrf: html.match(/name="csrf" value="([^"]+)"/)![1],
    }, page.cookie);
    assert.equal(res.status, 303, await res.clone().text());
    await res.body?.cancel();
  });
});

Deno.test("the Unknown application page says how to make the application forget it", async () => {
  await using board = await testBoard();
  const { challenge } = await pkce();
  const page = await openConsent(board, authorizePath("expired-client-id", challenge));
  assert.equal(page.res.status, 400);
  assert.match(page.html, /Unknown application/);
  assert.match(page.html, /make it forget it/);
  assert.match(page.html, /removing the board(&#39;|')s server from the application/);
});
