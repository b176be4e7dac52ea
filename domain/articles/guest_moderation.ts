/**
 * The website's rules for guest comments (docs/website.md "Guest comments"): what a
 * form may hold (refused before anything is stored) and the automatic text moderation a
 * stored comment then goes through — `publish`, `hold` for a human moderator, or
 * `reject`. Pure functions: no KV, no clock.
 */
import { holdsCredential, type OperatorSecrets } from "../accounts/mod.ts";
import { ARTICLE_LIMITS } from "./article_limits.ts";
import { BoardError } from "../errors.ts";
import { bidiProblem, codePointLength, collapseBlankLines, isBlank, lineCount } from "../text.ts";

/** A guest comment: 1 to 8,000 code points (spec, "Comment nesting; guest comment"). */
export const GUEST_TEXT_MAX = ARTICLE_LIMITS.commentCodePoints;
/** A guest display name: up to 40 UTF-16 units (the articles domain stores at most 40). */
export const GUEST_NAME_MAX = 40;

/** Thresholds of the automatic moderation. */
export const MODERATION_RULES = {
  /** 1 to this many links: held for a moderator; more: rejected. */
  maxHeldLinks: 3,
  /** A run of this many identical non-space characters is rejected. */
  characterRun: 40,
  /** Whole-text repetition: a chunk repeated at least this many times ... */
  chunkRepeats: 4,
  /** ... in a text of at least this many code points (after normalising). */
  chunkMinLength: 40,
  /** One word above half of the words, counted from this many words on. */
  wordMinCount: 16,
  /** A line of at least this many code points ... */
  lineMinLength: 10,
  /** ... appearing this many times. */
  lineRepeats: 3,
} as const;

type ModerationRule =
  | "links"
  | "repeated_characters"
  | "repeated_text"
  | "repeated_word"
  | "repeated_line"
  | "duplicate";

export interface ModerationFinding {
  rule: ModerationRule;
  /** What the finding does: keep the comment for a moderator, or reject it. */
  effect: "hold" | "reject";
  /** A sentence for the guest who wrote it. */
  message: string;
}

export interface Assessment {
  outcome: "publish" | "hold" | "reject";
  findings: ModerationFinding[];
}

// C0 controls other than tab and newline, DEL, and C1 controls (matching them is the point).
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/u;

/**
 * Checks and normalises a comment form. Line ends become "\n", each run of lines that show
 * nothing one empty line, surrounding white space is trimmed, a name that shows nothing
 * becomes null. Throws 400 INVALID_INPUT (a message for the guest, `details.field`) for a
 * text that shows nothing, is too long or has too many lines, control characters, bidi
 * embedding, override or isolate controls (`bidiProblem`: words could display as others, a
 * domain pass the links rule), or a bad name (too long, not one line, bidi controls),
 * and 400 CREDENTIAL_IN_CONTENT when the text or name holds a credential (`holdsCredential`:
 * a board API key or token, or the operator's moderator key or BOARD_SECRET named by
 * `secrets`), as every public text does.
 */
export function checkGuestForm(
  secrets: OperatorSecrets,
  input: { text: string; name: string },
): { text: string; name: string | null } {
  const text = collapseBlankLines(input.text.replace(/\r\n?/g, "\n")).trim();
  if (isBlank(text)) {
    throw new BoardError("INVALID_INPUT", "Write your comment before posting it.", {
      field: "text",
    });
  }
  const length = codePointLength(text);
  if (length > GUEST_TEXT_MAX) {
    throw new BoardError(
      "INVALID_INPUT",
      `Your comment is ${length.toLocaleString("en-US")} characters long; the limit is ${
        GUEST_TEXT_MAX.toLocaleString("en-US")
      }. Shorten it and post it again.`,
      { field: "text", max_code_points: GUEST_TEXT_MAX, actual: length },
    );
  }
  const lines = lineCount(text);
  if (lines > ARTICLE_LIMITS.commentLines) {
    throw new BoardError(
      "INVALID_INPUT",
      `Your comment has ${
        lines.toLocaleString("en-US")
      } lines; the limit is ${ARTICLE_LIMITS.commentLines}. Join short lines and post it again.`,
      { field: "text", max_lines: ARTICLE_LIMITS.commentLines, actual_lines: lines },
    );
  }
  if (CONTROL.test(text)) {
    throw new BoardError(
      "INVALID_INPUT",
      "Your comment contains invisible control characters; remove them and post it again.",
      { field: "text" },
    );
  }
  if (bidiProblem(text) !== null) {
    throw new BoardError(
      "INVALID_INPUT",
      "Your comment contains invisible characters that change the direction of text (words could be made to look like others); remove them and post it again.",
      { field: "text" },
    );
  }
  const name = input.name.trim();
  const credentialIn = holdsCredential(secrets, text)
    ? "text"
    : holdsCredential(secrets, name)
    ? "name"
    : null;
  if (credentialIn) {
    throw new BoardError(
      "CREDENTIAL_IN_CONTENT",
      "Your comment contains what looks like a Posting Board API key or token, or the board's moderator key or secret. Comments are public: remove it before posting.",
      { field: credentialIn },
    );
  }
  if (name.length > GUEST_NAME_MAX) {
    throw new BoardError(
      "INVALID_INPUT",
      `Your name is too long: at most ${GUEST_NAME_MAX} characters (an emoji counts as two).`,
      { field: "name", max_length: GUEST_NAME_MAX },
    );
  }
  if (CONTROL.test(name) || name.includes("\n") || name.includes("\t")) {
    throw new BoardError("INVALID_INPUT", "Your name must be one line of visible characters.", {
      field: "name",
    });
  }
  if (bidiProblem(name) !== null) {
    throw new BoardError(
      "INVALID_INPUT",
      "Your name contains invisible characters that change the direction of text (a name could be made to look like another); remove them and post it again.",
      { field: "name" },
    );
  }
  return { text, name: isBlank(name) ? null : name };
}

const TLDS =
  "com|net|org|info|biz|io|co|me|ly|gl|app|dev|xyz|top|site|online|shop|club|ru|cn|de|uk|fr|nl|tk|gq|ml|cf|ga";

/**
 * A link is what this pattern matches: any `scheme://`, a `www.` name, `mailto:`, or a bare
 * domain name (dot-separated labels ending in a common top-level domain). `countLinks`
 * counts its matches without running it: the regex scans from every word boundary to the
 * end of the word, quadratic in the length of a text such as "a.a.a.…".
 */
export const LINK_PATTERN = new RegExp(
  [
    String.raw`\b[a-z][a-z0-9+.-]*://\S+`, // any scheme://
    String.raw`\bwww\.\S+`,
    String.raw`\bmailto:\S+`,
    String.raw`\b(?:[\p{L}\p{N}-]+\.)+(?:${TLDS})\b(?:/\S*)?`, // bare domain names
  ].join("|"),
  "giu",
);

// Character classes of LINK_PATTERN, tested one code point at a time (same flags).
const WORD = /\w/iu; // what `\b` separates (with `iu` also ſ and the Kelvin sign)
const SCHEME_START = /[a-z]/iu;
const SCHEME = /[a-z0-9+.-]/iu;
const LABEL = /[\p{L}\p{N}-]/iu;
const SPACE = /\s/u;
// Fixed-length tails, tested at one position (sticky).
const SCHEME_END = /:\/\/\S/uy;
const WWW = /www\.\S/iuy;
const MAILTO = /mailto:\S/iuy;
const TLD = new RegExp(String.raw`(?:${TLDS})\b`, "iuy");

const IS_WORD = 1, IS_SCHEME_START = 2, IS_SCHEME = 4, IS_LABEL = 8, IS_SPACE = 16;

function classOf(ch: string): number {
  return (WORD.test(ch) ? IS_WORD : 0) | (SCHEME_START.test(ch) ? IS_SCHEME_START : 0) |
    (SCHEME.test(ch) ? IS_SCHEME : 0) | (LABEL.test(ch) ? IS_LABEL : 0) |
    (SPACE.test(ch) ? IS_SPACE : 0);
}

/** Whether a sticky pattern matches `text` at UTF-16 offset `at`; the match length, or -1. */
function stickyAt(re: RegExp, text: string, at: number): number {
  re.lastIndex = at;
  const m = re.exec(text);
  return m ? m[0].length : -1;
}

/**
 * How many links (URLs with a scheme, `www.` names, `mailto:`, bare common domains) a text
 * holds: the number of matches of LINK_PATTERN, found in linear time. Each position is
 * tried as the regex would, in order, with what it needs precomputed from the right: where
 * a run of scheme characters ends, where the word ends, and the rightmost top-level domain
 * that a chain of `label.` from here reaches (the regex's greedy labels take that one).
 */
export function countLinks(text: string): number {
  const cps = Array.from(text);
  const n = cps.length;
  const offset = new Uint32Array(n + 1);
  const cls = new Uint8Array(n + 1); // cls[n] = 0: the end is neither word nor label
  const memo = new Map<string, number>();
  for (let i = 0, at = 0; i < n; i++) {
    offset[i] = at;
    at += cps[i].length;
    let c = memo.get(cps[i]);
    if (c === undefined) memo.set(cps[i], c = classOf(cps[i]));
    cls[i] = c;
  }
  offset[n] = text.length;
  // From i on: the first position that is no scheme character, the first white space,
  // and the start of the rightmost top-level domain a chain of labels reaches (-1: none).
  const schemeEnd = new Int32Array(n + 1).fill(n);
  const wordEnd = new Int32Array(n + 1).fill(n);
  const tldAt = new Int32Array(n + 1).fill(-1);
  for (let i = n - 1; i >= 0; i--) {
    schemeEnd[i] = cls[i] & IS_SCHEME ? schemeEnd[i + 1] : i;
    wordEnd[i] = cls[i] & IS_SPACE ? i : wordEnd[i + 1];
    if (!(cls[i] & IS_LABEL)) continue;
    if (cls[i + 1] & IS_LABEL) tldAt[i] = tldAt[i + 1];
    else if (cps[i + 1] === ".") {
      const next = i + 2;
      tldAt[i] = cls[next] & IS_LABEL && tldAt[next] >= 0
        ? tldAt[next]
        : stickyAt(TLD, text, offset[next]) > 0
        ? next
        : -1;
    }
  }
  /** Where the match starting at p ends, or -1. */
  const matchAt = (p: number): number => {
    if ((((p > 0 ? cls[p - 1] : 0) ^ cls[p]) & IS_WORD) === 0) return -1; // no `\b`
    if (
      (cls[p] & IS_SCHEME_START && stickyAt(SCHEME_END, text, offset[schemeEnd[p]]) > 0) ||
      stickyAt(WWW, text, offset[p]) > 0 || stickyAt(MAILTO, text, offset[p]) > 0
    ) return wordEnd[p];
    if (!(cls[p] & IS_LABEL) || tldAt[p] < 0) return -1;
    // A top-level domain's letters are one UTF-16 unit each.
    const end = tldAt[p] + stickyAt(TLD, text, offset[tldAt[p]]);
    return cps[end] === "/" ? wordEnd[end] : end;
  };
  let count = 0;
  for (let p = 0; p < n;) {
    const end = matchAt(p);
    if (end < 0) p++;
    else {
      count++;
      p = end;
    }
  }
  return count;
}

/** Lower case, one space for every run of white space, trimmed: the form repetition is judged on. */
export function normaliseForRepetition(text: string): string {
  return text.normalize("NFKC").toLowerCase().replace(/\s+/gu, " ").trim();
}

/** Longest run of one non-space code point. */
function longestRun(text: string): number {
  let best = 0;
  let run = 0;
  let prev = "";
  for (const ch of text) {
    run = ch === prev && !/\s/u.test(ch) ? run + 1 : 1;
    prev = ch;
    if (run > best) best = run;
  }
  return best;
}

/** The shortest period of a sequence (KMP failure function): n when nothing repeats. */
function shortestPeriod(cps: string[]): number {
  const n = cps.length;
  const fail = new Array<number>(n).fill(0);
  for (let i = 1, k = 0; i < n; i++) {
    while (k > 0 && cps[i] !== cps[k]) k = fail[k - 1];
    if (cps[i] === cps[k]) k++;
    fail[i] = k;
  }
  return n === 0 ? 0 : n - fail[n - 1];
}

/**
 * The automatic moderation of a stored guest comment. Rejected: more than 3 links, a run
 * of 40 identical characters, a text that is one chunk repeated 4+ times, one word above
 * half of 16+ words, a line of 10+ characters appearing 3+ times, or (`duplicate`) the
 * same normalised text already posted on the article by another session within 24 hours.
 * Held for a moderator: 1 to 3 links. Anything else is published.
 */
export function assessGuestText(text: string, opts: { duplicate?: boolean } = {}): Assessment {
  const r = MODERATION_RULES;
  const findings: ModerationFinding[] = [];
  const links = countLinks(text);
  if (links > r.maxHeldLinks) {
    findings.push({
      rule: "links",
      effect: "reject",
      message: `It contains ${links} links; a guest comment may hold at most ${r.maxHeldLinks}.`,
    });
  } else if (links > 0) {
    findings.push({
      rule: "links",
      effect: "hold",
      message: `It contains ${
        links === 1 ? "a link" : `${links} links`
      }, so a moderator reviews it before it appears.`,
    });
  }
  if (longestRun(text) >= r.characterRun) {
    findings.push({
      rule: "repeated_characters",
      effect: "reject",
      message: `It repeats one character ${r.characterRun} or more times in a row.`,
    });
  }
  const flat = normaliseForRepetition(text);
  const cps = Array.from(flat);
  if (cps.length >= r.chunkMinLength && shortestPeriod(cps) * r.chunkRepeats <= cps.length) {
    findings.push({
      rule: "repeated_text",
      effect: "reject",
      message: "It is one short piece of text repeated over and over.",
    });
  }
  const words = flat.match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length >= r.wordMinCount) {
    const counts = new Map<string, number>();
    for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
    if (Math.max(...counts.values()) * 2 > words.length) {
      findings.push({
        rule: "repeated_word",
        effect: "reject",
        message: "One word makes up more than half of it.",
      });
    }
  }
  const lines = new Map<string, number>();
  for (const line of text.split("\n")) {
    const l = normaliseForRepetition(line);
    if (codePointLength(l) >= r.lineMinLength) lines.set(l, (lines.get(l) ?? 0) + 1);
  }
  if ([...lines.values()].some((n) => n >= r.lineRepeats)) {
    findings.push({
      rule: "repeated_line",
      effect: "reject",
      message: `The same line appears ${r.lineRepeats} or more times.`,
    });
  }
  if (opts.duplicate) {
    findings.push({
      rule: "duplicate",
      effect: "reject",
      message: "The same text was already posted on this article in the last 24 hours.",
    });
  }
  const outcome = findings.some((f) => f.effect === "reject")
    ? "reject"
    : findings.length
    ? "hold"
    : "publish";
  return { outcome, findings };
}
