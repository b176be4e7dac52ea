/**
 * Search tokenisation (docs/search.md). One function turns text into tokens, and the
 * index and the query both use it, so what a query matches is exactly predictable:
 *
 * 1. drop invisible joiners (soft hyphen, ZWNJ, ZWJ, word joiner, BOM);
 * 2. NFKC-normalise, case-fold (lower, upper, then lower case; final sigma as sigma), NFKC again;
 * 3. a token is a maximal run of letters, combining marks, digits and underscores
 *    (Unicode `\p{L}\p{M}\p{N}_`, any script); everything else separates tokens;
 * 4. a token longer than MAX_TERM_BYTES UTF-8 bytes is cut to that length (at a
 *    code point boundary) in the index and in queries alike.
 */
import { BoardError } from "../errors.ts";
import { codePointLength } from "../text.ts";

/** Longest query, in Unicode code points. */
export const MAX_QUERY_CHARS = 100;
/** Most tokens a query may hold (repeats included). */
export const MAX_QUERY_TERMS = 12;
/** Tokens are compared on at most this many UTF-8 bytes. */
export const MAX_TERM_BYTES = 48;
/** At most this many distinct tokens of one message are indexed (title first, then body). */
export const MAX_INDEXED_TERMS = 256;

const IGNORABLE = /[\u00AD\u200C\u200D\u2060\uFEFF]/g;
const TOKEN = /[\p{L}\p{M}\p{N}_]+/gu;
const encoder = new TextEncoder();

/** Normalises text the way both the index and queries see it (NFKC + case folding). */
function normalizeText(text: string): string {
  return text
    .replace(IGNORABLE, "")
    .normalize("NFKC")
    .toLowerCase()
    .toUpperCase()
    .toLowerCase()
    .replaceAll("ς", "σ")
    .normalize("NFKC");
}

/** Cuts a token to MAX_TERM_BYTES UTF-8 bytes without splitting a code point. */
function clampTerm(token: string): string {
  if (token.length * 3 <= MAX_TERM_BYTES) return token;
  if (encoder.encode(token).length <= MAX_TERM_BYTES) return token;
  let out = "";
  let bytes = 0;
  for (const ch of token) {
    const n = encoder.encode(ch).length;
    if (bytes + n > MAX_TERM_BYTES) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/** Every token of `text` in order, repeats included. */
export function tokenize(text: string): string[] {
  return (normalizeText(text).match(TOKEN) ?? []).map(clampTerm);
}

/**
 * The distinct tokens a message is indexed under: title tokens first, then body
 * tokens in order of first appearance, at most MAX_INDEXED_TERMS of them.
 */
export function indexTerms(title: string | null, body: string): string[] {
  const seen = new Set<string>();
  for (const text of [title ?? "", body]) {
    for (const token of tokenize(text)) {
      if (seen.size >= MAX_INDEXED_TERMS) return [...seen];
      seen.add(token);
    }
  }
  return [...seen];
}

/**
 * Validates a search query and returns its distinct tokens. Throws 400 INVALID_QUERY
 * (missing, empty or over 100 characters, or no searchable token) and 400
 * SEARCH_QUERY_TOO_LONG (more than 12 tokens) before anything is read.
 */
export function parseSearchQuery(q: string | undefined): string[] {
  const length = q === undefined ? 0 : codePointLength(q);
  if (q === undefined || length < 1 || length > MAX_QUERY_CHARS) {
    throw new BoardError(
      "INVALID_QUERY",
      `Parameter "q" must be 1-${MAX_QUERY_CHARS} characters; it has ${length}.`,
      { parameter: "q", min_length: 1, max_length: MAX_QUERY_CHARS, actual_length: length },
    );
  }
  const tokens = tokenize(q);
  if (tokens.length > MAX_QUERY_TERMS) {
    throw new BoardError(
      "SEARCH_QUERY_TOO_LONG",
      `The query has ${tokens.length} tokens; at most ${MAX_QUERY_TERMS} are allowed. Nothing was searched.`,
      { max_terms: MAX_QUERY_TERMS, actual_terms: tokens.length, search_performed: false },
    );
  }
  if (tokens.length === 0) {
    throw new BoardError(
      "INVALID_QUERY",
      'Parameter "q" has no searchable token: give at least one word, number or underscore run.',
      {
        parameter: "q",
        reason: "no_searchable_token",
        token_characters: "letters, combining marks, digits and underscore (any script)",
      },
    );
  }
  return [...new Set(tokens)];
}
