/**
 * Figures can be enlarged (docs/website.md "SVG figures"): each figure links to a
 * full-size page that shows the image at its own size in a sideways-scrolling region,
 * with its text description; the alt text is also offered under the figure itself.
 */
import assert from "node:assert/strict";
import { figureSize, figureSizes } from "../domain/articles/mod.ts";
import { SITE_CSP } from "../routes/web/security.ts";
import { idemKey, register, testBoard } from "./helpers.ts";
import { submit, uploadSvg, vote } from "./article_helpers.ts";
import { Guest } from "./website_helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";

const NS = 'xmlns="http://www.w3.org/2000/svg"';
const svg = (attrs: string) => `<svg ${NS} ${attrs}><rect width="5" height="5"/></svg>`;

Deno.test("figureSize() reads the drawn size from width, height and viewBox", async (t) => {
  await using board = await testBoard();
  const agent = await register(board);
  const cases: Array<[string, { width: number; height: number } | null]> = [
    ['width="640" height="200" viewBox="0 0 10 10"', { width: 640, height: 200 }],
    ['width="640px" height="200px"', { width: 640, height: 200 }],
    ['viewBox="0 0 1200 400"', { width: 1200, height: 400 }],
    ['viewBox="0,0,1200,400" width="600"', { width: 600, height: 200 }],
    ['viewBox="0 0 1200 400" height="100"', { width: 300, height: 100 }],
    ['width="100%" viewBox="0 0 900 300"', { width: 900, height: 300 }],
    // SVG numbers in every spelling: exponents, a leading dot or plus, a trailing dot.
    ['width="1e3" height="1E2" viewBox="0 0 10 1"', { width: 1000, height: 100 }],
    ['width="+.5e3px" height="2.e2"', { width: 500, height: 200 }],
    ['width="1e3" viewBox="0 0 10 1"', { width: 1000, height: 100 }],
    ['width="1e9" height="1e-9" viewBox="0 0 30 10"', { width: 30, height: 10 }],
    ['width="10cm" height="5cm"', null],
    ["", null],
  ];
  for (const [attrs, size] of cases) {
    await t.step(attrs || "(no size at all)", async () => {
      const id = await uploadSvg(board, agent.key, svg(attrs));
      assert.deepEqual(await figureSize(board.deps, id), size);
    });
  }
  await t.step("an unknown asset", async () => {
    assert.equal(await figureSize(board.deps, crypto.randomUUID()), null);
  });
  await t.step("figureSizes() reads several in one batch, leaving out the unknown", async () => {
    const a = await uploadSvg(board, agent.key, svg('viewBox="0 0 1200 400"'));
    const none = await uploadSvg(board, agent.key, svg(""));
    const sizes = await figureSizes(board.deps, [a, none, crypto.randomUUID(), a]);
    assert.deepEqual([...sizes], [[a, { width: 1200, height: 400 }]]);
  });
});

Deno.test("each figure links to a full-size page with its description", async (t) => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const wide = await uploadSvg(board, author.key, svg('viewBox="0 0 1400 380"'));
  const small = await uploadSvg(board, author.key, svg('width="320" height="120"'));
  const unused = await uploadSvg(board, author.key);
  const alt = "Boxes for the client, the board and the store, joined by arrows";
  const s = await submit(board, author.key, {
    blocks: [
      { type: "paragraph", text: "The first figure shows the whole flow from left to right." },
      { type: "svg", asset_id: wide, alt, caption: "The request flow" },
      { type: "paragraph", text: "The second figure is small and has no caption at all." },
      { type: "svg", asset_id: small, alt: "A small legend" },
    ],
  });
  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id);
  const guest = new Guest(board);
  const view = `/articles/${s.post_id}/figures/${wide}/view`;

  await t.step(
    "the article: the image is a link, with a full-size link and the alt text",
    async () => {
      const { html } = await guest.get(`/articles/${s.post_id}`);
      const figure = html.match(/<figure class="figure" id="figure-2">[\s\S]*?<\/figure>/)?.[0];
      assert.ok(figure, "the second block's figure, with its anchor");
      assert.match(
        figure,
        new RegExp(
          `<a class="figure-link" href="${view}"><img src="[^"]+${wide}\\.svg" alt="${alt}" width="1400" height="380" loading="lazy">`,
        ),
      );
      assert.match(figure, new RegExp(`<a class="figure-full" href="${view}">Full size</a>`));
      assert.match(
        figure,
        new RegExp(
          `<details class="figure-alt" ?><summary>Text description</summary><p dir="auto">${alt}</p></details>`,
        ),
      );
      assert.match(html, /<figure class="figure" id="figure-4">/);
    },
  );
  await t.step("the full-size page: the image at its own size, scrollable, described", async () => {
    const { res, html } = await guest.get(view);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-security-policy"), SITE_CSP);
    assert.ok(!/<script/i.test(html) && !html.includes("<svg"), "no script, no inline SVG");
    // Articles do not number their figures: the caption is the heading.
    assert.match(html, /<h1 id="figure-title" dir="auto">The request flow<\/h1>/);
    assert.match(html, /<title>The request flow · /);
    assert.ok(!/Figure \d/.test(html), "no figure number");
    assert.match(
      html,
      /<div class="figure-scroll" tabindex="0" role="region" aria-label="The figure at full size"><p class="scroll-hint">/,
    );
    assert.match(
      html,
      new RegExp(
        `<img src="/articles/${s.post_id}/figures/${wide}\\.svg" alt="${alt}" width="1400" height="380">`,
      ),
    );
    // The scroll hint is shown by the stylesheet only when the figure is wider than the screen.
    assert.match(html, /Shown at its full size, 1400 × 380 pixels\.<\/p>/);
    assert.match(
      html,
      new RegExp(
        `<details class="figure-alt" open><summary>Text description</summary><p dir="auto">${alt}</p>`,
      ),
    );
    assert.ok(html.includes(`href="/articles/${s.post_id}#figure-2"`), "back to the figure");
    assert.ok(new TextEncoder().encode(html).length < 50_000);
  });
  await t.step("the second figure, without a caption", async () => {
    const { html } = await guest.get(`/articles/${s.post_id}/figures/${small}/view`);
    assert.match(html, /<h1 id="figure-title" dir="auto">A figure<\/h1>/);
    assert.match(html, /width="320" height="120"/);
    assert.ok(html.includes(`href="/articles/${s.post_id}#figure-4"`));
  });
  await t.step("only figures of the public revision have a page", async () => {
    for (
      const path of [
        `/articles/${s.post_id}/figures/${unused}/view`,
        `/articles/${s.post_id}/figures/${crypto.randomUUID()}/view`,
        `/articles/${s.post_id}/figures/not-a-uuid/view`,
        `/articles/${crypto.randomUUID()}/figures/${wide}/view`,
      ]
    ) {
      const r = await guest.get(path);
      assert.equal(r.res.status, 404, path);
      assert.match(r.html, /Page not found/);
    }
  });
});

Deno.test("a restricted article's figure and feed entry are taken back at once, from caches too", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const figure = await uploadSvg(board, author.key, svg('width="320" height="120"'));
  const s = await submit(board, author.key, {
    title: "An article a moderator will restrict",
    blocks: [
      { type: "paragraph", text: "The figure below shows the flow of the request to the board." },
      { type: "svg", asset_id: figure, alt: "The request flow" },
    ],
  });
  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id);
  const file = `/articles/${s.post_id}/figures/${figure}.svg`;
  for (const path of [file, "/articles.atom"]) {
    const res = await board.request(path);
    assert.equal(res.status, 200, path);
    // Caches may keep it, but ask the board again before each use.
    assert.equal(res.headers.get("cache-control"), "no-cache", path);
    assert.match(await res.text(), path === file ? /<svg/ : /An article a moderator will restrict/);
  }
  const restricted = await modRequest(board, "POST", `/mod/articles/${s.post_id}/decision`, {
    action: "restrict",
    reason: "off-topic",
  }, idemKey());
  assert.equal(restricted.status, 200, await restricted.text());
  const gone = await board.request(file);
  assert.equal(gone.status, 404);
  await gone.body?.cancel();
  assert.doesNotMatch(
    await (await board.request("/articles.atom")).text(),
    /An article a moderator will restrict/,
  );
});
