/**
 * A person whose Chromium blocks cookies (the browser's own setting, in its profile) posts a
 * comment: the answer is the page itself, 403, with the text kept and the message that
 * cookies are needed (docs/website.md "Refusals"), never an empty form.
 */
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { testBoard } from "../helpers.ts";
import { publishedArticle } from "../website_helpers.ts";
import { serve } from "../mcp_client.ts";
import { BROWSER_OPTIONS, skipBrowserTests } from "./browser.ts";

Deno.test({
  name: "Chromium blocking cookies: a comment is answered with its text and the cookie message",
  ignore: skipBrowserTests(),
  fn: async () => {
    await using board = await testBoard();
    await using server = serve(board);
    const a = await publishedArticle(board);
    const profile = await Deno.makeTempDir({ prefix: "board-no-cookies-" });
    // Chromium's setting "Block all cookies" (Settings › Privacy › Third-party and site data).
    await Deno.mkdir(`${profile}/Default`);
    await Deno.writeTextFile(
      `${profile}/Default/Preferences`,
      JSON.stringify({ profile: { default_content_setting_values: { cookies: 2 } } }),
    );
    const context = await chromium.launchPersistentContext(profile, BROWSER_OPTIONS);
    try {
      const page = context.pages()[0] ?? await context.newPage();
      await page.goto(`${server.url}/articles/${a.id}`);
      const text = "Written with cookies blocked; this text must come back.";
      await page.fill("textarea", text);
      const [answer] = await Promise.all([
        page.waitForNavigation(),
        page.click("form button[type=submit]"),
      ]);
      assert.equal(answer?.status(), 403);
      assert.match(await page.textContent("#form-error") ?? "", /cookies are needed to comment/);
      assert.equal(await page.inputValue("textarea"), text);
      assert.deepEqual(await context.cookies(), [], "the browser kept no cookie");
    } finally {
      await context.close();
      await Deno.remove(profile, { recursive: true });
    }
  },
});
