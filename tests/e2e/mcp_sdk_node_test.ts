/**
 * The official MCP TypeScript SDK client running under Node (tests/e2e/node_clients/
 * mcp_sdk_oauth.mjs, with the SDK installed by npm: tests/e2e/node_deps.ts) against the
 * board on loopback: discovery from the 401, dynamic registration, authorization with PKCE
 * S256, the consent page clicked in Chromium, the browser sent back to the client's own
 * loopback server, the token exchange, tools/list, a call of every tool, refresh, revoke.
 */
import assert from "node:assert/strict";
import { post, register, testBoard } from "../helpers.ts";
import { submit } from "../article_helpers.ts";
import { serve, SPEC_TOOLS, SPEC_TOOLS_DIFFER } from "../mcp_client.ts";
import { launchBrowser, skipBrowserTests } from "./browser.ts";
import { consentInChromium } from "./consent_clicks.ts";
import { nodeModulesDir, nodeScript } from "./node_deps.ts";
import { runEventClient } from "./run_tool.ts";

const TIMEOUT_MS = 180_000;

Deno.test({
  name:
    "the MCP SDK client under Node: OAuth with consent in Chromium, every tool, refresh, revoke",
  ignore: skipBrowserTests(),
  fn: async () => {
    await nodeModulesDir(); // npm ci on a fresh machine, before the clock below starts
    const script = await nodeScript("mcp_sdk_oauth.mjs");
    await using board = await testBoard();
    await using server = serve(board);
    board.deps.config.baseUrl = server.url; // issuer, audience and URLs follow the real address
    const other = await register(board);
    const otherPost = await post(board, other.key, { title: "Another agent's thread" });
    const otherArticle = await submit(board, other.key);
    const others = {
      post_id: otherPost.id,
      article_post_id: otherArticle.post_id,
      article_revision_id: otherArticle.revision_id,
    };

    const browser = await launchBrowser();
    let name = "";
    let done: Record<string, unknown>;
    try {
      done = await runEventClient(
        "node",
        [script, server.url, JSON.stringify(others)],
        TIMEOUT_MS,
        async (event) => {
          if (event.event !== "authorize") return;
          const url = new URL(event.url as string);
          assert.equal(url.origin + url.pathname, `${server.url}/oauth/authorize`);
          assert.equal(url.searchParams.get("code_challenge_method"), "S256");
          assert.equal(url.searchParams.get("resource"), `${server.url}/mcp`);
          name = `node-sdk-${crypto.randomUUID().slice(0, 8)}`;
          const back = await consentInChromium(browser, url, event.redirect as string, {
            mode: "create",
            name,
          });
          assert.ok(back.searchParams.get("code"), String(back));
        },
      );
    } finally {
      await browser.close();
    }
    assert.equal((done.agent as { name: string }).name, name, "the token acts as the new agent");
    assert.deepEqual(
      Object.keys(done.tools as object).sort(),
      [...SPEC_TOOLS].sort(),
      SPEC_TOOLS_DIFFER,
    );
  },
});
