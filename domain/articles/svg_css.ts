/**
 * CSS checks of the SVG sanitiser (docs/articles.md "SVG safety"). Every function here
 * scans its input once from left to right (no backtracking regular expressions), so the
 * cost of a check is linear in the length of what it checks.
 */

import { takeCodeUnits } from "../text.ts";

/** An in-document reference: `#` and an XML name. */
export const FRAGMENT = /^#[A-Za-z_][\w.\-:]*$/;

/** Functions that load or paint outside content (compared without a vendor prefix). */
const LOADING_FUNCTIONS = new Set(["image", "image-set", "cross-fade", "element", "src"]);

const BACKSLASH = 0x5c;

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
}

/** A character of a CSS identifier: ASCII letter, digit, `-`, `_`, or non-ASCII. */
function isNameChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) ||
    c === 0x2d || c === 0x5f || c >= 0x80;
}

/**
 * CSS text with its escapes decoded as a browser reads them: `\` and 1–6 hex digits (and
 * one following white space) is that code point (0, surrogates and values past U+10FFFF
 * become U+FFFD), `\` before a newline is dropped, `\` before any other character is that
 * character.
 */
export function cssUnescape(css: string): string {
  if (!css.includes("\\")) return css;
  const out: string[] = [];
  let from = 0;
  let i = 0;
  while (i < css.length) {
    if (css.charCodeAt(i) !== BACKSLASH) {
      i++;
      continue;
    }
    out.push(css.slice(from, i));
    i++;
    let hex = 0;
    while (hex < 6 && i + hex < css.length && isHex(css.charCodeAt(i + hex))) hex++;
    if (hex > 0) {
      const cp = parseInt(css.slice(i, i + hex), 16);
      const ok = cp !== 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
      out.push(String.fromCodePoint(ok ? cp : 0xfffd));
      i += hex;
      if (i < css.length && isSpace(css.charCodeAt(i))) {
        i += css.startsWith("\r\n", i) ? 2 : 1;
      }
    } else if (i < css.length && (css[i] === "\n" || css[i] === "\r" || css[i] === "\f")) {
      i += css.startsWith("\r\n", i) ? 2 : 1;
    } else if (i < css.length) {
      const cp = css.codePointAt(i)!;
      out.push(String.fromCodePoint(cp));
      i += cp > 0xffff ? 2 : 1;
    }
    from = i;
  }
  out.push(css.slice(from));
  return out.join("");
}

/** Removes CSS comments (an unterminated one runs to the end); each becomes a space. */
export function stripCssComments(css: string): string {
  if (!css.includes("/*")) return css;
  const out: string[] = [];
  let from = 0;
  for (;;) {
    const start = css.indexOf("/*", from);
    if (start < 0) break;
    out.push(css.slice(from, start), " ");
    const end = css.indexOf("*/", start + 2);
    from = end < 0 ? css.length : end + 2;
  }
  out.push(css.slice(from));
  return out.join("");
}

/**
 * A `javascript:`-style scheme after removing white space and control characters (which
 * browsers ignore inside schemes). `data:` URLs are refused by the fragment-only rule.
 */
export function hasScriptUrl(value: string): boolean {
  // deno-lint-ignore no-control-regex
  const squashed = value.replace(/[\s\u0000-\u001f\u007f-\u009f]/g, "").toLowerCase();
  return squashed.includes("javascript:") || squashed.includes("vbscript:") ||
    squashed.includes("livescript:");
}

/** What one pass over CSS text found: function names and `url()` targets. */
interface FunctionScan {
  /** Lower-case names of `name(` calls (white space before `(` tolerated). */
  names: Set<string>;
  /** Targets of `url(...)` that are not `#fragment` (shortened), `(unterminated url())`. */
  external: string[];
}

/**
 * One left-to-right pass: every identifier followed by optional white space and `(` is a
 * function call; the argument of a name ending in `url` is read to its closing quote or
 * `)` and the scan resumes after it, so every character is looked at a bounded number of
 * times.
 */
function scanFunctions(css: string): FunctionScan {
  const names = new Set<string>();
  const external: string[] = [];
  let nameStart = -1;
  let nameEnd = -1;
  let i = 0;
  const n = css.length;
  while (i < n) {
    const c = css.charCodeAt(i);
    if (isNameChar(c)) {
      if (nameEnd !== i) nameStart = i;
      while (i < n && isNameChar(css.charCodeAt(i))) i++;
      nameEnd = i;
      continue;
    }
    if (isSpace(c)) {
      // White space between a name and "(" keeps the name pending.
      const wasEnd = nameEnd === i;
      while (i < n && isSpace(css.charCodeAt(i))) i++;
      if (wasEnd) nameEnd = i;
      continue;
    }
    if (c === 0x28 && nameEnd === i && nameStart >= 0) {
      const name = css.slice(nameStart, i).trimEnd().toLowerCase();
      names.add(name);
      i++;
      if (name.endsWith("url")) i = readUrl(css, i, external);
      nameStart = nameEnd = -1;
      continue;
    }
    nameStart = nameEnd = -1;
    i++;
  }
  return { names, external };
}

/** Reads a `url(` argument from `i`; records it when external; returns where to resume. */
function readUrl(css: string, i: number, external: string[]): number {
  const n = css.length;
  while (i < n && isSpace(css.charCodeAt(i))) i++;
  const q = css[i];
  let target: string;
  let next: number;
  if (q === '"' || q === "'") {
    const close = css.indexOf(q, i + 1);
    if (close < 0) {
      external.push("(unterminated url())");
      return n;
    }
    target = css.slice(i + 1, close);
    next = close + 1;
  } else {
    const close = css.indexOf(")", i);
    if (close < 0) {
      external.push("(unterminated url())");
      return n;
    }
    target = css.slice(i, close);
    next = close + 1;
  }
  target = target.trim();
  if (!FRAGMENT.test(target)) external.push(takeCodeUnits(target, 80));
  return next;
}

/** Whether CSS text holds `word` (lower case) anywhere, ignoring case. */
function holds(lower: string, ...words: string[]): boolean {
  return words.some((w) => lower.includes(w));
}

/** One reason CSS is unsafe: `css`, `external_reference` (a `url()`) or `script_url`. */
interface CssProblem {
  rule: "css" | "external_reference" | "script_url";
  message: string;
}

/** Problems of already-decoded CSS text (every rule but the escape rule), by message. */
function decodedProblems(css: string, out: Map<string, CssProblem>): void {
  const add = (rule: CssProblem["rule"], message: string) => out.set(message, { rule, message });
  const lower = css.toLowerCase();
  if (holds(lower, "@import")) add("css", "@import is not allowed");
  if (holds(lower, "@namespace", "@document", "@-moz-document")) {
    add("css", "this at-rule is not allowed");
  }
  if (holds(lower, "-moz-binding") || /behavior\s*:/.test(lower)) {
    add("css", "behavior and -moz-binding are not allowed");
  }
  const { names, external } = scanFunctions(css);
  for (const name of names) {
    if (name.endsWith("expression")) add("css", "expression() is not allowed");
    if (LOADING_FUNCTIONS.has(name.replace(/^-[a-z]+-/, ""))) {
      add("css", "image(), image-set(), cross-fade(), element() and src() are not allowed");
    }
  }
  if (hasScriptUrl(css)) add("script_url", "script URLs are not allowed");
  for (const u of external) add("external_reference", `url(${u}) is an external reference`);
}

/**
 * Reasons CSS text is unsafe, checked both as written and with its CSS escapes decoded
 * (presentation attributes are CSS values too). `stylesheet` is for a `style` attribute or
 * the whole text of a `<style>` element: escapes and `<` are refused outright there, and
 * comments are removed first (the sanitiser's output has them removed); in other
 * attribute values comments stay, so nothing can hide behind them.
 */
export function cssProblems(css: string, stylesheet: boolean): CssProblem[] {
  // Every rule needs one of these characters (or "-moz-binding"): most values have none.
  if (!/[(:@\\<]/.test(css) && !css.toLowerCase().includes("-moz-binding")) return [];
  const out = new Map<string, CssProblem>();
  if (stylesheet) {
    for (
      const [bad, message] of [
        ["\\", "CSS escapes (backslashes) are not allowed"],
        ["<", '"<" is not allowed in CSS'],
      ]
    ) {
      if (css.includes(bad)) out.set(message, { rule: "css", message });
    }
    css = stripCssComments(css);
  }
  decodedProblems(css, out);
  const decoded = cssUnescape(css);
  if (decoded !== css) decodedProblems(decoded, out);
  return [...out.values()];
}
