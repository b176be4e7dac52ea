/**
 * End to end: the MCP SDK's own client OAuth flow (`auth()` with an OAuthClientProvider)
 * against the real server on a free port — discovery from the 401 challenge, dynamic
 * registration, authorization, the consent form filled in and clicked in Chromium, the
 * code exchange, an authenticated MCP call, refreshes (parallel calls that all meet an
 * expired access token among them), and a replaced refresh token presented too late.
 */
import assert from "node:assert/strict";
// @ts-types="@modelcontextprotocol/sdk/client/auth"
import {
  auth,
  extractWWWAuthenticateParams,
  type OAuthClientProvider,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  OAuthClientInformationFull,
  OAuthClientMetadata,
  OAuthTokens,
} from "../../oauth/sdk.ts";
import { testBoard } from "../helpers.ts";
import {
  Client,
  mcpClient,
  serve,
  StreamableHTTPClientTransport,
  toolJson,
} from "../mcp_client.ts";
import { TTL } from "../../domain/accounts/mod.ts";
import { launchBrowser, skipBrowserTests } from "./browser.ts";
import { consentInChromium } from "./consent_clicks.ts";

/** Chromium, closed when the test's scope ends. */
async function openBrowser() {
  const browser = await launchBrowser();
  return Object.assign(browser, { [Symbol.asyncDispose]: () => browser.close() });
}

const REDIRECT = "http://127.0.0.1:53682/oauth/callback";

/** An in-memory OAuthClientProvider, like a desktop client's. */
class MemoryProvider implements OAuthClientProvider {
  info?: OAuthClientInformationFull;
  stored?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  readonly stateValue = crypto.randomUUID();

  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "E2E desktop client",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    return this.stateValue;
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationFull) {
    this.info = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: OAuthTokens) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

Deno.test({
  name: "MCP SDK client OAuth flow against the real server, consent clicked in Chromium",
  ignore: skipBrowserTests(),
  fn: async (t) => {
    await using board = await testBoard();
    await using browser = await openBrowser();
    await using server = serve(board);
    board.deps.config.baseUrl = server.url; // issuer, audience and URLs follow the real address
    const serverUrl = `${server.url}/mcp`;
    const provider = new MemoryProvider();
    const name = `e2e-oauth-${crypto.randomUUID().slice(0, 8)}`;
    let resourceMetadataUrl: URL | undefined;
    let scope: string | undefined;
    /** A refresh as a client sends it (Node fetch, a form body). */
    const refresh = (token: string) =>
      fetch(`${server.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "refresh_token",
          client_id: provider.info!.client_id,
          refresh_token: token,
        }),
      });

    await t.step(
      "an unauthenticated MCP request points at the protected resource metadata",
      async () => {
        const res = await fetch(serverUrl, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
        });
        await res.body?.cancel();
        assert.equal(res.status, 401);
        ({ resourceMetadataUrl, scope } = extractWWWAuthenticateParams(res));
        assert.equal(
          String(resourceMetadataUrl),
          `${server.url}/.well-known/oauth-protected-resource/mcp`,
        );
        assert.equal(scope, "board:read board:write");
      },
    );

    await t.step("discovery, registration and the authorization redirect", async () => {
      const result = await auth(provider, { serverUrl, resourceMetadataUrl, scope });
      assert.equal(result, "REDIRECT");
      assert.ok(provider.info?.client_id);
      assert.equal(provider.info?.client_secret, undefined);
      const url = provider.authorizationUrl!;
      assert.equal(url.origin + url.pathname, `${server.url}/oauth/authorize`);
      assert.equal(url.searchParams.get("code_challenge_method"), "S256");
      assert.equal(url.searchParams.get("resource"), serverUrl);
    });

    let code = "";
    await t.step("consent creates the agent and redirects back with code and state", async () => {
      const back = await consentInChromium(browser, provider.authorizationUrl!, REDIRECT, {
        mode: "create",
        name,
      });
      assert.equal(back.origin + back.pathname, REDIRECT);
      assert.equal(back.searchParams.get("state"), provider.stateValue);
      assert.equal(back.searchParams.get("iss"), server.url);
      code = back.searchParams.get("code")!;
      assert.ok(code);
    });

    await t.step("the SDK exchanges the code for tokens", async () => {
      const result = await auth(provider, {
        serverUrl,
        resourceMetadataUrl,
        authorizationCode: code,
      });
      assert.equal(result, "AUTHORIZED");
      assert.equal(provider.stored?.token_type, "Bearer");
      assert.ok(provider.stored?.refresh_token);
    });

    await t.step("an authenticated MCP call acts as the new agent", async () => {
      await using client = await mcpClient(server.url, provider.stored!.access_token);
      const me = toolJson(await client.callTool({ name: "get_my_agent", arguments: {} }));
      assert.equal(me.name, name);
      const whoami = await fetch(`${server.url}/oauth/whoami`, {
        headers: { authorization: `Bearer ${provider.stored!.access_token}` },
      });
      assert.equal((await whoami.json()).via, "oauth");
    });

    await t.step("a connection refreshes at most 200 times a UTC day (Node fetch)", async () => {
      let tokens: OAuthTokens = provider.stored!;
      // Each refresh needs the token the one before it returned.
      for (let i = 1; i <= 200; i++) {
        const res = await refresh(tokens.refresh_token!);
        assert.equal(res.status, 200, `refresh ${i}`);
        tokens = await res.json();
      }
      const refused = await refresh(tokens.refresh_token!);
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers.get("retry-after")) > 0);
      assert.equal((await refused.json()).error, "too_many_requests");
      // Nothing was spent: the same token refreshes on the next UTC day.
      provider.stored = { ...provider.stored!, ...tokens };
      board.clock.advance(86_400);
    });

    await t.step(
      "parallel tool calls meeting an expired access token each refresh, and all succeed",
      async () => {
        const client = new Client({ name: "e2e-parallel", version: "1.0.0" });
        await client.connect(
          new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }),
        );
        try {
          const connectedWith = provider.stored!.refresh_token;
          board.clock.advance(TTL.access); // every call now meets a 401 and refreshes
          const calls = await Promise.allSettled(
            Array.from({ length: 4 }, () => client.callTool({ name: "get_my_agent" })),
          );
          assert.deepEqual(
            calls.map((c) => c.status === "fulfilled" ? toolJson(c.value).name : String(c.reason)),
            [name, name, name, name],
          );
          // Each got the same successor, which the next step refreshes with.
          assert.notEqual(provider.stored!.refresh_token, connectedWith);
          const whoami = await fetch(`${server.url}/oauth/whoami`, {
            headers: { authorization: `Bearer ${provider.stored!.access_token}` },
          });
          assert.equal(whoami.status, 200, "the connection stands");
          await whoami.body?.cancel();
        } finally {
          await client.close();
        }
      },
    );

    await t.step(
      "the SDK refreshes (rotation); the old refresh token is then refused",
      async () => {
        const before = provider.stored!;
        board.clock.advance(TTL.refreshGrace); // the parallel calls' rotation has settled
        const result = await auth(provider, { serverUrl, resourceMetadataUrl });
        assert.equal(result, "AUTHORIZED");
        const after = provider.stored!;
        assert.notEqual(after.access_token, before.access_token);
        assert.notEqual(after.refresh_token, before.refresh_token);
        await using client = await mcpClient(server.url, after.access_token);
        const me = toolJson(await client.callTool({ name: "get_my_agent", arguments: {} }));
        assert.equal(me.name, name);
        board.clock.advance(TTL.refreshGrace); // a repeat is no longer a parallel refresh
        const reuse = await refresh(before.refresh_token!);
        assert.equal(reuse.status, 400);
        assert.equal((await reuse.json()).error, "invalid_grant");
        const revoked = await fetch(`${server.url}/oauth/whoami`, {
          headers: { authorization: `Bearer ${after.access_token}` },
        });
        await revoked.body?.cancel();
        assert.equal(revoked.status, 401);
      },
    );
  },
});
