import assert from "node:assert/strict";
import {
  OAuthClientMetadataSchema,
  OAuthMetadataSchema,
  OAuthProtectedResourceMetadataSchema,
} from "../oauth/sdk.ts";
import {
  admitOAuthRequest,
  InvalidGrantError,
  OAUTH_NETWORKS_COUNTED,
  OAuthRateLimited,
} from "../domain/accounts/mod.ts";
import { oauthUrls } from "../oauth/urls.ts";
import { testBoard } from "./helpers.ts";
import { BASE, whoami } from "./oauth_helpers.ts";

Deno.test("authorization server metadata (RFC 8414)", async (t) => {
  await using board = await testBoard();

  await t.step("issuer is exactly BOARD_BASE_URL and the document parses", async () => {
    const res = await board.request("/.well-known/oauth-authorization-server");
    assert.equal(res.status, 200);
    const doc = OAuthMetadataSchema.parse(await res.json());
    assert.equal(doc.issuer, BASE);
    assert.equal(doc.authorization_endpoint, `${BASE}/oauth/authorize`);
    assert.equal(doc.token_endpoint, `${BASE}/oauth/token`);
    assert.equal(doc.registration_endpoint, `${BASE}/oauth/register`);
    assert.equal(doc.revocation_endpoint, `${BASE}/oauth/revoke`);
    assert.deepEqual(doc.scopes_supported, ["board:read", "board:write"]);
    assert.deepEqual(doc.response_types_supported, ["code"]);
    assert.deepEqual(doc.code_challenge_methods_supported, ["S256"]);
    assert.deepEqual(doc.token_endpoint_auth_methods_supported, ["none"]);
    assert.deepEqual(doc.grant_types_supported, ["authorization_code", "refresh_token"]);
    assert.notEqual(doc.client_id_metadata_document_supported, true);
  });

  await t.step("protected resource metadata names {base}/mcp and the issuer", async () => {
    const res = await board.request("/.well-known/oauth-protected-resource/mcp");
    assert.equal(res.status, 200);
    const doc = OAuthProtectedResourceMetadataSchema.parse(await res.json());
    assert.equal(doc.resource, `${BASE}/mcp`);
    assert.deepEqual(doc.authorization_servers, [BASE]);
    assert.deepEqual(doc.scopes_supported, ["board:read", "board:write"]);
  });
});

Deno.test("every published URL comes from the base URL and is served", async () => {
  const base = "https://board.example.org";
  await using board = await testBoard({ baseUrl: base });
  const urls = oauthUrls(base);
  const as = await (await board.request("/.well-known/oauth-authorization-server")).json();
  assert.equal(as.issuer, base);
  assert.equal(as.token_endpoint, urls.token);
  assert.equal(as.authorization_endpoint, urls.authorization);
  const prm = await (await board.request("/.well-known/oauth-protected-resource/mcp")).json();
  assert.equal(prm.resource, `${base}/mcp`);
  const challenge = (await whoami(board)).headers.get("www-authenticate")!;
  assert.match(challenge, /resource_metadata="([^"]+)"/);
  const prmUrl = challenge.match(/resource_metadata="([^"]+)"/)![1];
  assert.equal(prmUrl, `${base}/.well-known/oauth-protected-resource/mcp`);
  // The challenge's URL and each endpoint are answered by this app (path under the base).
  assert.equal((await board.request(new URL(prmUrl).pathname)).status, 200);
  for (const url of [as.token_endpoint, as.registration_endpoint, as.revocation_endpoint]) {
    assert.ok(url.startsWith(base + "/"), url);
    const res = await board.request(new URL(url).pathname, { method: "POST" });
    await res.body?.cancel();
    assert.notEqual(res.status, 404, url);
  }
});

const CORS_PATHS = [
  ["/.well-known/oauth-authorization-server", "GET"],
  ["/.well-known/oauth-protected-resource/mcp", "GET"],
  ["/oauth/token", "POST"],
  ["/oauth/register", "POST"],
  ["/oauth/revoke", "POST"],
  ["/mcp", "POST"],
] as const;

Deno.test("CORS is open for MCP clients on the listed endpoints only", async (t) => {
  await using board = await testBoard();
  const preflight = (path: string, method: string) =>
    board.request(path, {
      method: "OPTIONS",
      headers: {
        origin: "https://app.example",
        "access-control-request-method": method,
        "access-control-request-headers": "authorization, content-type, mcp-protocol-version",
      },
    });

  await t.step("preflight allows the MCP headers on each CORS path", async () => {
    for (const [path, method] of CORS_PATHS) {
      const res = await preflight(path, method);
      assert.equal(res.status, 204, path);
      assert.equal(res.headers.get("access-control-allow-origin"), "*", path);
      const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase();
      for (const h of ["authorization", "content-type", "mcp-protocol-version", "mcp-session-id"]) {
        assert.ok(allowed.includes(h), `${path} allows ${h}`);
      }
      assert.ok(allowed.includes("last-event-id"), path);
      const exposed = (res.headers.get("access-control-expose-headers") ?? "").toLowerCase();
      assert.ok(exposed.includes("www-authenticate") && exposed.includes("mcp-session-id"), path);
    }
  });

  await t.step("actual responses carry the CORS headers", async () => {
    const res = await board.request("/.well-known/oauth-authorization-server", {
      headers: { origin: "https://app.example" },
    });
    await res.body?.cancel();
    assert.equal(res.headers.get("access-control-allow-origin"), "*");
    const token = await board.request("/oauth/token", {
      method: "POST",
      headers: { origin: "https://app.example", "content-type": "application/json" },
      body: "{}",
    });
    await token.body?.cancel();
    assert.equal(token.status, 400);
    assert.equal(token.headers.get("access-control-allow-origin"), "*");
  });

  await t.step("the consent page, whoami and board routes are never CORS-open", async () => {
    for (const path of ["/oauth/authorize", "/oauth/whoami", "/v1/agents", "/v1/me", "/"]) {
      const pre = await preflight(path, "POST");
      await pre.body?.cancel();
      assert.equal(pre.headers.get("access-control-allow-origin"), null, path);
      const res = await board.request(path, { headers: { origin: "https://app.example" } });
      await res.body?.cancel();
      assert.equal(res.headers.get("access-control-allow-origin"), null, path);
    }
  });
});

Deno.test("OAuth operations are limited to 300 requests a minute per network", async () => {
  await using board = await testBoard();
  const path = "/.well-known/oauth-authorization-server";
  for (let i = 0; i < 300; i++) {
    const res = await board.request(path);
    await res.body?.cancel();
    assert.equal(res.status, 200, `request ${i + 1}`);
  }
  const limited = await board.request(path);
  assert.equal(limited.status, 429);
  assert.ok(Number(limited.headers.get("retry-after")) >= 1);
  assert.equal((await limited.json()).error, "too_many_requests");
  // Another operation and another network are counted separately.
  const revoke = await board.request("/oauth/revoke", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "token=unknown",
  });
  await revoke.body?.cancel();
  assert.equal(revoke.status, 200);
  const other = await board.request(path, {}, "10.9.8.7");
  await other.body?.cancel();
  assert.equal(other.status, 200);
  board.clock.advance(120);
  const later = await board.request(path);
  await later.body?.cancel();
  assert.equal(later.status, 200);
});

Deno.test("OAuth requests from ever new networks share one allowance past the networks counted", async () => {
  await using board = await testBoard();
  const admitted = (network: string) => {
    try {
      admitOAuthRequest(board.deps, "metadata", network);
      return true;
    } catch (e) {
      if (e instanceof OAuthRateLimited) return false;
      throw e;
    }
  };
  // An IPv6 /64 per request: each is counted apart until the instance counts as many as it holds.
  const net = (i: number) => `2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::/64`;
  for (let i = 0; i < OAUTH_NETWORKS_COUNTED; i++) assert.ok(admitted(net(i)), `network ${i}`);
  // Further networks share 6,000 requests a minute; those counted keep their own allowance.
  let shared = 0;
  while (shared < 10_000 && admitted(net(OAUTH_NETWORKS_COUNTED + shared))) shared++;
  assert.equal(shared, 6000);
  assert.equal(admitted(net(OAUTH_NETWORKS_COUNTED + shared + 1)), false);
  assert.ok(admitted(net(0)), "a network counted before the flood is still served");
  // Once the minute has passed, new networks are counted apart again.
  board.clock.advance(120);
  assert.ok(admitted(net(10 ** 6)));
});

// Compile-time guard: the SDK's deep `.js` imports must carry their real types. Were one
// to degrade to `any` (the SDK's `./*` export map points types at missing files), these
// assignments would compile and the unused `@ts-expect-error` would fail `deno check`.
// @ts-expect-error: a zod schema is not a number
const _schemaIsTyped: number = OAuthMetadataSchema;
// @ts-expect-error: a zod schema is not a number
const _clientSchemaIsTyped: number = OAuthClientMetadataSchema;
// @ts-expect-error: an error class is not a number
const _errorIsTyped: number = InvalidGrantError;

Deno.test("the MCP SDK auth schemas and errors are real, typed values", () => {
  assert.equal(new InvalidGrantError("x").toResponseObject().error, "invalid_grant");
  assert.ok(
    OAuthClientMetadataSchema.safeParse({ redirect_uris: ["https://a.example/cb"] }).success,
  );
});

Deno.test("an OAuth rate refusal says a wait of one second as '1 second'", () => {
  const one = new OAuthRateLimited(1, 10, "token requests");
  assert.equal(one.message, "Too many token requests from your network; retry in 1 second.");
  assert.match(new OAuthRateLimited(30, 10, "token requests").message, /retry in 30 seconds\.$/);
});
