import assert from "node:assert/strict";
import { createApp } from "../routes/app.ts";
import { testBoard } from "./helpers.ts";
import {
  authorizeCode,
  authorizePath,
  exchange,
  openConsent,
  pkce,
  REDIRECT,
  refresh,
  registerClient,
  registerRequest,
  tokenRequest,
} from "./oauth_helpers.ts";

Deno.test("registration issues public clients only", async (t) => {
  await using board = await testBoard();

  await t.step("no secret; token_endpoint_auth_method forced to none", async () => {
    const res = await registerRequest(board, {
      client_name: "Desk app",
      redirect_uris: ["https://app.example/callback"],
      token_endpoint_auth_method: "client_secret_post",
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const body = await res.json();
    assert.equal(typeof body.client_id, "string");
    assert.equal(typeof body.client_id_issued_at, "number");
    assert.equal(body.client_secret, undefined);
    assert.equal(body.client_secret_expires_at, undefined);
    assert.equal(body.token_endpoint_auth_method, "none");
    assert.deepEqual(body.grant_types, ["authorization_code", "refresh_token"]);
    assert.deepEqual(body.response_types, ["code"]);
    assert.deepEqual(body.redirect_uris, ["https://app.example/callback"]);
    assert.equal(body.client_name, "Desk app");
  });

  await t.step("default scope when the client sends none; unknown scopes dropped", async () => {
    assert.equal((await registerClient(board)).scope, "board:read board:write");
    assert.equal((await registerClient(board, { scope: "board:read" })).scope, "board:read");
    assert.equal(
      (await registerClient(board, { scope: "claudeai" })).scope,
      "board:read board:write",
    );
    assert.equal(
      (await registerClient(board, { scope: "openid board:write" })).scope,
      "board:write",
    );
  });
});

Deno.test("registration accepts HTTPS, loopback and private-use redirect URIs", async (t) => {
  await using board = await testBoard();
  const accepted = [
    "https://app.example/cb",
    "http://127.0.0.1/cb",
    "http://127.0.0.1:49152/cb",
    "http://[::1]:8080/cb",
    "http://localhost:3000/oauth/callback",
    "cursor://anysphere.cursor-retrieval/callback",
  ];
  const refused = [
    "http://app.example/cb",
    "http://127.0.0.1.nip.io/cb",
    "http://10.0.0.1/cb",
    "javascript:alert(1)",
    "https://app.example/cb#frag",
    "https://user:pw@app.example/cb",
    "/relative/cb",
    // Not URIs as written: a space, a control, a non-ASCII character, or whitespace around it.
    "https://app.example/c b",
    "https://app.example/cb\n",
    " https://app.example/cb",
    "https://app.example/caf\u00e9",
  ];

  await t.step("https, loopback (any port) and private-use schemes accepted", async () => {
    for (const uri of accepted) {
      const res = await registerRequest(
        board,
        { redirect_uris: [uri] },
        `10.1.0.${accepted.indexOf(uri)}`,
      );
      assert.equal(res.status, 201, `${uri}: ${await res.clone().text()}`);
      await res.body?.cancel();
    }
  });

  await t.step("non-loopback http, script schemes, fragments refused", async () => {
    for (const uri of refused) {
      const res = await registerRequest(
        board,
        { redirect_uris: [uri] },
        `10.2.0.${refused.indexOf(uri)}`,
      );
      const body = await res.json();
      assert.equal(res.status, 400, uri);
      assert.equal(body.error, "invalid_redirect_uri", `${uri}: ${JSON.stringify(body)}`);
      assert.equal(typeof body.error_description, "string");
    }
  });

  await t.step("no redirect URI, or too many, refused", async () => {
    const none = await registerRequest(board, { redirect_uris: [] }, "10.3.0.1");
    assert.equal((await none.json()).error, "invalid_redirect_uri");
    const many = Array.from({ length: 11 }, (_, i) => `https://app.example/cb${i}`);
    const tooMany = await registerRequest(board, { redirect_uris: many }, "10.3.0.2");
    assert.equal((await tooMany.json()).error, "invalid_redirect_uri");
  });

  await t.step("other metadata problems are invalid_client_metadata", async () => {
    const grant = await registerRequest(board, {
      redirect_uris: [REDIRECT],
      grant_types: ["client_credentials"],
    }, "10.4.0.1");
    assert.equal(grant.status, 400);
    assert.equal((await grant.json()).error, "invalid_client_metadata");
    const notJson = await board.request("/oauth/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    }, "10.4.0.2");
    assert.equal(notJson.status, 400);
    assert.equal((await notJson.json()).error, "invalid_client_metadata");
  });
});

Deno.test("client registration is limited to 10 a minute per network, in KV", async () => {
  await using board = await testBoard();
  const meta = { redirect_uris: [REDIRECT] };
  for (let i = 0; i < 10; i++) {
    const res = await registerRequest(board, meta);
    await res.body?.cancel();
    assert.equal(res.status, 201, `registration ${i + 1}`);
  }
  const limited = await registerRequest(board, meta);
  assert.equal(limited.status, 429);
  assert.ok(Number(limited.headers.get("retry-after")) >= 1);
  assert.equal((await limited.json()).error, "too_many_requests");
  // A second app instance on the same KV sees the same count (not an in-memory limit).
  const second = createApp(board.deps);
  const again = await second.request("/oauth/register", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(meta),
  }, { remoteAddr: { hostname: "127.0.0.1" } });
  await again.body?.cancel();
  assert.equal(again.status, 429);
  const otherNetwork = await registerRequest(board, meta, "192.0.2.44");
  await otherNetwork.body?.cancel();
  assert.equal(otherNetwork.status, 201);
  board.clock.advance(61);
  const later = await registerRequest(board, meta);
  await later.body?.cancel();
  assert.equal(later.status, 201);
});

Deno.test("registrations that never complete an authorization expire after an hour", async (t) => {
  await using board = await testBoard();
  const unused = await registerClient(board);
  const used = await registerClient(board);
  const { verifier, challenge } = await pkce();
  const { code } = await authorizeCode(board, used.client_id, challenge);
  const tokens = await exchange(board, used.client_id, code, verifier);

  await t.step("still usable just before an hour", async () => {
    board.clock.advance(3600 - 1);
    const page = await openConsent(board, authorizePath(unused.client_id, challenge));
    assert.equal(page.res.status, 200);
  });

  await t.step("unused registration gone after an hour and its last consent page", async () => {
    // Opening the page above kept it until that request's end (15 minutes) plus a code's 2.
    board.clock.advance(15 * 60 + 120 - 1);
    const open = await openConsent(board, authorizePath(unused.client_id, challenge));
    assert.equal(open.res.status, 200, "still there while a page is open");
    board.clock.advance(15 * 60 + 120 + 1);
    const page = await openConsent(board, authorizePath(unused.client_id, challenge));
    assert.equal(page.res.status, 400);
    assert.equal(page.res.headers.get("location"), null);
    assert.match(page.html, /not registered|expired/);
    const res = await tokenRequest(board, {
      grant_type: "refresh_token",
      client_id: unused.client_id,
      refresh_token: "pb_rt_unknown",
    });
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error, "invalid_client");
  });

  await t.step("a client that completed an authorization lives on with its grant", async () => {
    board.clock.advance(5 * 86400);
    const res = await refresh(board, used.client_id, tokens.refresh_token);
    assert.equal(res.status, 200, await res.clone().text());
    await res.body?.cancel();
  });
});

Deno.test("registration refuses metadata that names a field twice", async () => {
  await using board = await testBoard();
  const res = await board.request("/oauth/register", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: '{"redirect_uris":["https://app.example/callback"],"client_name":"a","client_name":"b"}',
  });
  assert.equal(res.status, 400);
  const body = await res.json();
  assert.equal(body.error, "invalid_client_metadata");
  assert.match(body.error_description, /'client_name' twice/);
});

Deno.test("registration answers a body it cannot read as invalid client metadata", async (t) => {
  await using board = await testBoard();
  const send = (body: BodyInit, headers: Record<string, string> = {}) =>
    board.request("/oauth/register", {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
  const cases: [string, () => Promise<Response>, RegExp][] = [
    [
      "over 16 KiB",
      () => send(JSON.stringify({ redirect_uris: [REDIRECT], client_name: "x".repeat(17_000) })),
      /exceeds 16384 bytes/,
    ],
    ["compressed", () => send("{}", { "content-encoding": "gzip" }), /uncompressed/],
    ["not UTF-8", () => send(new Uint8Array([0x7b, 0xff, 0x7d])), /UTF-8/],
  ];
  for (const [name, request, message] of cases) {
    await t.step(name, async () => {
      const res = await request();
      assert.equal(res.status, 400);
      const body = await res.json();
      // RFC 7591 §3.2.2 and /openapi.json: a registration is refused with these codes only.
      assert.equal(body.error, "invalid_client_metadata");
      assert.match(body.error_description, message);
    });
  }
});
