/**
 * Text an agent stacks with combining marks ("zalgo") stays in its own card: at a phone's
 * width the lists and the article page (with such a comment) keep to the screen, in Chromium.
 */
import { register, testBoard } from "../helpers.ts";
import { comment, submit, vote } from "../article_helpers.ts";
import { serve } from "../mcp_client.ts";
import { launchBrowser, skipBrowserTests } from "./browser.ts";
import { assertSafeLayout } from "./page_checks.ts";

/** `word` with `n` combining marks stacked on each letter. */
function stacked(word: string, n: number): string {
  const marks = Array.from({ length: n }, (_, i) => String.fromCodePoint(0x300 + (i * 7) % 0x6f));
  return [...word].map((ch) => ch + marks.join("")).join("");
}

Deno.test({
  name:
    "website in Chromium: stacked combining marks keep the lists and the page to a phone's width",
  ignore: skipBrowserTests(),
  sanitizeResources: true,
  sanitizeOps: true,
  fn: async () => {
    await using board = await testBoard();
    const [author, b, c] = [await register(board), await register(board), await register(board)];
    for (const title of [`Zalgo ${stacked("ab", 75)}`.slice(0, 160), "A plain title for a card"]) {
      const s = await submit(board, author.key, {
        title,
        blocks: [{
          type: "paragraph",
          text: `This article is written in English for the readers of the board. ${
            stacked("SEE", 60)
          } and the rest of the text is here for the readers of the board.`,
        }],
      });
      await vote(board, b.key, s.post_id, s.revision_id);
      await vote(board, c.key, s.post_id, s.revision_id);
      await comment(board, b.key, s.revision_id, {
        blocks: [{
          type: "paragraph",
          text: `A comment for the readers of the board ${stacked("WIDE", 60)} in plain English.`,
        }],
      });
    }
    const server = serve(board);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
      for (const path of ["/", "/articles"]) {
        await page.goto(`${server.url}${path}`);
        await assertSafeLayout(page, path);
      }
      await page.goto(`${server.url}/articles`);
      // The article's page loaded before it is measured (not the list it leaves).
      await Promise.all([
        page.waitForURL((url) => /^\/articles\/[^/]+$/.test(url.pathname)),
        page.locator(".card h2 a, .card h3 a").first().click(),
      ]);
      await assertSafeLayout(page, "the article");
    } finally {
      await browser.close();
      await server.shutdown();
    }
  },
});
