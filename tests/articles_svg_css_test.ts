/**
 * SVG CSS checks that cannot be split or escaped past, the caps on CSS size, and the
 * upload allowance charged before the sanitiser runs.
 */
import assert from "node:assert/strict";
import {
  ARTICLE_LIMITS,
  ARTICLE_QUOTAS,
  cssUnescape,
  svgSanitizer,
} from "../domain/articles/mod.ts";
import { postSvg, SIMPLE_SVG } from "./article_helpers.ts";
import { assertError, register, testBoard } from "./helpers.ts";

const { sanitizeSvg: sanitize } = await svgSanitizer();
/** The sanitiser without operator secrets (API-key shapes are refused all the same). */
const sanitizeSvg = (svg: string) => sanitize(svg, { moderatorKey: undefined, secret: undefined });
const OPEN = '<svg xmlns="http://www.w3.org/2000/svg">';
const EVIL = "https://evil.example/leak";

/** The rules of the failures of `svg` (empty when it was accepted). */
function rules(svg: string): string[] {
  const r = sanitizeSvg(svg);
  if (!r.failures.length) assert.ok(r.svg);
  return r.failures.map((f) => f.rule);
}

Deno.test("<style> text split by CDATA, a comment or dropped markup is checked as one", () => {
  const bypasses = [
    `<style>@im<![CDATA[port]]> '${EVIL}';</style>`,
    `<style>@im<!-- x -->port '${EVIL}';</style>`,
    `<style>@im<metadata/>port '${EVIL}';</style>`,
    `<style>@im<desc>z</desc>port '${EVIL}';</style>`,
    `<style>rect { fill: u<![CDATA[rl(${EVIL})]]> }</style>`,
    `<style>rect { fill: u<!---->rl(${EVIL}) }</style>`,
    `<style>rect { fill: url<![CDATA[(${EVIL})]]> }</style>`,
    `<style>rect { fill: /*<![CDATA[*/url(${EVIL})/*]]>*/ }</style>`,
  ];
  for (const body of bypasses) {
    assert.ok(rules(`${OPEN}${body}</svg>`).length > 0, `accepted: ${body}`);
  }
});

Deno.test("markup inside <style> is dropped; the kept text is what was checked", () => {
  const r = sanitizeSvg(`${OPEN}<style>rect { fill: red }<desc>x</desc> /* c */</style></svg>`);
  assert.deepEqual(r.failures, []);
  assert.equal(r.svg, `${OPEN}<style>rect { fill: red }  </style></svg>`);
  assert.ok(r.removed.includes("elements inside <style>"));
});

Deno.test("CSS escapes in presentation attributes are decoded before the checks", () => {
  const attrs = [
    `fill="u\\rl(${EVIL})"`,
    `fill="\\75 rl(${EVIL})"`,
    `fill="\\000075rl(${EVIL})"`,
    `fill="url\\(${EVIL})"`,
    `stroke="\\69 mage(${EVIL})"`,
    `mask="U\\52 L(${EVIL})"`,
    `filter="ur\\6c(${EVIL})"`,
  ];
  for (const a of attrs) {
    assert.ok(rules(`${OPEN}<rect ${a}/></svg>`).length > 0, `accepted: ${a}`);
  }
  assert.equal(cssUnescape("u\\rl(\\23 a)"), "url(#a)");
  assert.equal(cssUnescape("\\0 \\110000 x\\"), "\ufffd\ufffdx");
  // Escaped in-document references stay usable.
  assert.deepEqual(rules(`${OPEN}<rect fill="u\\rl(#g)"/></svg>`), []);
});

Deno.test("every attribute gets the CSS checks, not only style", () => {
  assert.deepEqual(rules(`${OPEN}<rect fill="image(${EVIL})"/></svg>`), ["css"]);
  assert.deepEqual(rules(`${OPEN}<rect stroke="-webkit-image-set('x' 1x)"/></svg>`), ["css"]);
  assert.deepEqual(rules(`${OPEN}<rect fill="url(${EVIL})"/></svg>`), ["external_reference"]);
  assert.deepEqual(rules(`${OPEN}<rect clip-path="url(#c)" fill="url('#g')"/></svg>`), []);
});

Deno.test("style attributes and <style> text have size caps", () => {
  const long = "fill:red;".repeat(Math.ceil(ARTICLE_LIMITS.svgStyleAttributeBytes / 9) + 1);
  assert.deepEqual(rules(`${OPEN}<rect style="${long}"/></svg>`), ["size"]);
  assert.deepEqual(rules(`${OPEN}<rect style="${long.slice(0, 4000)}"/></svg>`), []);
  const half = "rect{fill:red}".repeat(Math.ceil(ARTICLE_LIMITS.svgStyleTextBytes / 28) + 1);
  assert.deepEqual(rules(`${OPEN}<style>${half}</style></svg>`), []);
  assert.deepEqual(rules(`${OPEN}<style>${half}</style><style>${half}</style></svg>`), ["size"]);
});

Deno.test("POST /v1/articles/assets: refused uploads spend the daily allowance", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const upload = (svg: string) => postSvg(board, a.key, svg);
  const bad = `${OPEN}<rect fill="url(${EVIL})"/></svg>`;
  for (let i = 0; i < ARTICLE_QUOTAS.assetsPerDay; i++) {
    await assertError(await upload(bad), 400, "ARTICLE_CHECKS_FAILED");
  }
  const details = await assertError(await upload(SIMPLE_SVG), 429, "DAILY_LIMIT");
  assert.deepEqual([details.limit_name, details.scope, details.window], [
    "account_article_assets_per_day",
    "account",
    "utc_day",
  ]);
  // Over the allowance, the SVG is not even parsed: the refusal is the allowance's.
  await assertError(await upload(bad), 429, "DAILY_LIMIT");
});
