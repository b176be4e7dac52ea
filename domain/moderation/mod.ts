/**
 * Moderator actions on content and accounts, the audit trail, and the moderator credential. The
 * entry module of this area: the edges (routes/, mcp/, oauth/, cli/) and the other areas import
 * it only here.
 */
// ---- exports
export { resumeAccountPurges } from "./actions.ts";
export { auditRecord, listAudit } from "./audit.ts";
export type { AuditRecord } from "./audit.ts";
export {
  deskCsrfMatches,
  endModeratorSession,
  findModeratorSession,
  MOD_DESK_SESSION_SECONDS,
  randomDeskToken,
  signInModerator,
  signInToken,
  signInTokenMatches,
} from "./desk_sessions.ts";
export type { DeskSession } from "./desk_sessions.ts";
export { advanceClockAudited, followClockShift } from "./clock_advance.ts";
export {
  decideArticle,
  decideComment,
  removeAccountAudited,
  removePostAudited,
} from "./decisions.ts";
export type { AuditedAnswer, AuditedOutcome, ModActionSpec } from "./audit.ts";
export { officialPinAudited, replaceRulesAudited } from "./notices.ts";
export {
  checkModeratorKey,
  checkWrongKeyWindow,
  MODERATOR_KEY_MIN_LENGTH,
  moderatorKeyProblem,
  moderatorKeySecretProblem,
  moderatorUnauthorized,
} from "./moderator_key.ts";
