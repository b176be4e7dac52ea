/**
 * Every page state of the website in Chromium at 1280×800 and 390×844, in light and dark
 * mode: axe-core (through @axe-core/playwright, with the WCAG 2.2 AA rules) reports no serious
 * or critical violation;
 * the HTML weighs under 50 KB before compression (what it loads besides, under 20 KB);
 * the dark palette applies and figures keep their light card.
 */
import assert from "node:assert/strict";
import AxeBuilder from "@axe-core/playwright";
import type { Page, Request as PageRequest, Response as PageResponse } from "playwright-core";
import { launchBrowser, skipBrowserTests } from "./browser.ts";
import { SCHEMES, siteFixture, VIEWPORTS } from "./site_states.ts";
import { DOCS_PAGE_BUDGET, PAGE_BUDGET } from "../website_helpers.ts";

/**
 * The axe rules run: WCAG 2.0, 2.1 and 2.2 levels A and AA (2.2 adds `target-size`, which
 * axe runs only when asked for by tag) and axe's best practices.
 */
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"];

/** The most everything else a page loads (stylesheet, icon, figures) may weigh, uncompressed. */
const ASSETS_BUDGET = 20 * 1024;

/**
 * Bytes of every response the page shown at the end loads while `load` runs (a form post
 * loads pages on the way: only what follows the last top-level navigation counts).
 */
async function weigh(page: Page, load: () => Promise<unknown>): Promise<Map<string, number>> {
  const loads: Array<{ navigation: number; url: string; bytes: Promise<number | null> }> = [];
  let navigation = 0;
  const onRequest = (req: PageRequest) => {
    if (req.isNavigationRequest() && req.frame() === page.mainFrame()) navigation++;
  };
  const onResponse = (res: PageResponse) => {
    const bytes = res.body().then((b) => b.length, () => null);
    loads.push({ navigation, url: res.url(), bytes });
  };
  page.on("request", onRequest);
  page.on("response", onResponse);
  try {
    await load();
    await page.waitForLoadState("load");
  } finally {
    page.off("request", onRequest);
    page.off("response", onResponse);
  }
  const sizes = new Map<string, number>();
  for (const l of loads) {
    const bytes = await l.bytes;
    if (l.navigation === navigation && bytes !== null) sizes.set(l.url, bytes);
  }
  return sizes;
}

/**
 * Of these selectors, the rendered targets smaller than 24 × 24 CSS px, with their size (a
 * string: no DOM types here).
 */
const SMALL_TARGETS = `(selectors) => selectors.flatMap((s) => {
  const el = document.querySelector(s);
  if (!el) return [];
  // A radio button or checkbox is also operated through its label, which is then the target.
  const label = /^(radio|checkbox)$/.test(el.type) && el.labels && el.labels[0];
  const r = (label || el).getBoundingClientRect();
  if (r.width === 0 && r.height === 0) return [];
  return r.width < 23.5 || r.height < 23.5
    ? [s + " (" + Math.round(r.width) + " × " + Math.round(r.height) + ")"]
    : [];
})`;

/** Computed colours in the page (a string: no DOM types here). */
const COLOURS = `(() => {
  const img = document.querySelector("figure img");
  return {
    body: getComputedStyle(document.body).backgroundColor,
    figure: img ? getComputedStyle(img).backgroundColor : null,
  };
})()`;

Deno.test({
  name: "website in Chromium: axe finds no serious or critical violation on any page state",
  ignore: skipBrowserTests(),
  fn: async (t) => {
    await using site = await siteFixture();
    const browser = await launchBrowser();
    const failures: string[] = [];
    try {
      for (const scheme of SCHEMES) {
        for (const v of VIEWPORTS) {
          const context = await browser.newContext({
            viewport: { width: v.width, height: v.height },
            colorScheme: scheme,
          });
          const page = await context.newPage();
          for (const state of site.states) {
            const what = `${state.name} (${v.label}, ${scheme})`;
            await t.step(what, async () => {
              let doc: PageResponse | null = null;
              const sizes = await weigh(page, async () => {
                doc = await page.goto(site.url + state.path);
                if (state.act) doc = await state.act(page);
              });
              const served = doc as PageResponse | null;
              assert.equal(served?.status(), state.status, `${what}: HTTP status`);
              // axe runs under the page's own strict CSP: playwright injects it through the
              // DevTools protocol, which CSP does not govern (no bypassCSP).
              const csp = served?.headers()["content-security-policy"] ?? "";
              assert.match(csp, /default-src 'none'/, `${what}: CSP`);
              assert.ok(!/script-src/.test(csp), `${what}: no script allowed`);
              const html = sizes.get(page.url().split("#")[0]) ?? 0;
              const assets = [...sizes.values()].reduce((a, b) => a + b, 0) - html;
              const list = [...sizes].map(([u, n]) => `${u} ${n}`).join(", ");
              assert.ok(
                html > 0 &&
                  html < (state.path.startsWith("/docs/") ? DOCS_PAGE_BUDGET : PAGE_BUDGET),
                `${what}: document ${html} bytes (${list})`,
              );
              assert.ok(assets < ASSETS_BUDGET, `${what}: assets ${assets} bytes (${list})`);
              if (state.shows) {
                const inner = page.viewportSize()!.height;
                const inView = (b: { y: number; height: number } | null) =>
                  !!b && b.height > 0 && b.y >= 0 && b.y + b.height <= inner;
                // Chromium scrolls to an autofocused field when it next renders after the load:
                // wait up to 3 s for that scroll on a busy machine (the page runs no script).
                let box = await page.locator(state.shows).boundingBox();
                for (let i = 0; i < 30 && !inView(box); i++) {
                  await new Promise((r) => setTimeout(r, 100));
                  box = await page.locator(state.shows).boundingBox();
                }
                assert.ok(
                  box && box.height > 0 && box.y >= 0 && box.y + box.height <= inner,
                  `${what}: ${state.shows} in view (${JSON.stringify(box)})`,
                );
              }
              const results = await new AxeBuilder({ page }).withTags(AXE_TAGS).analyze();
              // Stricter than axe's rule (which lets a small target pass on spacing alone):
              // every target axe weighs is at least 24 × 24 CSS px itself.
              const targets = [...results.passes, ...results.violations, ...results.incomplete]
                .filter((r) => r.id === "target-size")
                .flatMap((r) => r.nodes.map((n) => n.target.join(" ")));
              const small = await page.evaluate(
                `(${SMALL_TARGETS})(${JSON.stringify(targets)})`,
              ) as string[];
              for (const s of small) failures.push(`${what}: target under 24 × 24 px: ${s}`);
              for (const x of results.violations) {
                if (x.impact !== "serious" && x.impact !== "critical") continue;
                const where = x.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; ");
                failures.push(`${what}: ${x.id} (${x.impact}) ${x.help} at ${where}`);
              }
              const colours = await page.evaluate(COLOURS) as {
                body: string;
                figure: string | null;
              };
              assert.equal(
                colours.body,
                scheme === "dark" ? "rgb(22, 25, 29)" : "rgb(251, 250, 247)",
                `${what}: the ${scheme} palette applies`,
              );
              if (colours.figure) {
                const [r, g, b] = colours.figure.match(/\d+/g)!.map(Number);
                assert.ok(r > 240 && g > 240 && b > 240, `${what}: figure card ${colours.figure}`);
              }
            });
          }
          await context.close();
        }
      }
    } finally {
      await browser.close();
    }
    assert.deepEqual(failures, [], failures.join("\n"));
  },
});

/** Code spans in docs tables that wrap onto two lines, and the page's overflow. */
const TABLE_CODE = `(() => {
  const codes = [...document.querySelectorAll("td code, th code")];
  return {
    codes: codes.length,
    wrapped: codes.filter((c) => c.getClientRects().length > 1).map((c) => c.textContent),
    scrollWidth: document.documentElement.scrollWidth,
    vw: document.documentElement.clientWidth,
  };
})()`;

Deno.test({
  name: "docs on a phone: code in tables never wraps inside; tables scroll, the page does not",
  ignore: skipBrowserTests(),
  fn: async () => {
    await using site = await siteFixture();
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
      for (const doc of ["api", "articles", "limits", "website"]) {
        await page.goto(`${site.url}/docs/${doc}`);
        const facts = await page.evaluate(TABLE_CODE) as {
          codes: number;
          wrapped: string[];
          scrollWidth: number;
          vw: number;
        };
        assert.ok(facts.codes > 5, `${doc}: code in tables`);
        assert.deepEqual(facts.wrapped, [], `${doc}: code spans broken across lines`);
        assert.ok(facts.scrollWidth <= facts.vw, `${doc}: the page scrolls sideways`);
      }
    } finally {
      await browser.close();
    }
  },
});
