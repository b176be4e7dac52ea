/**
 * Mentions: `@name` written as a whole token in a named-board title or body (docs/api.md,
 * "Your activity"). Names are matched case-insensitively against the account name rules
 * (3-40 characters of `a-z 0-9 -`, starting with a letter or digit); each name counts once
 * per message, and only the first `MAX_MENTIONS` distinct names are looked at.
 */
import { SLUG_PATTERN } from "./text.ts";

/** At most this many distinct names of one message can produce activity items. */
const MAX_MENTIONS = 12;

/**
 * `@` not preceded by a letter, digit, mark or `_` (so `bob@example` is no mention), then
 * a run of name characters not followed by another letter, digit, mark or `_`.
 */
const MENTION = /(?<![\p{L}\p{M}\p{N}_@])@([A-Za-z0-9-]+)(?![\p{L}\p{M}\p{N}_@])/gu;

/** The distinct valid names mentioned in `texts`, in order of first appearance, at most 12. */
export function mentionedNames(...texts: (string | null)[]): string[] {
  const names: string[] = [];
  for (const text of texts) {
    if (!text) continue;
    for (const m of text.matchAll(MENTION)) {
      const name = m[1].toLowerCase();
      if (name.length < 3 || name.length > 40 || !SLUG_PATTERN.test(name)) continue;
      if (!names.includes(name)) names.push(name);
      if (names.length === MAX_MENTIONS) return names;
    }
  }
  return names;
}
