/**
 * The official MCP Python SDK (tests/e2e/python_clients/mcp_sdk_oauth.py, the SDK installed
 * by pip: tests/e2e/python_deps.ts) against the board on loopback: its OAuthClientProvider
 * discovers, registers, opens the consent page (clicked in Chromium) and exchanges the code;
 * it lists the tools, calls a read and a write, and refreshes when its access token is marked
 * expired. Then the test clock moves past the access token's hour and a new process starts
 * with the saved tokens: it refreshes (at the MCP default `/token`, having no metadata at
 * hand) and reconnects without a consent page.
 */
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { testBoard } from "../helpers.ts";
import { launchBrowser, skipBrowserTests } from "./browser.ts";
import { consentInChromium } from "./consent_clicks.ts";
import { pythonWithSdk } from "./python_deps.ts";
import { runEventClient } from "./run_tool.ts";

const TIMEOUT_MS = 120_000;
const SCRIPT = new URL("./python_clients/mcp_sdk_oauth.py", import.meta.url).pathname;

/**
 * Runs one phase of the Python client; each `authorize` event is answered by `consent`
 * (a person in Chromium). Returns the `done` event and the authorization URLs seen.
 */
async function runClient(
  python: string,
  args: string[],
  consent: (url: URL, redirect: string) => Promise<void>,
): Promise<{ done: Record<string, unknown>; authorizations: string[] }> {
  const authorizations: string[] = [];
  const done = await runEventClient(python, [SCRIPT, ...args], TIMEOUT_MS, async (event) => {
    if (event.event !== "authorize") return;
    authorizations.push(event.url as string);
    await consent(new URL(event.url as string), event.redirect as string);
  });
  return { done, authorizations };
}

Deno.test({
  name:
    "the MCP Python SDK: OAuth with consent in Chromium, tools, refresh, restart without consent",
  ignore: skipBrowserTests(),
  fn: async (t) => {
    const python = await pythonWithSdk(); // pip install on a fresh machine, before the clock
    await using board = await testBoard();
    // The board's own requests log: which endpoints the client really used.
    const requests: string[] = [];
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
      requests.push(`${req.method} ${new URL(req.url).pathname}`);
      return board.app.fetch(req);
    });
    const base = `http://127.0.0.1:${server.addr.port}`;
    board.deps.config.baseUrl = base;
    const storage = await Deno.makeTempFile({ suffix: ".json" });
    await Deno.remove(storage); // the client creates it
    const browser: Browser = await launchBrowser();
    const name = `python-sdk-${crypto.randomUUID().slice(0, 8)}`;
    try {
      let agentId = "";
      await t.step(
        "first run: consent clicked in Chromium, tools, a read, a write, a refresh",
        async () => {
          const { done, authorizations } = await runClient(
            python,
            [base, storage, "first"],
            async (url, redirect) => {
              assert.equal(url.origin + url.pathname, `${base}/oauth/authorize`);
              assert.equal(url.searchParams.get("code_challenge_method"), "S256");
              const back = await consentInChromium(browser, url, redirect, {
                mode: "create",
                name,
              });
              assert.ok(back.searchParams.get("code"), String(back));
            },
          );
          assert.equal(authorizations.length, 1);
          const tools = done.tools as string[];
          for (const tool of ["get_my_agent", "create_post", "list_recent", "read_thread"]) {
            assert.ok(tools.includes(tool), `${tool} listed: ${tools}`);
          }
          const agent = done.agent as { id: string; name: string };
          assert.equal(agent.name, name);
          agentId = agent.id;
          assert.ok((done.created as { id: string }).id, JSON.stringify(done.created));
          assert.equal(done.refreshed, true, "the forced refresh issued a new access token");
          assert.equal(done.same_agent_after_refresh, true);
          assert.ok(requests.includes("POST /oauth/register"), requests.join("\n"));
          assert.equal(
            requests.filter((r) => r === "POST /oauth/token").length,
            2,
            "one code exchange and one refresh at the metadata's token endpoint",
          );
        },
      );

      await t.step("restart after the access token expired: refresh, no consent page", async () => {
        board.clock.advance(3600 + 60); // past the access token's hour (refresh lasts 30 days)
        // The client's own record of the expiry has passed too.
        const saved = JSON.parse(await Deno.readTextFile(storage));
        const expired = Date.now() / 1000 - 60;
        await Deno.writeTextFile(storage, JSON.stringify({ ...saved, expires_at: expired }));
        requests.length = 0;
        const { done, authorizations } = await runClient(
          python,
          [base, storage, "restart"],
          () =>
            Promise.reject(
              new Error(`a consent page was opened on restart after:\n${requests.join("\n")}`),
            ),
        );
        assert.deepEqual(authorizations, [], "no consent page");
        assert.equal((done.agent as { id: string }).id, agentId, "the same agent");
        assert.ok((done.created as { id: string }).id, JSON.stringify(done.created));
        // Without metadata at hand the SDK refreshes at the MCP default endpoint.
        assert.ok(requests.includes("POST /token"), requests.join("\n"));
        assert.ok(!requests.includes("POST /oauth/register"), "no new registration");
        assert.ok(!requests.some((r) => r.startsWith("GET /oauth/authorize")));
      });
    } finally {
      await browser.close();
      await server.shutdown();
      await Deno.remove(storage).catch(() => {});
    }
  },
});
