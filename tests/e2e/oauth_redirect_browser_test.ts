/**
 * No open redirect through a dynamically registered client, in Chromium: an attacker
 * registers a client with their own address and completes one flow with an agent of their
 * own; a request error for that client then stays on a board page (a link, never a
 * redirect), and Deny for a client that never completed a flow does not leave the board. A
 * client with one address may leave redirect_uri out of the authorization and token requests.
 * Requests to the attacker's address are intercepted and counted, never sent.
 */
import assert from "node:assert/strict";
import type { BrowserContext } from "playwright-core";
import { type TestBoard, testBoard } from "../helpers.ts";
import { serve } from "../mcp_client.ts";
import { authorizePath, pkce, registerClient, tokenRequest } from "../oauth_helpers.ts";
import { launchBrowser, skipBrowserTests } from "./browser.ts";
import { clickConsent, continueAfterKey } from "./consent_clicks.ts";

const EVIL = "https://evil.example/landing";

async function registerEvilClient(board: TestBoard): Promise<string> {
  return (await registerClient(board, { client_name: "Totally legit", redirect_uris: [EVIL] }))
    .client_id;
}

async function authorizeUrl(base: string, clientId: string) {
  const { verifier, challenge } = await pkce();
  const overrides = { redirect_uri: EVIL, resource: `${base}/mcp`, state: "s", scope: null };
  return { url: base + authorizePath(clientId, challenge, overrides), verifier };
}

/** Counts (and answers locally) every request the browser makes to the attacker's host. */
async function trapEvil(context: BrowserContext): Promise<string[]> {
  const seen: string[] = [];
  await context.route("https://evil.example/**", (route) => {
    seen.push(route.request().url());
    return route.fulfill({ status: 200, contentType: "text/html", body: "<p>landed</p>" });
  });
  return seen;
}

Deno.test({
  name: "open redirect in Chromium: request errors and Deny stay on the board",
  ignore: skipBrowserTests(),
  fn: async (t) => {
    await using board = await testBoard();
    await using server = serve(board);
    board.deps.config.baseUrl = server.url;
    const base = server.url;
    const browser = await launchBrowser();
    try {
      const activated = await registerEvilClient(board);
      /**
       * One flow for `activated` in a fresh context: consent clicked (a new agent), the code
       * exchanged. `sendRedirect`: redirect_uri in both requests, or in neither.
       */
      const completeFlow = async (sendRedirect: boolean) => {
        const context = await browser.newContext();
        try {
          await trapEvil(context);
          const page = await context.newPage();
          const { verifier, challenge } = await pkce();
          const redirect = sendRedirect ? EVIL : null;
          const overrides = {
            redirect_uri: redirect,
            resource: `${base}/mcp`,
            state: "s",
            scope: null,
          };
          await page.goto(base + authorizePath(activated, challenge, overrides));
          const landed = page.waitForRequest((r) => r.url().startsWith(EVIL));
          await clickConsent(page, {
            mode: "create",
            name: `own-${crypto.randomUUID().slice(0, 8)}`,
          });
          await continueAfterKey(page);
          const code = new URL((await landed).url()).searchParams.get("code")!;
          const res = await tokenRequest(board, {
            grant_type: "authorization_code",
            client_id: activated,
            code,
            code_verifier: verifier,
            ...(redirect ? { redirect_uri: redirect } : {}),
          });
          assert.equal(res.status, 200, await res.text());
        } finally {
          await context.close();
        }
      };
      await t.step("the attacker completes one flow with their own agent", async () => {
        await completeFlow(true);
      });
      // RFC 6749 §4.1.3: the token request needs redirect_uri only if the authorization request
      // had it.
      await t.step(
        "with its one address, redirect_uri may be left out of both requests",
        async () => {
          await completeFlow(false);
        },
      );

      await t.step(
        "a request error for that client stays on a board page with a link",
        async () => {
          const context = await browser.newContext();
          try {
            const seen = await trapEvil(context);
            const page = await context.newPage();
            const res = await page.goto(
              `${base}/oauth/authorize?client_id=${activated}&response_type=x`,
            );
            assert.equal(res?.status(), 400);
            assert.ok(page.url().startsWith(base), page.url());
            assert.match(await page.locator("[role=alert]").innerText(), /response_type/);
            const href = await page.locator("#return-link").getAttribute("href");
            assert.ok(href?.startsWith(`${EVIL}?error=unsupported_response_type`), String(href));
            assert.deepEqual(seen, [], "the browser was not sent to the attacker");
          } finally {
            await context.close();
          }
        },
      );

      await t.step("Deny for a client that never completed a flow stays on the board", async () => {
        const fresh = await registerEvilClient(board);
        const context = await browser.newContext();
        try {
          const seen = await trapEvil(context);
          const page = await context.newPage();
          const { url } = await authorizeUrl(base, fresh);
          assert.equal((await page.goto(url))?.status(), 200);
          await Promise.all([page.waitForLoadState("load"), clickConsent(page, { mode: "deny" })]);
          await page.waitForSelector("h1:text('Connection denied')");
          assert.ok(page.url().startsWith(base), page.url());
          const href = await page.locator("#return-link").getAttribute("href");
          assert.ok(href?.startsWith(`${EVIL}?error=access_denied`), String(href));
          assert.deepEqual(seen, [], "the browser was not sent to the attacker");
        } finally {
          await context.close();
        }
      });
    } finally {
      await browser.close();
    }
  },
});
