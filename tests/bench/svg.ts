/**
 * SVG sanitiser benchmark: the worst inputs we know how to build for each check of
 * `domain/articles/svg_sanitize.ts` (CSS scans, escapes, nesting, element and failure
 * counts, namespaces), each at the 64 KiB source limit; every one must sanitise in under
 * 50 ms. `tests/articles_svg_linear_test.ts` uses the same inputs to assert the work grows
 * linearly with the input.
 *
 * Run alone: `deno run -A tests/bench/svg.ts`.
 */
import { ARTICLE_LIMITS, svgSanitizer } from "../../domain/articles/mod.ts";

const { sanitizeSvg: sanitize } = await svgSanitizer();
/** The sanitiser with operator secrets to look for, as the board runs it. */
const sanitizeSvg = (svg: string) =>
  sanitize(svg, {
    moderatorKey: "bench-moderator-key-0123456789abcdef",
    secret: "bench-board-secret-0123456789abcdef",
  });

const OPEN = '<svg xmlns="http://www.w3.org/2000/svg">';
const TARGET_MS = 50;
const RUNS = 7;

/** `unit` repeated to fill `room` characters (at least once). */
function fill(unit: string, room: number): string {
  return unit.repeat(Math.max(1, Math.floor(room / unit.length)));
}

/** A document of `bytes` (ASCII) made of `head`, repeated `unit` and `tail`. */
function doc(bytes: number, head: string, unit: string, tail: string): string {
  return head + fill(unit, bytes - head.length - tail.length) + tail;
}

/** Many elements whose style attribute is as long as allowed, made of `css`. */
function styles(bytes: number, css: string): string {
  const one = `<rect style="${fill(css, ARTICLE_LIMITS.svgStyleAttributeBytes - 8)}"/>`;
  return doc(bytes, OPEN, one, "</svg>");
}

/** Worst-case inputs by name, each `bytes` long (at most). */
export const WORST_SVGS: Record<string, (bytes: number) => string> = {
  "url( in one attribute": (n) => doc(n, `${OPEN}<rect fill="`, "url(", `"/></svg>`),
  "url(' in one attribute": (n) => doc(n, `${OPEN}<rect fill="`, "url('", `"/></svg>`),
  "url( in style attributes": (n) => styles(n, "url("),
  "function names in style attributes": (n) => styles(n, "a("),
  "CSS escapes in one attribute": (n) => doc(n, `${OPEN}<rect fill="`, "\\75 ", `"/></svg>`),
  "backslashes in one attribute": (n) => doc(n, `${OPEN}<rect fill="`, "\\", `"/></svg>`),
  "comment openers in one attribute": (n) => doc(n, `${OPEN}<rect fill="`, "/*", `"/></svg>`),
  "white space after url in one attribute": (n) =>
    doc(n, `${OPEN}<rect fill="url`, " ", `"/></svg>`),
  "url( in <style> split by CDATA": (n) =>
    doc(n, `${OPEN}<style>`, "url(<![CDATA[]]>", "</style></svg>"),
  "<style> split by comments": (n) => doc(n, `${OPEN}<style>`, "u<!---->", "</style></svg>"),
  "<style> text at its limit, then more": (n) => doc(n, `${OPEN}<style>`, "url(", "</style></svg>"),
  "nesting": (n) => doc(n, OPEN, "<g>", ""),
  "unbound prefixes": (n) => doc(n, OPEN, "<a:b/>", "</svg>"),
  "elements": (n) => doc(n, OPEN, "<g/>", "</svg>"),
  "elements with CSS values": (n) =>
    doc(n, OPEN, '<g fill="url(#a)" transform="scale(2)"/>', "</svg>"),
  "attributes": (n) => {
    const attrs: string[] = [];
    let size = OPEN.length + 12;
    for (let i = 0; size < n - 12; i++) {
      const a = ` a${i}=""`;
      attrs.push(a);
      size += a.length;
    }
    return `${OPEN}<rect${attrs.join("")}/></svg>`;
  },
  "entities in text": (n) => doc(n, `${OPEN}<text>`, "&amp;", "</text></svg>"),
  "long names, deep, failing children": (n) => {
    const name = "g".repeat(Math.floor(n / 2 / (ARTICLE_LIMITS.svgDepth - 1)) - 3);
    const open = `<${name}>`.repeat(ARTICLE_LIMITS.svgDepth - 1);
    return doc(n, OPEN + open, "<script/>", "");
  },
};

/** Milliseconds of each run of `sanitizeSvg(svg)`. */
function timeRuns(svg: string, runs: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    sanitizeSvg(svg);
    out.push(performance.now() - t0);
  }
  return out;
}

/** The benchmark's section of docs/benchmarks.md. */
export function run(): string {
  const bytes = ARTICLE_LIMITS.svgSourceBytes;
  const lines = [
    `SVG sanitiser: the worst inputs of ${bytes} bytes, ${RUNS} runs each (target: every run < ${TARGET_MS} ms).`,
    "",
    "| input | median ms | max ms | target |",
    "|---|---|---|---|",
  ];
  for (const [name, make] of Object.entries(WORST_SVGS)) {
    const svg = make(bytes);
    if (new TextEncoder().encode(svg).length > bytes) throw new Error(`${name} is too long`);
    timeRuns(svg, 2);
    const t = timeRuns(svg, RUNS).sort((a, b) => a - b);
    const max = t[t.length - 1];
    lines.push(
      `| ${name} | ${t[RUNS >> 1].toFixed(1)} | ${max.toFixed(1)} | ${
        max < TARGET_MS ? "met" : "MISSED"
      } |`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main) console.log(run());
