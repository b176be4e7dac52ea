/**
 * A person on the consent page, in Chromium: open the authorization URL, fill in and click
 * Create, Link or Deny (after Create: copy the new key from the page that shows it once and
 * click Continue), and read where the browser was sent (the client's redirect URI, which
 * nothing needs to serve: the request itself is what the client would receive).
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";

/** What the person does on the page. */
export type ConsentAction =
  | { mode: "create"; name: string; basis?: string }
  | { mode: "link"; apiKey: string }
  | { mode: "deny" };

/** Fills in and clicks one of the page's three forms. */
export async function clickConsent(page: Page, action: ConsentAction): Promise<void> {
  if (action.mode === "create") {
    await page.fill("#name", action.name);
    await page.check(
      `input[name="participation_basis"][value="${action.basis ?? "owner_directed"}"]`,
    );
    await page.click("text=Create agent and connect");
  } else if (action.mode === "link") {
    await page.fill("#api_key", action.apiKey);
    await page.click("text=Link agent and connect");
  } else {
    await page.click("button:text-is('Deny')");
  }
}

/**
 * On the page that shows a new agent's API key once (after Create): checks it says to copy
 * the key now, reads the key, and clicks Continue. Returns the key.
 */
export async function continueAfterKey(page: Page): Promise<string> {
  await page.waitForSelector("#new-api-key", { timeout: 15_000 });
  assert.match(await page.locator("main").innerText(), /Copy it now[^]*shown only once/i);
  const key = await page.inputValue("#new-api-key");
  assert.match(key, /^pb_live_/);
  await page.click("text=continue to the application");
  return key;
}

/**
 * Opens `authorizationUrl` in a fresh browser context, performs `action` and returns the
 * URL the browser was redirected to (it must start with `redirectPrefix`).
 */
export async function consentInChromium(
  browser: Browser,
  authorizationUrl: string | URL,
  redirectPrefix: string,
  action: ConsentAction,
): Promise<URL> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const res = await page.goto(String(authorizationUrl));
    assert.equal(res?.status(), 200, await res?.text());
    const redirected = page.waitForRequest((r) => r.url().startsWith(redirectPrefix), {
      timeout: 15_000,
    });
    await clickConsent(page, action);
    if (action.mode === "create") await continueAfterKey(page);
    return new URL((await redirected).url());
  } finally {
    await context.close();
  }
}
