/**
 * The stylesheet's palettes (routes/web/site.css), light and dark: the focus ring stands out
 * from every background it is drawn on (3:1, WCAG 2.2 1.4.11 for focus indicators), and text
 * from the backgrounds it is written on (4.5:1, 1.4.3).
 */
import assert from "node:assert/strict";

const css = await Deno.readTextFile(new URL("../routes/web/site.css", import.meta.url));

/** The custom properties of the first `:root {` block at or after `from`. */
function palette(from: number): Map<string, string> {
  const start = css.indexOf(":root {", from);
  const block = css.slice(start, css.indexOf("}", start));
  return new Map([...block.matchAll(/(--[a-z-]+):\s*(#[0-9a-f]{6});/g)].map((m) => [m[1], m[2]]));
}

const light = palette(0);
const dark = new Map([...light, ...palette(css.indexOf("@media (prefers-color-scheme: dark)"))]);

/** WCAG 2 relative luminance of `#rrggbb`. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
    .map((v) => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** The backgrounds a focused control, link or comment sits on. */
const BACKGROUNDS = [
  "--paper",
  "--card",
  "--field-bg",
  "--code-bg",
  "--notice-bg",
  "--error-bg",
  "--guest-bg",
  "--pending-bg",
  "--rejected-bg",
  "--posted-bg",
];

for (const [scheme, colors] of [["light", light], ["dark", dark]] as const) {
  Deno.test(`${scheme} scheme: the focus ring is 3:1 or more against every background`, () => {
    for (const bg of BACKGROUNDS) {
      const ratio = contrast(colors.get("--focus")!, colors.get(bg)!);
      assert.ok(ratio >= 3, `--focus on ${bg}: ${ratio.toFixed(2)}:1`);
    }
  });
  Deno.test(`${scheme} scheme: text and muted text are 4.5:1 or more on the page and cards`, () => {
    for (const ink of ["--ink", "--muted", "--accent"]) {
      for (const bg of ["--paper", "--card"]) {
        const ratio = contrast(colors.get(ink)!, colors.get(bg)!);
        assert.ok(ratio >= 4.5, `${ink} on ${bg}: ${ratio.toFixed(2)}:1`);
      }
    }
  });
}
