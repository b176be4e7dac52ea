/** The checks every stored message text passes (posts, replies and the rules thread). */
import { refuseCredentialInContent } from "../accounts/mod.ts";
import type { Config } from "../deps.ts";
import { BoardError } from "../errors.ts";
import {
  codePointLength,
  isBlank,
  SLUG_PATTERN,
  slugSuggestion,
  titleProblem,
  unfitText,
  utf8Length,
} from "../text.ts";

/** A post's, reply's or rules text's body: at most this many UTF-8 bytes. */
export const BODY_MAX_BYTES = 8192;

/**
 * Checks a post text: well-formed Unicode, something visible (only whitespace or invisible
 * characters is an empty text), size in UTF-8 bytes (413), no credential in it (400: a board
 * API key or token, or `config`'s moderator key or BOARD_SECRET).
 */
export function checkText(config: Config, field: string, text: string): void {
  const unfit = unfitText(text);
  if (unfit) {
    throw new BoardError("INVALID_INPUT", `Field "${field}" ${unfit.message}.`, {
      field,
      reason: unfit.reason,
    });
  }
  if (isBlank(text)) {
    throw new BoardError(
      "INVALID_INPUT",
      `Field "${field}" has no visible character (only whitespace or invisible characters).`,
      { field, reason: "blank" },
    );
  }
  const bytes = utf8Length(text);
  if (bytes > BODY_MAX_BYTES) {
    throw new BoardError(
      "PAYLOAD_TOO_LARGE",
      `Field "${field}" is ${bytes} UTF-8 bytes; the limit is ${BODY_MAX_BYTES}.`,
      { scope: "post_text", field, limit_bytes: BODY_MAX_BYTES, actual_bytes: bytes },
    );
  }
  refuseCredentialInContent(config, field, text);
}

/** A root thread's title: 1-160 Unicode characters (code points, so an emoji counts once). */
export const TITLE_MAX_CHARS = 160;
/** A topic slug: at most 40 characters of `SLUG_PATTERN`. */
export const TOPIC_MAX_CHARS = 40;

/**
 * Checks a root thread's title: its length in characters, one line of visible text without
 * bidirectional controls (`titleProblem`), then what every text passes.
 */
export function checkTitle(config: Config, title: string): void {
  const chars = codePointLength(title);
  if (chars < 1 || chars > TITLE_MAX_CHARS) {
    throw new BoardError(
      "INVALID_INPUT",
      `Field "title" must be 1-${TITLE_MAX_CHARS} characters; it has ${chars}.`,
      { field: "title" },
    );
  }
  checkText(config, "title", title);
  const problem = titleProblem(title);
  if (problem) {
    throw new BoardError("INVALID_INPUT", `Field "title" ${problem}.`, { field: "title" });
  }
}

/** Checks a named-board topic: a slug of lowercase letters, digits and hyphens, at most 40. */
export function checkTopic(config: Config, topic: string): void {
  if (topic.length > TOPIC_MAX_CHARS || !SLUG_PATTERN.test(topic)) {
    const meant = slugSuggestion(topic, 1, TOPIC_MAX_CHARS);
    throw new BoardError(
      "INVALID_INPUT",
      `Field "topic" must be 1-${TOPIC_MAX_CHARS} lowercase letters, digits and hyphens, starting with a letter or digit; "${topic}" is not${
        meant ? ` (try "${meant}")` : ""
      }.`,
      { field: "topic", ...(meant ? { suggestion: meant } : {}) },
    );
  }
  // A secret made of lowercase hex digits (`openssl rand -hex 16`) is a slug.
  refuseCredentialInContent(config, "topic", topic);
}
