/** Text measurement in the units the spec uses: Unicode code points and UTF-8 bytes. */
export const PREVIEW_CODE_POINTS = 280;

/** Names and topics: lowercase letters, digits and hyphens, starting with a letter or digit. */
export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]*$/;

/**
 * The slug a refused name or topic most likely meant (`MyAgent` → `myagent`, `General
 * Stuff` → `general-stuff`, `café_bot` → `cafe-bot`), or null when none of `min`-`max`
 * characters comes out of it.
 */
export function slugSuggestion(input: unknown, min: number, max: number): string | null {
  if (typeof input !== "string") return null;
  const slug = input.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase()
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  return slug !== input && slug.length >= min && slug.length <= max ? slug : null;
}

/** Number of Unicode code points (astral characters count once, not twice). */
export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Why a text breaks the rule every stored text follows. */
interface UnfitText {
  reason: "lone_surrogate" | "nul";
  /** What is wrong, to follow a field's name: "contains a NUL character". */
  message: string;
}

/**
 * Why `s` cannot be stored as text, or null: every text the board keeps (posts, names,
 * descriptions, articles, comments) is well-formed Unicode (no lone surrogate, which a
 * `\ud800`-style JSON escape makes) without NUL characters.
 */
export function unfitText(s: string): UnfitText | null {
  if (!s.isWellFormed()) {
    return { reason: "lone_surrogate", message: "contains a lone surrogate (not valid Unicode)" };
  }
  if (s.includes("\u0000")) return { reason: "nul", message: "contains a NUL character" };
  return null;
}

/** Bidirectional embeddings, overrides and isolates (U+202A–202E, U+2066–2069). */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/u;
/**
 * What shows nothing on its own: whitespace, format and default-ignorable characters (the
 * variation selectors, Hangul fillers, the combining grapheme joiner), combining marks with
 * nothing to combine with, the blank braille pattern. A title of nothing else is blank.
 */
const INVISIBLE = /^[\s\p{Cf}\p{Default_Ignorable_Code_Point}\p{M}\u2800]*$/u;
/** True when `s` shows nothing: only whitespace and invisible characters (`INVISIBLE`). */
export function isBlank(s: string): boolean {
  return INVISIBLE.test(s);
}
/** The lines `s` shows as where line breaks are kept: one more than its breaks (CR LF is one). */
export function lineCount(s: string): number {
  return 1 + (s.match(/\r\n|[\n\r\v\f\u0085\u2028\u2029]/g)?.length ?? 0);
}

/**
 * `s` with every run of lines that show nothing (`isBlank`) made one empty line, so that
 * paragraphs stay apart and no run of blank lines makes a text tall.
 */
export function collapseBlankLines(s: string): string {
  const out: string[] = [];
  for (const line of s.split("\n")) {
    if (!isBlank(line)) out.push(line);
    else if (out.at(-1) !== "") out.push("");
  }
  return out.join("\n");
}

/** Characters that end a line: controls (NUL aside: `unfitText`) and the line and paragraph separators. */
const LINE_BREAKING = /(?!\0)[\p{Cc}\p{Zl}\p{Zp}]/u;

/** `U+XXXX` of a character. */
function codePointName(c: string): string {
  return `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Why `title` is unfit as a title shown on one line in feeds, pages, tabs and Atom, or null:
 * a control character (a line break, a tab, a bell), a bidirectional control (it could
 * reverse how the rest of a line around the title reads), or nothing visible at all. Zero-width
 * joiners and other format characters inside visible text stay (emoji sequences need them).
 */
export function titleProblem(title: string): string | null {
  const control = title.match(LINE_BREAKING)?.[0];
  if (control !== undefined) {
    return `contains ${
      codePointName(control)
    }, a control character or line separator (a title is one line, without tabs)`;
  }
  const bidi = bidiProblem(title, "the title");
  if (bidi !== null) return bidi;
  if (INVISIBLE.test(title)) return "has no visible character";
  return null;
}

/**
 * Why `s` is unfit as text people read beside other text, or null: a bidirectional control
 * (an embedding, override or isolate) could make it display as other text
 * (`invoice_\u202Efdp.exe` shows as `invoice_exe.pdf`). `what` names it in the message.
 */
export function bidiProblem(s: string, what = "the text"): string | null {
  const bidi = s.match(BIDI_CONTROL)?.[0];
  if (bidi === undefined) return null;
  return `contains ${
    codePointName(bidi)
  }, a bidirectional control (it could reverse the text shown around ${what})`;
}

/**
 * True when `s` is fit as a short free text shown to others beside its author (an account's
 * description): well-formed Unicode without NUL (`unfitText`) and without bidirectional
 * controls, which could reverse the text shown around it.
 */
export function fitShownText(s: string): boolean {
  return unfitText(s) === null && !BIDI_CONTROL.test(s);
}

/**
 * Control characters, and what shows nothing in the sense of `INVISIBLE` (format and
 * default-ignorable characters: the Hangul fillers, the combining grapheme joiner, the Khmer
 * inherent vowels; the blank braille pattern) but the variation selectors, which emoji and
 * Mongolian names carry. A name made of them shows blank; inside one, they pass for spaces.
 */
const INVISIBLE_CONTROL =
  /\p{Cc}|\u2800|(?![\uFE00-\uFE0F\u{E0100}-\u{E01EF}\u180B-\u180D\u180F])[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

/**
 * Why `s` is unfit as a name shown to people who decide on it (an application's name on
 * the consent page), or null. The board's text rules (well-formed Unicode, no NUL) plus
 * no control, invisible format character or blank filler: bidirectional overrides and
 * isolates, zero-width characters, fillers and the like could reverse, hide or blank out
 * part of what is shown.
 */
export function displayNameProblem(s: string): string | null {
  const unfit = unfitText(s);
  if (unfit) return unfit.message;
  const bad = s.match(INVISIBLE_CONTROL)?.[0];
  if (bad !== undefined) {
    return `contains ${codePointName(bad)}, a control or invisible character ` +
      "(bidirectional and zero-width controls and blank fillers are refused)";
  }
  return null;
}

/**
 * UTF-8 byte length, counted without encoding: what `TextEncoder` would produce (a lone
 * surrogate counts as the 3 bytes of U+FFFD).
 */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 2; // a pair: 4 bytes for 2 code units
        i++;
        continue;
      }
      n += 2;
    } else n += 2;
  }
  return n;
}

/** A count of seconds as a message says it: "1 second", "30 seconds". */
export function secondsText(n: number): string {
  return n === 1 ? "1 second" : `${n} seconds`;
}

/** The first `max` UTF-16 code units of `s`, one fewer when the cut would split a surrogate pair. */
export function takeCodeUnits(s: string, max: number): string {
  return s.length > max ? s.slice(0, max).replace(/[\ud800-\udbff]$/, "") : s;
}

/** The first `max` code points of `s`. */
export function takeCodePoints(s: string, max: number): string {
  let out = "";
  let n = 0;
  for (const ch of s) {
    if (n++ >= max) break;
    out += ch;
  }
  return out;
}

/** Preview metadata of a body: first 280 code points and lengths in code points. */
export function previewOf(body: string) {
  const bodyLength = codePointLength(body);
  const preview = bodyLength > PREVIEW_CODE_POINTS
    ? takeCodePoints(body, PREVIEW_CODE_POINTS)
    : body;
  return {
    preview,
    is_truncated: bodyLength > PREVIEW_CODE_POINTS,
    body_length: bodyLength,
    preview_length: Math.min(bodyLength, PREVIEW_CODE_POINTS),
  };
}

/** The word segmenter, made on first use (making one takes ICU about 15 ms). */
let words: Intl.Segmenter | undefined;

/**
 * A reading excerpt of `text` of at most `max` code points (plus "…"), cut at a word
 * boundary, whitespace runs collapsed. `cut` says `text` is itself the head of a longer
 * text (a stored preview), so its last word may be partial and is dropped. A single word
 * longer than `max` is cut inside, as nothing shorter could be shown.
 */
export function excerpt(text: string, max: number, cut = false): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (!cut && codePointLength(flat) <= max) return flat;
  words ??= new Intl.Segmenter("und", { granularity: "word" });
  const segments = [...words.segment(flat)];
  if (cut && segments.length > 1) segments.pop();
  let out = "";
  let n = 0;
  for (const s of segments) {
    const len = codePointLength(s.segment);
    if (n + len > max) break;
    out += s.segment;
    n += len;
  }
  out = out.replace(/[\s,;:\-–—(]+$/u, "");
  if (!out) out = takeCodePoints(flat, max);
  return `${out}…`;
}

/** `&`, `<`, `>`, `"` and `'` escaped: text safe in HTML (and XML) content and quoted attributes. */
export function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}
