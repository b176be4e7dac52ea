/**
 * Redirect URIs real MCP clients register (docs/oauth.md "Redirect URIs"): each is
 * accepted by dynamic registration and honoured exactly at authorize, at the consent
 * redirect and at the token endpoint; loopback http may change its port (RFC 8252 §7.3);
 * dangerous schemes, non-loopback http and fragments are refused.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import type { ClientRecord } from "../domain/accounts/mod.ts";
import { testBoard } from "./helpers.ts";
import {
  agentName,
  authorizePath,
  openConsent,
  pkce,
  REDIRECT,
  registerRequest,
  submitConsent,
  tokenRequest,
} from "./oauth_helpers.ts";

let net = 0;
/** A fresh network per registration (registration is limited per network). */
function network(): string {
  net++;
  return `10.77.${Math.floor(net / 250)}.${net % 250}`;
}

/** [registered, used at authorize, CSP form-action source of the used one]. */
const HONOURED: [string, string, string][] = [
  ["http://127.0.0.1:7777/callback", "http://127.0.0.1:7777/callback", "http://127.0.0.1:7777"],
  ["http://127.0.0.1:7777/callback", "http://127.0.0.1:51234/callback", "http://127.0.0.1:51234"],
  ["http://127.0.0.1/callback", "http://127.0.0.1:40001/callback", "http://127.0.0.1:40001"],
  ["http://[::1]:8080/cb", "http://[::1]:61000/cb", "http://[::1]:61000"],
  [
    "http://localhost:3000/oauth/callback",
    "http://localhost:3000/oauth/callback",
    "http://localhost:3000",
  ],
  [
    "cursor://anysphere.cursor-retrieval/oauth/user-board/callback",
    "cursor://anysphere.cursor-retrieval/oauth/user-board/callback",
    "cursor:",
  ],
  ["vscode://vscode.mcp/callback", "vscode://vscode.mcp/callback", "vscode:"],
  ["com.example.agent:/oauth2redirect", "com.example.agent:/oauth2redirect", "com.example.agent:"],
  ["ai.claude.desktop:/callback", "ai.claude.desktop:/callback", "ai.claude.desktop:"],
  ["vscode-insiders://vscode.mcp/cb", "vscode-insiders://vscode.mcp/cb", "vscode-insiders:"],
  ["windsurf://codeium.windsurf/cb", "windsurf://codeium.windsurf/cb", "windsurf:"],
  ["https://vscode.dev/redirect", "https://vscode.dev/redirect", "https://vscode.dev"],
  ["https://app.example/cb?tenant=7", "https://app.example/cb?tenant=7", "https://app.example"],
];

/** What the page shows for a private-use scheme (for http(s): the host). */
const SHOWN: Record<string, string> = {
  "cursor://anysphere.cursor-retrieval/oauth/user-board/callback":
    "cursor://anysphere.cursor-retrieval",
  "vscode://vscode.mcp/callback": "vscode://vscode.mcp",
  "com.example.agent:/oauth2redirect": "com.example.agent:",
  "ai.claude.desktop:/callback": "ai.claude.desktop:",
  "vscode-insiders://vscode.mcp/cb": "vscode-insiders://vscode.mcp",
  "windsurf://codeium.windsurf/cb": "windsurf://codeium.windsurf",
};

Deno.test("redirect URIs: each is registered, honoured exactly at authorize, consent and token", async (t) => {
  await using board = await testBoard();
  for (const [registered, used, source] of HONOURED) {
    await t.step(`${registered} used as ${used}`, async () => {
      // Each step creates an agent on the consent page: a network creates at most 10 a minute.
      board.clock.advance(7);
      const reg = await registerRequest(board, { redirect_uris: [registered] }, network());
      const client = await reg.json();
      assert.equal(reg.status, 201, JSON.stringify(client));
      assert.deepEqual(client.redirect_uris, [registered]);
      const { verifier, challenge } = await pkce();
      const page = await openConsent(
        board,
        authorizePath(client.client_id, challenge, { redirect_uri: used }),
      );
      assert.equal(page.res.status, 200, page.html);
      // The page names where the browser will go: host, or scheme and host.
      const shown = SHOWN[used] ?? new URL(used).host;
      assert.ok(page.html.includes(`<strong>${shown}</strong>`), `${shown} shown`);
      const csp = page.res.headers.get("content-security-policy") ?? "";
      assert.ok(csp.includes(`form-action http://board.test ${source};`), csp);
      const res = await submitConsent(board, {
        mode: "create",
        name: agentName(),
        participation_basis: "owner_directed",
        csrf: page.csrf!,
      }, page.cookie);
      assert.equal(res.status, 303, await res.clone().text());
      const location = res.headers.get("location")!;
      assert.ok(location.startsWith(used), `${location} starts with ${used}`);
      const back = new URL(location);
      assert.equal(back.searchParams.get("state"), "state-123");
      const tokens = await tokenRequest(board, {
        grant_type: "authorization_code",
        client_id: client.client_id,
        code: back.searchParams.get("code")!,
        code_verifier: verifier,
        redirect_uri: used,
      });
      assert.equal(tokens.status, 200, await tokens.clone().text());
      await tokens.body?.cancel();
    });
  }
});

Deno.test("redirect URIs: anything but the registered URI (or its loopback port) stays on a page", async () => {
  await using board = await testBoard();
  const cases: [string, string][] = [
    ["http://127.0.0.1:7777/callback", "http://127.0.0.1:7777/other"],
    ["http://127.0.0.1:7777/callback", "http://127.0.0.2:7777/callback"],
    ["http://127.0.0.1:7777/callback", "http://localhost:7777/callback"],
    ["http://127.0.0.1:7777/callback", "https://127.0.0.1:7777/callback"],
    ["http://[::1]:8080/cb", "http://[::1]:8080/cb#x"],
    ["cursor://anysphere.cursor-retrieval/cb", "cursor://anysphere.cursor-retrieval/cb2"],
    ["cursor://localhost:1/cb", "cursor://localhost:2/cb"],
    ["vscode://vscode.mcp/callback", "vscode://evil.example/callback"],
    ["https://app.example/cb", "https://app.example:8443/cb"],
    ["https://app.example/cb", "https://app.example/cb?x=1"],
  ];
  for (const [registered, used] of cases) {
    const client = await (await registerRequest(
      board,
      { redirect_uris: [registered] },
      network(),
    )).json();
    assert.ok(client.client_id, JSON.stringify(client));
    const { challenge } = await pkce();
    const page = await openConsent(
      board,
      authorizePath(client.client_id, challenge, { redirect_uri: used }),
    );
    assert.equal(page.res.status, 400, `${registered} used as ${used}`);
    assert.equal(page.res.headers.get("location"), null);
    assert.match(page.html, /Redirect address mismatch/);
  }
});

Deno.test("redirect URIs: dangerous schemes, non-loopback http and fragments are refused", async () => {
  await using board = await testBoard();
  for (
    const uri of [
      "javascript:alert(1)",
      "JavaScript:alert(1)",
      "vbscript:msgbox(1)",
      "data:text/html,<script>alert(1)</script>",
      "file:///etc/passwd",
      "blob:https://app.example/3b3c",
      "about:blank",
      "http://app.example/cb",
      "http://10.0.0.1/cb",
      "http://127.0.0.1.nip.io/cb",
      "https://app.example/cb#frag",
      "cursor://anysphere.cursor-retrieval/cb#frag",
      "com.example.agent:/cb#",
      "https://user:pw@app.example/cb",
      "/relative/cb",
      // Schemes that open an operating-system handler.
      "search-ms:query=invoice&crumb=location:\\\\evil.example\\share",
      "ms-msdt:/id PCWDiagnostic /skip force",
      "ms-settings:privacy",
      "intent://scan/",
      "shell:startup",
      // Private-use schemes that are neither reverse-DNS nor a known client's.
      "claude.ai://callback",
      "myapp:/callback",
      "example.com:/callback",
      "com:/callback",
    ]
  ) {
    const res = await registerRequest(board, { redirect_uris: [uri] }, network());
    const body = await res.json();
    assert.equal(res.status, 400, `${uri}: ${JSON.stringify(body)}`);
    assert.equal(body.error, "invalid_redirect_uri", `${uri}: ${JSON.stringify(body)}`);
  }
});

Deno.test("redirect URIs: a stored registration with a scheme refused since is never sent to", async () => {
  await using board = await testBoard();
  const reg = await registerRequest(board, { redirect_uris: [REDIRECT] }, network());
  const client = await reg.json();
  const key = keys.oauthClients(client.client_id);
  const stored = (await board.kv.get<ClientRecord>(key)).value!;
  const target = "search-ms:query=x";
  await board.kv.set(key, { ...stored, redirect_uris: [target], activated_at: 1 });
  const { challenge } = await pkce();
  for (const overrides of [{}, { response_type: "x" }] as Record<string, string>[]) {
    const page = await openConsent(
      board,
      authorizePath(client.client_id, challenge, { redirect_uri: target, ...overrides }),
    );
    assert.equal(page.res.status, 400);
    assert.equal(page.res.headers.get("location"), null);
    assert.match(page.html, /Redirect address refused/);
    assert.ok(!page.html.includes("search-ms:query"), "no link to the handler");
    assert.equal(page.csrf, null, "no consent form");
  }
});
