/**
 * Client registration hardening: names under the board's text rules and isolated on the
 * consent page, a size cap per client, an instance-wide cap on registrations that never
 * complete a flow (cross-origin ones counted apart), counting only valid
 * registrations, and no open redirect through a client that never completed an
 * authorization.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { CLIENT_LIMITS } from "../domain/accounts/mod.ts";
import { freshNetwork, type TestBoard, testBoard } from "./helpers.ts";
import {
  activatedClient,
  authorizePath,
  openConsent,
  pkce,
  REDIRECT,
  registerClient,
  registerRequest,
} from "./oauth_helpers.ts";

async function refused(res: Response, error = "invalid_client_metadata") {
  const body = await res.json();
  assert.equal(res.status, 400, JSON.stringify(body));
  assert.equal(body.error, error);
  return body.error_description as string;
}

Deno.test("client_name follows the text rules: no NUL, lone surrogate, bidi or zero-width control, blank filler", async () => {
  await using board = await testBoard();
  const bad = [
    "Good\u0000App",
    "Half \ud800 surrogate",
    "Safe App \u202Egnp.exe",
    "Invisible\u200Bjoin",
    "Isolate \u2066x\u2069",
    "Mark\u200F",
    "Tab\tinside",
    "\u3164",
    "\u2800\u2800",
    "Claude\u115F\u1160(not)",
    "Half\uFFA0width",
  ];
  for (const client_name of bad) {
    const text = await refused(
      await registerRequest(board, { client_name, redirect_uris: [REDIRECT] }),
    );
    assert.match(text, /client_name/);
  }
  // Ten refused registrations counted nothing: the network still has its 10 a minute.
  for (let i = 0; i < 10; i++) {
    await registerClient(board, { client_name: `שלום App ${i}` });
  }
  const limited = await registerRequest(board, { redirect_uris: [REDIRECT] });
  await limited.body?.cancel();
  assert.equal(limited.status, 429);
});

Deno.test("client_name keeps the variation selectors of emoji, CJK and Mongolian names", async () => {
  await using board = await testBoard();
  for (
    const client_name of [
      "Notes \u2764\uFE0F", // emoji presentation
      "\u845B\u{E0100}\u57CE Reader", // an ideographic variation sequence
      "\u182E\u180B\u1823\u1829 Helper", // a Mongolian free variation selector
    ]
  ) {
    const client = await registerClient(board, { client_name });
    assert.equal(client.client_name, client_name);
  }
});

Deno.test("the consent page isolates the application's name with <bdi>", async () => {
  await using board = await testBoard();
  const client = await registerClient(board, { client_name: "مساعد Helper" });
  const { challenge } = await pkce();
  const page = await openConsent(board, authorizePath(client.client_id, challenge));
  assert.equal(page.res.status, 200);
  assert.ok(page.html.includes("<bdi>مساعد Helper</bdi>"), page.html);
});

Deno.test("a registration stores at most 4 KB", async () => {
  await using board = await testBoard();
  const long = (i: number) => `https://app.example/callback/${i}/${"x".repeat(600)}`;
  const uris = Array.from({ length: 7 }, (_, i) => long(i));
  const text = await refused(await registerRequest(board, { redirect_uris: uris }));
  assert.match(text, /at most 4096/);
  const ok = await registerClient(board, { redirect_uris: uris.slice(0, 5) });
  const stored = await board.kv.get(keys.oauthClients(ok.client_id));
  assert.ok(JSON.stringify(stored.value).length <= CLIENT_LIMITS.recordBytes);
});

/** Registers one client from `network` (optionally from another site's page); the status. */
async function registrationStatus(board: TestBoard, network: string, origin?: string) {
  const res = origin === undefined
    ? await registerRequest(board, { redirect_uris: [REDIRECT] }, network)
    : await board.request("/oauth/register", {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    }, network);
  await res.body?.cancel();
  return res.status;
}

/** `count` registrations that never complete, 10 from each of fresh networks: all 201. */
async function pendingRegistrations(board: TestBoard, count: number, origin?: string) {
  let net = freshNetwork();
  for (let i = 0; i < count; i++) {
    if (i % 10 === 0) net = freshNetwork();
    assert.equal(await registrationStatus(board, net, origin), 201, `registration ${i + 1}`);
  }
}

Deno.test("the instance-wide cap (120 a minute) holds only registrations that never complete a flow", async (t) => {
  await using board = await testBoard();
  await t.step(
    "three networks no longer close registration: 120 from twelve networks",
    async () => {
      await pendingRegistrations(board, 120);
      const res = await registerRequest(board, { redirect_uris: [REDIRECT] }, freshNetwork());
      const body = await res.json();
      assert.equal(res.status, 429);
      assert.equal(body.error, "too_many_requests");
      assert.match(body.error_description, /on this board/);
      assert.ok(Number(res.headers.get("retry-after")) >= 1);
    },
  );
  await t.step("a client that completes its flow gives its registration back", async () => {
    board.clock.advance(61);
    await pendingRegistrations(board, 119);
    await activatedClient(board); // the 120th registration, then its first code exchange
    assert.equal(await registrationStatus(board, freshNetwork()), 201, "its slot is free again");
    assert.equal(await registrationStatus(board, freshNetwork()), 429);
  });
  await t.step("cross-origin registrations are counted apart", async () => {
    // The instance window is full for direct registrations; another site's page has its own.
    const origin = "https://elsewhere.example";
    await pendingRegistrations(board, 120, origin);
    assert.equal(await registrationStatus(board, freshNetwork(), origin), 429);
    board.clock.advance(61);
    // A network whose cross-origin allowance is spent still registers its own clients.
    const net = freshNetwork();
    for (let i = 0; i < 10; i++) assert.equal(await registrationStatus(board, net, origin), 201);
    assert.equal(await registrationStatus(board, net, origin), 429);
    for (let i = 0; i < 10; i++) assert.equal(await registrationStatus(board, net), 201);
    assert.equal(await registrationStatus(board, net), 429);
  });
});

Deno.test("authorization errors are shown on a board page, never redirected, even after self-activation", async () => {
  await using board = await testBoard();
  const evil = "https://evil.example/landing";
  const fresh = await registerClient(board, { redirect_uris: [evil] });
  // An attacker completes one flow with an agent of their own: the client is "activated".
  const known = await activatedClient(board);
  const { challenge } = await pkce();
  const cases: Record<string, string | null>[] = [
    { response_type: "token" },
    { response_type: "x" },
    { code_challenge: null },
    { resource: "https://evil.example/mcp" },
  ];
  for (const [clientId, uri] of [[fresh.client_id, evil], [known.client_id, REDIRECT]]) {
    for (const overrides of cases) {
      const res = await board.request(
        authorizePath(clientId, challenge, { redirect_uri: uri, ...overrides }),
      );
      const html = await res.text();
      assert.equal(res.status, 400);
      assert.equal(res.headers.get("location"), null, "no redirect to the registered address");
      assert.match(res.headers.get("content-type") ?? "", /text\/html/);
      assert.match(html, /did not send your browser back/);
      assert.ok(html.includes(`<a href="${uri}?error=`), "a link back to the application");
    }
  }
});

Deno.test("software_id and software_version are cut between characters, never inside an emoji", async () => {
  await using board = await testBoard();
  const res = await registerRequest(board, {
    redirect_uris: [REDIRECT],
    software_id: `${"a".repeat(199)}\u{1F600}`,
    software_version: `${"v".repeat(99)}\u{1F600}`,
  });
  const text = await res.text();
  assert.equal(res.status, 201, text);
  // A lone surrogate would be echoed as a "\\udXXX" escape, which serde_json refuses.
  assert.doesNotMatch(text, /\\ud[89ab]/i);
  const body = JSON.parse(text);
  assert.equal(body.software_id, "a".repeat(199));
  assert.equal(body.software_version, "v".repeat(99));
  // Under the limit, an emoji is kept whole.
  const whole = await registerRequest(board, {
    redirect_uris: [REDIRECT],
    software_id: `${"a".repeat(198)}\u{1F600}`,
  });
  assert.equal((await whole.json()).software_id, `${"a".repeat(198)}\u{1F600}`);
});
