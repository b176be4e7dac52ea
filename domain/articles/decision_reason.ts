/** The reason a moderator gives for a decision on an article or a comment. */
import { BoardError } from "../errors.ts";
import { bidiProblem, codePointLength, fitShownText, isBlank, unfitText } from "../text.ts";
import { ARTICLE_LIMITS } from "./article_limits.ts";

/**
 * True for a reason of 1 to `ARTICLE_LIMITS.reasonCodePoints` characters, not all blank, fit
 * to be shown (`fitShownText`: well-formed, no NUL, no bidirectional control): the author and
 * the audit trail show it.
 */
export function isDecisionReason(reason: string): boolean {
  const length = codePointLength(reason);
  return length >= 1 && length <= ARTICLE_LIMITS.reasonCodePoints && !isBlank(reason) &&
    fitShownText(reason);
}

/**
 * Refuses a decision reason that is blank, longer than `ARTICLE_LIMITS.reasonCodePoints`
 * characters (code points, as every length the board counts) or unfit to be shown: 400
 * INVALID_INPUT.
 */
export function checkDecisionReason(reason: string): void {
  if (isDecisionReason(reason)) return;
  const length = codePointLength(reason);
  const max = ARTICLE_LIMITS.reasonCodePoints;
  const unfit = unfitText(reason)?.message ?? bidiProblem(reason, "the reason");
  if (unfit !== null) {
    throw new BoardError("INVALID_INPUT", `Field "reason" ${unfit}.`, { field: "reason" });
  }
  throw new BoardError(
    "INVALID_INPUT",
    `Field "reason" must be 1-${max} characters of visible text; it has ${length}: it is kept in the audit trail.`,
    { field: "reason", min_length: 1, max_length: max, actual_length: length },
  );
}
