/**
 * Checks of a page rendered in Chromium shared by the browser tests: console errors and
 * dialogs watched, the layout probed (no script, main landmark visible, nothing wider
 * than the viewport, the site stylesheet applied), screenshots saved and checked.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";

export interface Problems {
  dialogs: string[];
  errors: string[];
  /**
   * Error statuses the test asks for (a 404 page, a refused form): Chromium logs each
   * as "Failed to load resource". Only these exact URLs and statuses are excused.
   */
  expected: Set<string>;
  /** Console lines excused by pattern (an address with an id the test learns later). */
  expectedMatching?: RegExp[];
}

/** The console line Chromium writes for an error status of `url`. */
export function loadFailure(status: string, url: string): string {
  return `Failed to load resource: the server responded with a status of ${status} @ ${url}`;
}

/** Records every dialog, console error and page error of a page. */
export function watch(page: Page, problems: Problems): void {
  page.on("dialog", (d) => {
    problems.dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    const line = `${m.text()} @ ${m.location().url}`;
    if (problems.expected.has(line)) return;
    if (problems.expectedMatching?.some((re) => re.test(line))) return;
    problems.errors.push(line);
  });
  page.on("pageerror", (e) => problems.errors.push(String(e)));
}

/** Facts about the rendered page, computed in the browser (a string: no DOM types here). */
const LAYOUT_PROBE = `(() => {
  const all = [...document.querySelectorAll("*")];
  const handlers = all.filter((el) => [...el.attributes].some((a) => /^on/i.test(a.name)));
  const main = document.querySelector("main");
  const box = main ? main.getBoundingClientRect() : null;
  const vw = document.documentElement.clientWidth;
  // Content inside a scrolling <pre> may be wider: the <pre> scrolls, the page does not.
  const wide = [...document.querySelectorAll("main *")].filter((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.right > vw + 1 && !el.closest("pre");
  }).map((el) => el.tagName);
  return {
    scripts: document.querySelectorAll("script, iframe, object, embed").length,
    handlers: handlers.map((el) => el.tagName),
    mainVisible: !!box && box.width > 200 && box.height > 100,
    scrollWidth: document.documentElement.scrollWidth,
    vw,
    wide,
    compat: document.compatMode,
    stylesheet: getComputedStyle(document.body).backgroundColor,
  };
})()`;

interface LayoutFacts {
  scripts: number;
  handlers: string[];
  mainVisible: boolean;
  scrollWidth: number;
  vw: number;
  wide: string[];
  compat: string;
  stylesheet: string;
}

/** No script element or handler attribute in the DOM, main visible, nothing wider than the viewport. */
export async function assertSafeLayout(page: Page, what: string): Promise<void> {
  const facts = await page.evaluate(LAYOUT_PROBE) as LayoutFacts;
  assert.equal(facts.scripts, 0, `${what}: no script/iframe/object element`);
  assert.deepEqual(facts.handlers, [], `${what}: no event-handler attribute`);
  assert.ok(facts.mainVisible, `${what}: the main landmark is visible`);
  assert.ok(facts.scrollWidth <= facts.vw, `${what}: page ${facts.scrollWidth}px > ${facts.vw}px`);
  assert.deepEqual(facts.wide, [], `${what}: elements wider than the viewport`);
  assert.equal(facts.compat, "CSS1Compat", `${what}: standards mode`);
  assert.equal(facts.stylesheet, "rgb(251, 250, 247)", `${what}: the site stylesheet applies`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  const png = await page.screenshot({ fullPage: true });
  // A PNG with real content: the signature, a sensible size, and the heading visible.
  assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], `${name} is a PNG`);
  assert.ok(png.length > 20_000, `${name}: ${png.length} bytes looks blank`);
  assert.ok(await page.locator("main h1").first().isVisible(), `${name}: heading visible`);
}
