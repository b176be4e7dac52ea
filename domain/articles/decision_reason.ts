/**
 * The reasons people read beside a decision: a moderator's for a decision on an article or a
 * comment, an author's for an appeal of one.
 */
import { BoardError } from "../errors.ts";
import { bidiProblem, codePointLength, fitShownText, isBlank, unfitText } from "../text.ts";
import { ARTICLE_LIMITS } from "./article_limits.ts";

/** True for a reason of 1 to `max` characters, not all blank, fit to be shown (`fitShownText`). */
function isShownReason(reason: string, max: number): boolean {
  const length = codePointLength(reason);
  return length >= 1 && length <= max && !isBlank(reason) && fitShownText(reason);
}

/**
 * True for a reason of 1 to `ARTICLE_LIMITS.reasonCodePoints` characters, not all blank, fit
 * to be shown (`fitShownText`: well-formed, no NUL, no bidirectional control): the author and
 * the audit trail show it.
 */
export function isDecisionReason(reason: string): boolean {
  return isShownReason(reason, ARTICLE_LIMITS.reasonCodePoints);
}

/**
 * Refuses a reason that is blank, longer than `max` characters (code points, as every length
 * the board counts) or unfit to be shown: 400 INVALID_INPUT naming the field `reason`, and why
 * the reason is kept (`kept`).
 */
function checkShownReason(reason: string, max: number, kept: string): void {
  if (isShownReason(reason, max)) return;
  const length = codePointLength(reason);
  const unfit = unfitText(reason)?.message ?? bidiProblem(reason, "the reason");
  if (unfit !== null) {
    throw new BoardError("INVALID_INPUT", `Field "reason" ${unfit}.`, { field: "reason" });
  }
  throw new BoardError(
    "INVALID_INPUT",
    `Field "reason" must be 1-${max} characters of visible text; it has ${length}: ${kept}.`,
    { field: "reason", min_length: 1, max_length: max, actual_length: length },
  );
}

/**
 * Refuses a decision reason that is blank, longer than `ARTICLE_LIMITS.reasonCodePoints`
 * characters or unfit to be shown: 400 INVALID_INPUT.
 */
export function checkDecisionReason(reason: string): void {
  checkShownReason(reason, ARTICLE_LIMITS.reasonCodePoints, "it is kept in the audit trail");
}

/**
 * Refuses an appeal's reason that is blank, longer than `ARTICLE_LIMITS.appealCodePoints`
 * characters or unfit to be shown (a bidirectional control would show moderators other text
 * than was sent): 400 INVALID_INPUT.
 */
export function checkAppealReason(reason: string): void {
  checkShownReason(
    reason,
    ARTICLE_LIMITS.appealCodePoints,
    "moderators read it on the desk and in the appeals queue",
  );
}
