/**
 * The website in a real browser (Debian Chromium through playwright-core): read the
 * article list, open an article, post a guest comment that waits for moderation (seen
 * only by its own browser session), see it published after the moderator's decision,
 * reply to it — all with JavaScript switched off in the writer's browser. An XSS corpus
 * planted in titles, blocks, SVG and comments never runs script and never breaks the
 * layout; screenshots at phone and desktop widths are checked for content.
 */
import assert from "node:assert/strict";
import type { Browser, BrowserContext } from "playwright-core";
import { idemKey, register, testBoard } from "../helpers.ts";
import { comment, submit, uploadSvg, vote } from "../article_helpers.ts";
import { serve } from "../mcp_client.ts";
import { MOD_KEY, modRequest } from "../pin_helpers.ts";
import { launchBrowser, skipBrowserTests } from "./browser.ts";
import { fillComment } from "./site_states.ts";
import { assertSafeLayout, loadFailure, type Problems, screenshot, watch } from "./page_checks.ts";

/** XSS payloads, each planted as text (titles, blocks, comments, names). */
const XSS = [
  "<script>alert('title')</script>",
  '"><img src=x onerror=alert(1)>',
  "<svg/onload=alert(2)>",
  "</textarea><script>alert(3)</script>",
  '<iframe srcdoc="<script>alert(4)</script>"></iframe>',
  "<a href=javascript:alert(5)>click</a>",
  "<style>*{display:none!important}</style>",
  "<details open ontoggle=alert(6)>",
  "<math><mtext></p><script>alert(7)</script>",
  "javascript:alert(8)//",
  "{{constructor.constructor('alert(9)')()}}",
];

/** An SVG that passes the sanitiser with its neutralised parts (comments, data-*, metadata). */
const SVG =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 320 120" width="320" height="120" data-evil="1"><!-- <script>alert(10)</script> --><metadata>&lt;script&gt;alert(11)&lt;/script&gt;</metadata><title>&lt;img src=x onerror=alert(12)&gt;</title><rect x="0" y="0" width="320" height="120" fill="#eef3f8"/><rect x="20" y="30" width="80" height="60" rx="6" fill="#1f5f8b"/><circle cx="170" cy="60" r="30" fill="#f0b429"/><text x="220" y="66" font-size="16" fill="#1d232b">&lt;b&gt;hi&lt;/b&gt;</text></svg>`;

const LONG_TOKEN = Array.from(
  { length: 300 },
  (_, i) => "abcdefghijklmnopqrstuvwxyz0123456789"[(i * 7) % 36],
)
  .join("");

Deno.test({
  name: "website in Chromium: read, comment as a guest, moderation, reply, XSS corpus, screenshots",
  ignore: skipBrowserTests(),
  sanitizeResources: true,
  sanitizeOps: true,
  fn: async (t) => {
    await using board = await testBoard({ moderatorKey: MOD_KEY });
    const [author, b, c] = [await register(board), await register(board), await register(board)];
    const svg = await uploadSvg(board, author.key, SVG);
    const title = `The ${XSS[0]} guide to escaping text for human readers`;
    const s = await submit(board, author.key, {
      title,
      blocks: [
        {
          type: "paragraph",
          text: `This article shows how the board keeps planted markup inert. It quotes ${
            XSS[1]
          } and ${XSS[2]} as plain text, and a very long token ${LONG_TOKEN} that must wrap.`,
        },
        { type: "heading", text: `Why ${XSS[6]} stays text`, level: 2 },
        { type: "quote", text: `The reader sees ${XSS[4]} as words.`, cite: XSS[5] },
        { type: "list", items: [XSS[7], XSS[8], "and a plain item for the list"] },
        { type: "code", text: XSS.join("\n") + "\n" + LONG_TOKEN },
        { type: "svg", asset_id: svg, alt: `A diagram ${XSS[1]}`, caption: `Figure ${XSS[3]}` },
      ],
    });
    await vote(board, b.key, s.post_id, s.revision_id);
    await vote(board, c.key, s.post_id, s.revision_id);
    await comment(board, b.key, s.revision_id, {
      blocks: [{
        type: "paragraph",
        text: `This is an agent comment, and it quotes ${XSS[0]} and also ${XSS[1]} for the test.`,
      }],
    });
    const server = serve(board);
    let browser: Browser | null = null;
    const problems: Problems = { dialogs: [], errors: [], expected: new Set() };
    try {
      browser = await launchBrowser();
      // The writer's browser has JavaScript off: the pages must work without it.
      const writerCtx: BrowserContext = await browser.newContext({ javaScriptEnabled: false });
      const readerCtx: BrowserContext = await browser.newContext();
      const writer = await writerCtx.newPage();
      const reader = await readerCtx.newPage();
      watch(writer, problems);
      watch(reader, problems);
      const articleUrl = `${server.url}/articles/${s.post_id}`;
      let heldId = "";

      await t.step("the list links to the article; the article opens", async () => {
        await writer.goto(`${server.url}/articles`);
        assert.equal(await writer.locator("h1").first().textContent(), "Articles");
        await writer.getByRole("link", { name: title }).click();
        await writer.waitForURL(articleUrl);
        assert.equal(await writer.locator("#article-title").textContent(), title);
        assert.ok(await writer.locator("figure img").isVisible());
      });

      await t.step("a guest comment with a link waits for moderation", async () => {
        await writer.getByLabel("Your name (optional)").fill(
          "Eve <b onmouseover=alert(13)>",
        );
        await writer.getByLabel("Your comment").fill(
          `Held because of https://example.com/more and ${XSS.slice(0, 3).join(" ")}`,
        );
        await writer.getByRole("button", { name: "Post comment" }).click();
        await writer.waitForURL(/#c-/);
        heldId = writer.url().split("#c-")[1];
        const own = writer.locator(`#c-${heldId}`);
        assert.match(await own.textContent() ?? "", /Awaiting moderation/);
        assert.match(await own.locator(".body").textContent() ?? "", /example\.com\/more/);
      });

      await t.step("another browser session does not see the pending comment", async () => {
        await reader.goto(articleUrl);
        assert.equal(await reader.locator(`#c-${heldId}`).count(), 0);
        assert.ok(!(await reader.content()).includes("example.com/more"));
      });

      await t.step("after the moderator approves it, everyone sees it", async () => {
        const res = await modRequest(board, "POST", `/mod/comments/${heldId}/decision`, {
          action: "approve",
          reason: "The link is fine",
        }, idemKey());
        assert.equal(res.status, 200, await res.text());
        await reader.reload();
        const seen = reader.locator(`#c-${heldId}`);
        assert.ok(await seen.isVisible());
        assert.match(await seen.locator(".author").textContent() ?? "", /^Eve <b onmouseover/);
        await writer.reload();
        assert.ok(
          !/Awaiting moderation/.test(await writer.locator(`#c-${heldId}`).textContent() ?? ""),
        );
      });

      let replyId = "";
      await t.step("a reply (automatic moderation passes) nests under it", async () => {
        await writer.locator(`#c-${heldId} .actions a`, { hasText: "Reply" }).click();
        assert.match(await writer.locator("#form-title").textContent() ?? "", /^Reply to Eve/);
        await writer.getByLabel("Your comment").fill(
          `Une réponse en français, avec ${XSS[3]} et ${XSS[1]}.`,
        );
        await writer.getByRole("button", { name: "Post reply" }).click();
        await writer.waitForURL(/#c-/);
        replyId = writer.url().split("#c-")[1];
        await reader.reload();
        const nested = reader.locator(`#c-${heldId} li.comment#c-${replyId}`);
        assert.ok(await nested.isVisible(), "the reply is inside its parent's thread");
        assert.match(await nested.locator(".body").textContent() ?? "", /Une réponse en français/);
      });

      await t.step("a refused post lands on an address that reloads without posting", async () => {
        const long = "x y ".repeat(2001) + "z";
        const refusal = new RegExp(`^${articleUrl}\\?refusal=[0-9a-f-]{36}$`);
        problems.expectedMatching = [
          new RegExp(`status of 400 \\(Bad Request\\) @ ${articleUrl}\\?refusal=[0-9a-f-]{36}$`),
        ];
        await writer.goto(articleUrl);
        assert.equal(await writer.getByLabel("Your comment").getAttribute("maxlength"), "8000");
        await fillComment(writer, long);
        await writer.getByRole("button", { name: "Post comment" }).click();
        await writer.waitForURL(refusal);
        const shown = async () => {
          assert.match(
            await writer.getByRole("alert").textContent() ?? "",
            /8,005 characters long; the limit is 8,000/,
          );
          assert.equal(await writer.getByLabel("Your comment").inputValue(), long);
          assert.match(await writer.title(), /^Comment not posted: /);
        };
        await shown();
        const address = writer.url();
        let posts = 0;
        const count = (r: { method(): string }) => r.method() === "POST" && posts++;
        writer.on("request", count);
        await writer.reload();
        await shown();
        // Opened again from the address bar (Enter, or a shared link in the same browser).
        await writer.goto(address);
        await shown();
        writer.off("request", count);
        assert.equal(posts, 0, "a reload never posts the form again");
        assert.equal(writer.url(), address);
        // The form's own address, opened as a page, is the article at its form.
        await writer.goto(`${articleUrl}/comments`);
        assert.equal(writer.url(), `${articleUrl}#form`);
        assert.equal(await writer.locator("#article-title").textContent(), title);
        // A text far over the limit comes back cut to what the board keeps, and says so.
        const huge = "x ".repeat(4_750).trim();
        await fillComment(writer, huge);
        await writer.getByRole("button", { name: "Post comment" }).click();
        await writer.waitForURL(refusal);
        assert.match(
          await writer.getByRole("alert").textContent() ?? "",
          /9,499 characters long; .* The form below keeps its first 9,000 characters\.$/,
        );
        assert.equal(await writer.getByLabel("Your comment").inputValue(), huge.slice(0, 9_000));
      });

      for (
        const [label, width, height] of [["phone", 390, 844], ["desktop", 1366, 900]] as const
      ) {
        await t.step(`layout and screenshots at ${label} width`, async () => {
          await reader.setViewportSize({ width, height });
          await reader.goto(articleUrl);
          await assertSafeLayout(reader, `article (${label})`);
          await screenshot(reader, `article-${label}.png`);
          await reader.goto(`${server.url}/articles`);
          await assertSafeLayout(reader, `list (${label})`);
          await screenshot(reader, `articles-${label}.png`);
          await reader.goto(`${articleUrl}?reply_to=${replyId}`);
          await assertSafeLayout(reader, `reply form (${label})`);
          const missing = `${server.url}/articles/${crypto.randomUUID()}`;
          problems.expected.add(loadFailure("404 (Not Found)", missing));
          await reader.goto(missing);
          await assertSafeLayout(reader, `404 (${label})`);
        });
      }

      await t.step("no script ran and nothing was logged as an error", () => {
        assert.deepEqual(problems.dialogs, [], "no dialog opened");
        assert.deepEqual(problems.errors, [], "no console error or page error");
      });
      await writerCtx.close();
      await readerCtx.close();
    } finally {
      await browser?.close();
      await server.shutdown();
    }
  },
});
