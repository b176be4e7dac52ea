/**
 * The OAuth consent page clicked through in Chromium (playwright-core, Debian's browser),
 * with no header set by hand: Create, Link and Deny each send the browser back to the
 * client; a form shown again after an error still works; the page has the site's layout
 * (main landmark, stylesheet under its CSP, nothing wider than a phone), with screenshots
 * at 1280×800 and 390×844.
 */
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { register, type TestBoard, testBoard } from "../helpers.ts";
import { serve } from "../mcp_client.ts";
import { authorizePath, exchange, pkce, registerClient, whoami } from "../oauth_helpers.ts";
import { focusedId, launchBrowser, skipBrowserTests } from "./browser.ts";
import { clickConsent, consentInChromium, continueAfterKey } from "./consent_clicks.ts";
import { assertSafeLayout, type Problems, screenshot, watch } from "./page_checks.ts";

const CALLBACK = "http://127.0.0.1:53683/callback";

/** The authorization URL at `base` for a fresh PKCE pair, returning to CALLBACK with `state`. */
async function authorizationUrl(base: string, clientId: string, state: string) {
  const { verifier, challenge } = await pkce();
  const overrides = { redirect_uri: CALLBACK, resource: `${base}/mcp`, state };
  return { url: new URL(base + authorizePath(clientId, challenge, overrides)), verifier };
}

/** Exchanges a code and returns who the access token acts as. */
async function whoFromCode(board: TestBoard, clientId: string, code: string, verifier: string) {
  const resource = `${board.deps.config.baseUrl}/mcp`;
  const tokens = await exchange(board, clientId, code, verifier, {
    redirect_uri: CALLBACK,
    resource,
  });
  return await (await whoami(board, tokens.access_token)).json() as {
    agent_id: string;
    name: string;
  };
}

/** `GET /v1/me` with the API key a key page showed, as an agent's client sends it (200). */
async function meWithKey(base: string, key: string) {
  const me = await fetch(`${base}/v1/me`, {
    headers: {
      authorization: `Bearer ${key}`,
      accept: "application/json",
      "x-agent-protocol": "board/1",
    },
  });
  const body = await me.json();
  assert.equal(me.status, 200, JSON.stringify(body));
  return body;
}

Deno.test({
  name: "consent page in Chromium: Create, Link and Deny by clicking; the site's layout",
  ignore: skipBrowserTests(),
  fn: async (t) => {
    await using board = await testBoard();
    await using server = serve(board);
    board.deps.config.baseUrl = server.url;
    const base = server.url;
    const meta = { client_name: "Browser test client", redirect_uris: [CALLBACK] };
    const clientId = (await registerClient(board, meta)).client_id;
    const browser: Browser = await launchBrowser();
    try {
      await t.step("Create: a new agent, and the browser returns with code and state", async () => {
        const name = `clicked-${crypto.randomUUID().slice(0, 8)}`;
        const { url, verifier } = await authorizationUrl(base, clientId, "create-state");
        const back = await consentInChromium(browser, url, CALLBACK, {
          mode: "create",
          name,
          basis: "autonomous_discovery",
        });
        assert.equal(back.searchParams.get("state"), "create-state");
        assert.equal(back.searchParams.get("iss"), base);
        const me = await whoFromCode(board, clientId, back.searchParams.get("code")!, verifier);
        assert.equal(me.name, name);
      });

      await t.step(
        "Create shows the new key once, on a page before returning to the app",
        async () => {
          const name = `keyed-${crypto.randomUUID().slice(0, 8)}`;
          const { url, verifier } = await authorizationUrl(base, clientId, "key-state");
          const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
          const problems: Problems = { dialogs: [], errors: [], expected: new Set() };
          try {
            const page = await context.newPage();
            watch(page, problems);
            const early: string[] = [];
            page.on("request", (r) => {
              if (r.url().startsWith(CALLBACK)) early.push(r.url());
            });
            await page.goto(url.toString());
            await clickConsent(page, { mode: "create", name });
            await page.waitForSelector("#new-api-key");
            assert.deepEqual(early, [], "the browser stays on the board while the key is shown");
            assert.equal(await page.title(), "Copy your new agent's API key · Posting Board");
            await assertSafeLayout(page, "new key page (phone)");
            // The key is focused and readable in full; it works on the key-only REST routes.
            assert.equal(await focusedId(page, "new-api-key"), "new-api-key");
            const redirected = page.waitForRequest((r) => r.url().startsWith(CALLBACK));
            const key = await continueAfterKey(page);
            const body = await meWithKey(base, key);
            assert.equal(body.name, name);
            const back = new URL((await redirected).url());
            assert.equal(back.searchParams.get("state"), "key-state");
            const who = await whoFromCode(
              board,
              clientId,
              back.searchParams.get("code")!,
              verifier,
            );
            assert.equal(who.agent_id, body.id, "the connection acts as the same agent");
            assert.deepEqual(problems.errors, [], "no console errors (CSP included)");
          } finally {
            await context.close();
          }
        },
      );

      await t.step(
        "a wrong key is shown at the key field, focused and invalid, at 390×844",
        async () => {
          const { url } = await authorizationUrl(base, clientId, "wrong-key");
          const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
          try {
            const page = await context.newPage();
            await page.goto(url.toString());
            await clickConsent(page, { mode: "link", apiKey: `pb_live_${"x".repeat(43)}` });
            await page.waitForSelector("#key-error");
            const field = page.locator("#api_key");
            assert.equal(await focusedId(page, "api_key"), "api_key", "focused");
            assert.equal(await field.getAttribute("aria-invalid"), "true");
            assert.match(await field.getAttribute("aria-describedby") ?? "", /key-error/);
            assert.equal(await field.inputValue(), "", "the wrong key is not kept in the page");
            const error = await page.locator("#key-error").innerText();
            assert.match(error, /invalid or has been revoked/);
            assert.match(error, /retype it in this field/);
            // The error and the field are on screen together, and nothing else shows it on top.
            const box = async (sel: string) => (await page.locator(sel).boundingBox())!;
            const [e, f] = [await box("#key-error"), await box("#api_key")];
            assert.ok(e.y >= 0 && f.y + f.height <= 844, `error at ${e.y}, field at ${f.y}`);
            assert.ok(f.y - (e.y + e.height) < 60, "the error sits right above the field");
            assert.equal(await page.locator("[role=alert]").count(), 1);
            await screenshot(page, "consent-wrong-key-390x844.png");
            // Retyping the right key in that field connects.
            const agent = await register(board);
            const redirected = page.waitForRequest((r) => r.url().startsWith(CALLBACK));
            await page.fill("#api_key", agent.key);
            await page.click("text=Link agent and connect");
            assert.ok(new URL((await redirected).url()).searchParams.get("code"));
          } finally {
            await context.close();
          }
        },
      );

      await t.step(
        "double clicks on Create and Continue: one agent, its key, then the app",
        async () => {
          const name = `double-${crypto.randomUUID().slice(0, 8)}`;
          const { url, verifier } = await authorizationUrl(base, clientId, "double-state");
          const context = await browser.newContext();
          try {
            const page = await context.newPage();
            await page.goto(url.toString());
            await page.fill("#name", name);
            await page.check('input[name="participation_basis"][value="owner_directed"]');
            await page.locator("text=Create agent and connect").click({ clickCount: 2, delay: 5 });
            await page.waitForSelector("#new-api-key", { timeout: 15_000 });
            // The second click's answer may replace the page the first rendered: settle first,
            // so that Continue is clicked on the page the browser keeps.
            await page.waitForLoadState("networkidle");
            await page.waitForSelector("#new-api-key", { timeout: 15_000 });
            const key = await page.inputValue("#new-api-key");
            const redirected = page.waitForRequest((r) => r.url().startsWith(CALLBACK), {
              timeout: 15_000,
            });
            await page.locator("text=continue to the application").click({
              clickCount: 2,
              delay: 5,
            });
            const back = new URL((await redirected).url());
            assert.equal(back.searchParams.get("state"), "double-state");
            const me = await whoFromCode(board, clientId, back.searchParams.get("code")!, verifier);
            assert.equal(me.name, name);
            // The key the page showed is the agent's (one agent was made).
            assert.equal((await meWithKey(base, key)).id, me.agent_id);
          } finally {
            await context.close();
          }
        },
      );

      await t.step("Link: an existing agent's key connects that agent", async () => {
        const agent = await register(board);
        const { url, verifier } = await authorizationUrl(base, clientId, "link-state");
        const back = await consentInChromium(browser, url, CALLBACK, {
          mode: "link",
          apiKey: agent.key,
        });
        assert.equal(back.searchParams.get("state"), "link-state");
        const me = await whoFromCode(board, clientId, back.searchParams.get("code")!, verifier);
        assert.equal(me.agent_id, agent.id);
      });

      await t.step(
        "Link: a key pasted with blanks around it (as copied from a terminal) connects that agent",
        async () => {
          const agent = await register(board);
          const { url, verifier } = await authorizationUrl(base, clientId, "padded-state");
          const back = await consentInChromium(browser, url, CALLBACK, {
            mode: "link",
            apiKey: ` ${agent.key} \t`,
          });
          assert.equal(back.searchParams.get("state"), "padded-state", String(back));
          const me = await whoFromCode(board, clientId, back.searchParams.get("code")!, verifier);
          assert.equal(me.agent_id, agent.id);
        },
      );

      await t.step("Deny: the browser returns with access_denied", async () => {
        const { url } = await authorizationUrl(base, clientId, "deny-state");
        const back = await consentInChromium(browser, url, CALLBACK, { mode: "deny" });
        assert.equal(back.searchParams.get("error"), "access_denied");
        assert.equal(back.searchParams.get("state"), "deny-state");
        assert.equal(back.searchParams.get("code"), null);
      });

      await t.step(
        "no participation basis is chosen for the person; Create waits for one",
        async () => {
          const { url } = await authorizationUrl(base, clientId, "basis-state");
          const context = await browser.newContext();
          try {
            const page = await context.newPage();
            await page.goto(url.toString());
            const radios = page.locator('input[name="participation_basis"]');
            assert.equal(await radios.count(), 3);
            for (let i = 0; i < 3; i++) assert.equal(await radios.nth(i).isChecked(), false);
            let posted = false;
            page.on("request", (r) => {
              if (r.method() === "POST") posted = true;
            });
            await page.fill("#name", `unchosen-${crypto.randomUUID().slice(0, 8)}`);
            await page.click("text=Create agent and connect");
            // The browser holds the form back (a required choice) and says so at the field.
            const invalid = await radios.first().evaluate((r) =>
              !(r as unknown as { validity: { valid: boolean } }).validity.valid
            );
            assert.equal(invalid, true);
            assert.equal(posted, false, "nothing was sent");
            assert.equal(new URL(page.url()).pathname, "/oauth/authorize");
          } finally {
            await context.close();
          }
        },
      );

      await t.step("a taken name shows the form again, and the corrected form works", async () => {
        const taken = await register(board);
        const { url, verifier } = await authorizationUrl(base, clientId, "again-state");
        const context = await browser.newContext();
        try {
          const page = await context.newPage();
          await page.goto(url.toString());
          await clickConsent(page, { mode: "create", name: taken.name });
          await page.waitForSelector("[role=alert]");
          assert.match(await page.locator("[role=alert]").innerText(), /already taken/);
          const name = `corrected-${crypto.randomUUID().slice(0, 8)}`;
          const redirected = page.waitForRequest((r) => r.url().startsWith(CALLBACK));
          await clickConsent(page, { mode: "create", name });
          await continueAfterKey(page);
          const back = new URL((await redirected).url());
          const me = await whoFromCode(board, clientId, back.searchParams.get("code")!, verifier);
          assert.equal(me.name, name);
        } finally {
          await context.close();
        }
      });

      for (
        const [label, viewport] of [
          ["desktop", { width: 1280, height: 800 }],
          ["phone", { width: 390, height: 844 }],
        ] as const
      ) {
        await t.step(`the page at ${viewport.width}×${viewport.height} (${label})`, async () => {
          const { url } = await authorizationUrl(base, clientId, "look");
          const context = await browser.newContext({ viewport });
          const problems: Problems = { dialogs: [], errors: [], expected: new Set() };
          try {
            const page = await context.newPage();
            watch(page, problems);
            await page.goto(url.toString());
            await assertSafeLayout(page, `consent page (${label})`);
            assert.equal(await page.locator("main").count(), 1, "one main landmark");
            // Every participation choice is readable in full: nothing clipped or cut off.
            const clipped = await page.evaluate(`[...document.querySelectorAll("label.choice")]
              .filter((l) => l.scrollWidth > l.clientWidth + 1
                || l.getBoundingClientRect().right > document.documentElement.clientWidth)
              .length`);
            assert.equal(clipped, 0, "participation choices fit the width");
            assert.equal(await page.locator("label.choice").count(), 3);
            await screenshot(page, `consent-${viewport.width}x${viewport.height}.png`);
            assert.deepEqual(problems.errors, [], "no console errors (CSP included)");
          } finally {
            await context.close();
          }
        });
      }
    } finally {
      await browser.close();
    }
  },
});
