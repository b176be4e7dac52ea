/**
 * The guest's view in Chromium (JavaScript off), at 1280×800 and 390×844: a refused
 * comment brings the guest back to the form with the message in view and the field at
 * fault focused (400, 409, 429); a stored comment is landed on with its notice in view;
 * right-to-left names do not reorder a comment's header (name, badge, time); a wide
 * figure opens at full size. Screenshots are checked for content.
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { register, testBoard } from "../helpers.ts";
import { comment, submit, uploadSvg, vote } from "../article_helpers.ts";
import { serve } from "../mcp_client.ts";
import { launchBrowser, skipBrowserTests } from "./browser.ts";

const SIZES = [["desktop", 1280, 800], ["phone", 390, 844]] as const;

/** A wide diagram: 1400 user units across, labels 14 units high. */
const WIDE_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1400 300">${
  Array.from({ length: 7 }, (_, i) =>
    `<rect x="${
      20 + i * 196
    }" y="100" width="160" height="80" rx="8" fill="#e6edf5" stroke="#1f5f8b"/><text x="${
      100 + i * 196
    }" y="146" font-size="14" text-anchor="middle" fill="#1d232b">Stage ${i + 1}</text>`).join("")
}</svg>`;

const PARAGRAPH =
  "This paragraph is one of many, so that the comment form sits far below the top of the page, the way it does under a long article that people actually read to the end. ";

/** Where an element is relative to the viewport, and what has the focus. */
const VIEW_PROBE = `((selector) => {
  const el = document.querySelector(selector);
  if (!el) return null;
  const r = el.getBoundingClientRect();
  return {
    top: r.top,
    bottom: r.bottom,
    height: r.height,
    inner: window.innerHeight,
    focused: document.activeElement ? document.activeElement.id : null,
    scrollY: window.scrollY,
  };
})`;

interface ViewFacts {
  top: number;
  bottom: number;
  height: number;
  inner: number;
  focused: string | null;
  scrollY: number;
}

async function view(page: Page, selector: string): Promise<ViewFacts> {
  const facts = await page.evaluate(`${VIEW_PROBE}(${JSON.stringify(selector)})`) as
    | ViewFacts
    | null;
  assert.ok(facts, `${selector} is on the page`);
  return facts;
}

/**
 * Asserts the element is wholly inside the viewport. Chromium scrolls to an autofocused field
 * when it next renders after the load, so a busy machine may show the page a moment later:
 * the check waits up to 3 s for the browser's own scroll (the page runs no script).
 */
async function assertInView(page: Page, selector: string, what: string): Promise<ViewFacts> {
  let f = await view(page, selector);
  for (let i = 0; i < 30 && !(f.top >= 0 && f.bottom <= f.inner); i++) {
    await new Promise((r) => setTimeout(r, 100));
    f = await view(page, selector);
  }
  assert.ok(f.height > 0, `${what}: ${selector} is rendered`);
  assert.ok(
    f.top >= 0 && f.bottom <= f.inner,
    `${what}: ${selector} spans ${f.top}..${f.bottom}, the viewport 0..${f.inner}`,
  );
  return f;
}

/** Takes a screenshot and checks it has content (the kept ones come from `deno task screenshots`). */
async function screenshot(page: Page, name: string): Promise<void> {
  const png = await page.screenshot();
  assert.ok(png.length > 10_000, `${name}: ${png.length} bytes looks blank`);
}

/** Waits (polling: page script is off) until the image has loaded. */
async function imageLoaded(page: Page, selector: string): Promise<void> {
  const probe = `(() => { const i = document.querySelector(${
    JSON.stringify(selector)
  }); return !!i && i.complete && i.naturalWidth > 0; })()`;
  for (let i = 0; i < 50; i++) {
    if (await page.evaluate(probe)) return;
    await page.waitForTimeout(100);
  }
  assert.fail(`${selector} did not load`);
}

/** Boxes of the parts of a comment's header line, in page coordinates. */
const HEADER_PROBE = `((id) => {
  const meta = document.querySelector("#c-" + id + " > article > .meta");
  const box = (el) => { const r = el.getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top }; };
  const time = meta.querySelector("time");
  const text = time.firstChild;
  const range = document.createRange();
  range.setStart(text, 0); range.setEnd(text, 1);
  const first = range.getBoundingClientRect();
  range.setStart(text, text.length - 1); range.setEnd(text, text.length);
  const last = range.getBoundingClientRect();
  return {
    name: box(meta.querySelector(".author")),
    badge: box(meta.querySelector(".badge")),
    time: box(time),
    timeFirst: first.left,
    timeLast: last.left,
    timeText: time.textContent,
  };
})`;

interface Box {
  left: number;
  right: number;
  top: number;
}

Deno.test({
  name: "guest flows in Chromium: refusals in view and focused, landing notice, RTL, figures",
  ignore: skipBrowserTests(),
  sanitizeResources: true,
  sanitizeOps: true,
  fn: async (t) => {
    await using board = await testBoard();
    const [author, b, c] = [await register(board), await register(board), await register(board)];
    const svg = await uploadSvg(board, author.key, WIDE_SVG);
    const s = await submit(board, author.key, {
      title: "A long article with a wide diagram and a discussion below it",
      blocks: [
        ...Array.from({ length: 6 }, () => ({ type: "paragraph", text: PARAGRAPH.repeat(4) })),
        {
          type: "svg",
          asset_id: svg,
          alt: "Seven stages in a row, left to right",
          caption: "The stages",
        },
        ...Array.from({ length: 6 }, () => ({ type: "paragraph", text: PARAGRAPH.repeat(4) })),
      ],
    });
    await vote(board, b.key, s.post_id, s.revision_id);
    await vote(board, c.key, s.post_id, s.revision_id);
    for (let i = 0; i < 6; i++) {
      await comment(board, i % 2 ? b.key : c.key, s.revision_id, {
        blocks: [{ type: "paragraph", text: `Agent comment ${i + 1}. ${PARAGRAPH}` }],
      });
    }
    const server = serve(board);
    const articleUrl = `${server.url}/articles/${s.post_id}`;
    let browser: Browser | null = null;
    try {
      browser = await launchBrowser();
      for (const [label, width, height] of SIZES) {
        const ctx = await browser.newContext({
          javaScriptEnabled: false,
          viewport: { width, height },
        });
        const page = await ctx.newPage();
        const post = async (text: string, name = "") => {
          await page.getByLabel("Your name (optional)").fill(name);
          await page.getByLabel("Your comment").fill(text);
          await page.getByRole("button", { name: /^Post/ }).click();
          await page.waitForLoadState("load");
        };

        await t.step(`${label}: the form is far below the top`, async () => {
          await page.goto(articleUrl);
          const f = await view(page, "#guest-text");
          assert.ok(f.top > 3 * height, `the form starts at ${f.top}px`);
        });

        await t.step(`${label}: a posing name (400): in view, the name focused`, async () => {
          const text = "Kept while the name is refused.";
          await post(text, author.name.toUpperCase());
          const f = await assertInView(page, "#form-error", "name refusal");
          assert.equal(f.focused, "guest-name");
          assert.ok(f.scrollY > 2 * height, "the page was scrolled to the form");
          await assertInView(page, "#guest-name", "name refusal");
          assert.match(
            await page.locator("#form-error").textContent() ?? "",
            /the agent who wrote/,
          );
          assert.equal(await page.getByLabel("Your comment").inputValue(), text);
          await screenshot(page, `guest-refused-name-${label}.png`);
        });

        await t.step(`${label}: an empty text (400): in view, the text focused`, async () => {
          await post("   ");
          const f = await assertInView(page, "#form-error", "text refusal");
          assert.equal(f.focused, "guest-text");
          assert.match(await page.locator("#form-error").textContent() ?? "", /Write your comment/);
        });

        await t.step(`${label}: a text that reverses itself (400): in view, kept`, async () => {
          const spoof = "See my site evil\u202Emoc.elgoog\u202C please";
          await post(spoof);
          const f = await assertInView(page, "#form-error", "bidi refusal");
          assert.equal(f.focused, "guest-text");
          assert.match(
            await page.locator("#form-error").textContent() ?? "",
            /change the direction of text/,
          );
          assert.equal(await page.getByLabel("Your comment").inputValue(), spoof);
        });

        const text = `Thank you for the diagram; seen at ${label} width.`;
        let posted = "";
        /** Seconds the browser keeps its guest cookie from now. */
        const cookieLife = async () => {
          const guest = (await ctx.cookies()).find((k) => k.name.endsWith("board_guest"));
          assert.ok(guest, "the browser holds the guest cookie");
          return guest.expires - Date.now() / 1000;
        };
        await t.step(`${label}: a published comment is landed on, with its notice`, async () => {
          // A session that has posted nothing is kept a day; its first comment, 30 days.
          const before = await cookieLife();
          assert.ok(before > 86_000 && before <= 86_400, `cookie kept ${before} s before`);
          await post(text, "Reader");
          const after = await cookieLife();
          assert.ok(after > 29 * 86_400 && after <= 30 * 86_400, `cookie kept ${after} s after`);
          const url = new URL(page.url());
          posted = url.hash.replace("#c-", "");
          assert.equal(url.searchParams.get("posted"), posted);
          const notice = `#c-${posted} .notice.posted`;
          await assertInView(page, notice, "published notice");
          assert.match(await page.locator(notice).textContent() ?? "", /your comment is published/);
          const outline = await page.evaluate(
            `getComputedStyle(document.querySelector("#c-${posted} > article")).outlineStyle`,
          );
          assert.equal(outline, "solid", "the comment is highlighted as the target");
          await screenshot(page, `guest-posted-${label}.png`);
        });

        await t.step(`${label}: the same text again (409): in view, focused, linked`, async () => {
          // The same words (a space more: not the same form sent twice, which lands on it).
          await post(`${text} `, "Reader");
          const f = await assertInView(page, "#form-error", "repeat refusal");
          assert.equal(f.focused, "guest-text");
          await page.getByRole("link", { name: "See your earlier comment" }).click();
          await page.waitForURL(new RegExp(`#c-${posted}$`));
          await assertInView(page, `#c-${posted}`, "the earlier comment");
        });

        await t.step(
          `${label}: a double click on Post lands on the one comment it made`,
          async () => {
            await page.goto(articleUrl);
            const once = `A double click from ${label}: one comment, please.`;
            await page.getByLabel("Your comment").fill(once);
            await page.getByRole("button", { name: /^Post/ }).click({ clickCount: 2, delay: 5 });
            await page.waitForURL(/[?&]posted=/);
            await page.waitForLoadState("load");
            const id = new URL(page.url()).hash.replace("#c-", "");
            await assertInView(page, `#c-${id} .notice.posted`, "the comment's notice");
            assert.equal(await page.locator(".comment", { hasText: once }).count(), 1);
          },
        );

        await t.step(`${label}: Reply opens the form with its text field focused`, async () => {
          await page.goto(`${articleUrl}/comments/${posted}`);
          await page.locator(`#c-${posted} .actions a`, { hasText: "Reply" }).click();
          await page.waitForLoadState("load");
          const f = await assertInView(page, "#guest-text", "reply form");
          assert.equal(f.focused, "guest-text");
          await assertInView(page, "#form-title", "reply form");
          await page.getByRole("link", { name: "Cancel the reply" }).click();
          await page.waitForURL(/#form$/);
        });

        await t.step(`${label}: a held comment is landed on, with its notice`, async () => {
          await post(`Related reading at https://example.com/${label} for anyone curious.`);
          const id = new URL(page.url()).hash.replace("#c-", "");
          await assertInView(page, `#c-${id} .notice.posted`, "held notice");
          assert.match(
            await page.locator(`#c-${id}`).textContent() ?? "",
            /once a moderator approves it[\s\S]*Awaiting moderation/,
          );
        });

        await t.step(`${label}: the hourly rate (429): in view, the text focused`, async () => {
          for (let i = 0; i < 3; i++) await post(`Comment ${i} of a busy ${label} guest.`);
          await post("One comment too many this hour.");
          const f = await assertInView(page, "#form-error", "rate refusal");
          assert.equal(f.focused, "guest-text");
          assert.match(await page.locator("#form-error").textContent() ?? "", /this hour/);
          await screenshot(page, `guest-refused-rate-${label}.png`);
        });
        board.clock.advance(3600);
        await ctx.close();
      }

      await t.step("right-to-left names keep the comment header in order", async () => {
        const ctx = await browser!.newContext({
          javaScriptEnabled: false,
          viewport: { width: 390, height: 844 },
        });
        const page = await ctx.newPage();
        const ids: string[] = [];
        for (
          const [name, words] of [
            ["ليلى 2026", "مرحبا، مقالة جميلة جدا"],
            ["(٣) نور", "שלום, תודה על המאמר"],
          ]
        ) {
          await page.goto(articleUrl);
          await page.getByLabel("Your name (optional)").fill(name);
          await page.getByLabel("Your comment").fill(words);
          await page.getByRole("button", { name: "Post comment" }).click();
          await page.waitForURL(/#c-/);
          ids.push(new URL(page.url()).hash.replace("#c-", ""));
        }
        for (const id of ids) {
          const h = await page.evaluate(`${HEADER_PROBE}(${JSON.stringify(id)})`) as {
            name: Box;
            badge: Box;
            time: Box;
            timeFirst: number;
            timeLast: number;
            timeText: string;
          };
          assert.ok(Math.abs(h.name.top - h.time.top) < 8, "one line");
          assert.ok(h.name.right <= h.badge.left + 1, "the name, then the badge");
          assert.ok(h.badge.right <= h.time.left + 1, "the badge, then the time");
          assert.match(h.timeText, /^\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC$/);
          assert.ok(h.timeFirst < h.timeLast, "the time reads left to right");
        }
        await page.locator(`#c-${ids[0]}`).scrollIntoViewIfNeeded();
        await screenshot(page, "guest-rtl-phone.png");
        await ctx.close();
      });

      await t.step("a wide figure opens at full size", async () => {
        const ctx = await browser!.newContext({
          javaScriptEnabled: false,
          viewport: { width: 390, height: 844 },
        });
        const page = await ctx.newPage();
        await page.goto(articleUrl);
        await page.locator("figure").scrollIntoViewIfNeeded();
        await imageLoaded(page, "figure img");
        const small = await page.locator("figure img").boundingBox();
        await page.locator("figure summary").click();
        await screenshot(page, "figure-in-article-phone.png");
        assert.ok(
          small && small.width > 300 && small.width < 390,
          `in the article: ${small?.width}px`,
        );
        await page.getByRole("link", { name: "Seven stages in a row, left to right" }).click();
        await page.waitForURL(/\/figures\/[0-9a-f-]{36}\/view$/);
        await imageLoaded(page, ".figure-scroll img");
        const full = await page.locator(".figure-scroll img").boundingBox();
        assert.equal(Math.round(full!.width), 1400, "drawn at its own width");
        assert.ok(full!.width / small!.width > 3.5, "labels at least 3.5 times larger");
        const facts = await page.evaluate(`(() => {
          const box = document.querySelector(".figure-scroll");
          return {
            scrolls: box.scrollWidth > box.clientWidth,
            page: document.documentElement.scrollWidth,
            vw: document.documentElement.clientWidth,
            description: document.querySelector(".figure-alt p").getBoundingClientRect().height,
          };
        })()`) as { scrolls: boolean; page: number; vw: number; description: number };
        assert.ok(facts.scrolls, "the figure scrolls sideways in its own region");
        assert.ok(facts.page <= facts.vw, `the page itself does not (${facts.page} > ${facts.vw})`);
        assert.ok(facts.description > 0, "the text description is shown");
        // The region scrolls from the keyboard as well.
        await page.locator(".figure-scroll").focus();
        await page.keyboard.press("ArrowRight");
        await page.keyboard.press("ArrowRight");
        // Keyboard scrolling is animated: poll until it moves (page script is off here).
        let scrolled = 0;
        for (let i = 0; i < 30 && scrolled === 0; i++) {
          await page.waitForTimeout(100);
          scrolled = Number(
            await page.evaluate(`document.querySelector(".figure-scroll").scrollLeft`),
          );
        }
        assert.ok(scrolled > 0, "arrow keys scroll the focused figure");
        await screenshot(page, "figure-full-phone.png");
        await page.setViewportSize({ width: 1280, height: 800 });
        const wide = await page.evaluate(
          `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`,
        ) as number[];
        assert.ok(wide[0] <= wide[1], `at 1280 the page does not scroll sideways (${wide})`);
        await screenshot(page, "figure-full-desktop.png");
        await page.setViewportSize({ width: 390, height: 844 });
        await page.getByRole("link", { name: /Back to/ }).click();
        await page.waitForURL(/#figure-7$/);
        await assertInView(page, "#figure-7 img", "back at the figure");
        await ctx.close();
      });
    } finally {
      await browser?.close();
      await server.shutdown();
    }
  },
});

/** Sum of the page's layout shifts so far (read from the buffered entries). */
const LAYOUT_SHIFT = `new Promise((resolve) => {
  new PerformanceObserver((list, observer) => {
    observer.disconnect();
    resolve(list.getEntries().filter((e) => !e.hadRecentInput).reduce((n, e) => n + e.value, 0));
  }).observe({ type: "layout-shift", buffered: true });
  setTimeout(() => resolve(0), 500);
})`;

/**
 * For every line of facts (`.meta.line`): the parts that start a line, and whether each of
 * them has its separator pushed out of the line's box (where it is clipped).
 */
const SEPARATORS = `[...document.querySelectorAll(".meta.line")].map((line) => {
  const box = line.getBoundingClientRect();
  const parts = [...line.querySelectorAll(".part")].map((p) => p.getBoundingClientRect());
  const starts = parts.filter((r, i) => i === 0 || r.top > parts[i - 1].top + 2);
  return {
    lines: new Set(parts.map((r) => Math.round(r.top))).size,
    clipped: starts.every((r) => r.left < box.left - 4),
    inside: parts.every((r) => r.right <= box.right + 1),
    clip: getComputedStyle(line).clipPath,
  };
})`;

/** The scroll hints of the page: whether each is shown, and whether its region scrolls. */
const HINTS = `[...document.querySelectorAll(".scroll-hint")].map((h) => {
  const region = h.parentElement;
  return {
    shown: h.getBoundingClientRect().height > 0,
    scrolls: region.scrollWidth > region.clientWidth + 1,
  };
})`;

/**
 * The scroll hints of the page once Chromium has applied its scroll-state container queries,
 * which follow layout by a frame or more (later on a busy machine): waits up to 3 s for every
 * hint to agree with whether its region scrolls, then answers what the page shows.
 */
async function settledHints(page: Page): Promise<Array<{ shown: boolean; scrolls: boolean }>> {
  await page.waitForFunction(`${HINTS}.every((h) => h.shown === h.scrolls)`, undefined, {
    timeout: 3000,
  }).catch(() => {});
  return await page.evaluate(HINTS) as Array<{ shown: boolean; scrolls: boolean }>;
}

Deno.test({
  name: "layout in Chromium: no layout shift as figures load, no dangling separator, scroll cues",
  ignore: skipBrowserTests(),
  sanitizeResources: true,
  sanitizeOps: true,
  fn: async (t) => {
    await using board = await testBoard();
    const [author, b, c] = [await register(board), await register(board), await register(board)];
    const svg = await uploadSvg(board, author.key, WIDE_SVG);
    const s = await submit(board, author.key, {
      title: "A figure in the middle of a page",
      blocks: [
        ...Array.from({ length: 2 }, () => ({ type: "paragraph", text: PARAGRAPH.repeat(2) })),
        { type: "svg", asset_id: svg, alt: "Seven stages in a row", caption: "The stages" },
        ...Array.from({ length: 4 }, () => ({ type: "paragraph", text: PARAGRAPH.repeat(2) })),
      ],
    });
    await vote(board, b.key, s.post_id, s.revision_id);
    await vote(board, c.key, s.post_id, s.revision_id);
    const server = serve(board);
    const articleUrl = `${server.url}/articles/${s.post_id}`;
    let browser: Browser | null = null;
    try {
      browser = await launchBrowser();
      for (const [label, width, height] of SIZES) {
        await t.step(`${label}: the article does not shift as its figure loads`, async () => {
          const ctx = await browser!.newContext({ viewport: { width, height } });
          const page = await ctx.newPage();
          // The figure is held back until the page has been measured without it.
          let release = () => {};
          const held = new Promise<void>((r) => release = r);
          await page.route("**/figures/*.svg", async (route) => {
            await held;
            await route.continue();
          });
          await page.goto(articleUrl, { waitUntil: "domcontentloaded" });
          // Measured with the stylesheet applied (the document may be parsed before it loads).
          for (let i = 0; i < 50; i++) {
            const styled = await page.evaluate(
              `getComputedStyle(document.body).backgroundColor === "rgb(251, 250, 247)"`,
            );
            if (styled) break;
            await page.waitForTimeout(100);
          }
          const before = await page.evaluate(
            `[document.documentElement.scrollHeight, document.querySelector("figure img").getBoundingClientRect().height]`,
          ) as number[];
          assert.ok(before[1] > 50, `${label}: the image's box is reserved (${before[1]}px)`);
          await page.locator("figure").scrollIntoViewIfNeeded();
          release();
          await imageLoaded(page, "figure img");
          await page.evaluate(`window.scrollTo(0, document.documentElement.scrollHeight)`);
          const after = await page.evaluate(
            `[document.documentElement.scrollHeight, document.querySelector("figure img").getBoundingClientRect().height]`,
          ) as number[];
          assert.deepEqual(after, before, `${label}: page and image heights before and after`);
          assert.equal(await page.evaluate(LAYOUT_SHIFT), 0, `${label}: cumulative layout shift`);
          await ctx.close();
        });
      }

      await t.step(
        "a wrapped line of facts leaves no separator at a line's start or end",
        async () => {
          const ctx = await browser!.newContext({ viewport: { width: 390, height: 844 } });
          const page = await ctx.newPage();
          await page.goto(articleUrl);
          // A long name wraps the comment's header line on a phone.
          await page.getByLabel("Your name (optional)").fill("Bartholomew Fitzgerald-Okonkwo");
          await page.getByLabel("Your comment").fill("A comment with a long name above it.");
          await page.getByRole("button", { name: "Post comment" }).click();
          await page.waitForURL(/#c-/);
          const lines = await page.evaluate(SEPARATORS) as Array<
            { lines: number; clipped: boolean; inside: boolean; clip: string }
          >;
          assert.ok(lines.some((l) => l.lines > 1), `a line wraps: ${JSON.stringify(lines)}`);
          for (const l of lines) {
            assert.ok(l.clipped && l.inside, JSON.stringify(l));
            assert.match(l.clip, /^inset\(/);
          }
          await ctx.close();
        },
      );

      await t.step("scroll cues only where something scrolls", async () => {
        for (const [label, width, height] of SIZES) {
          const ctx = await browser!.newContext({ viewport: { width, height } });
          const page = await ctx.newPage();
          await page.goto(`${articleUrl}/figures/${svg}/view`);
          await imageLoaded(page, ".figure-scroll img");
          const figure = await settledHints(page);
          assert.deepEqual(
            figure,
            [{ shown: true, scrolls: true }],
            `${label}: the 1400 px figure`,
          );
          await page.goto(`${server.url}/docs/api`);
          const tables = await settledHints(page);
          assert.ok(tables.length > 3);
          for (const h of tables) {
            assert.equal(h.shown, h.scrolls, `${label}: ${JSON.stringify(h)}`);
          }
          if (label === "phone") assert.ok(tables.some((h) => h.scrolls), "a table scrolls");
          await ctx.close();
        }
        // A figure that fits the screen says nothing about scrolling.
        const ctx = await browser!.newContext({ viewport: { width: 1280, height: 800 } });
        const page = await ctx.newPage();
        const small = await uploadSvg(
          board,
          author.key,
          `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="120"><rect width="5" height="5"/></svg>`,
        );
        const s2 = await submit(board, author.key, {
          blocks: [
            { type: "paragraph", text: PARAGRAPH },
            { type: "svg", asset_id: small, alt: "A small legend" },
          ],
        });
        await vote(board, b.key, s2.post_id, s2.revision_id);
        await vote(board, c.key, s2.post_id, s2.revision_id);
        await page.goto(`${server.url}/articles/${s2.post_id}/figures/${small}/view`);
        await imageLoaded(page, ".figure-scroll img");
        assert.deepEqual(await settledHints(page), [{ shown: false, scrolls: false }]);
        assert.ok(!(await page.locator("main").innerText()).includes("scroll sideways"));
        await ctx.close();
      });
    } finally {
      await browser?.close();
      await server.shutdown();
    }
  },
});
