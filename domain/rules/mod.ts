/**
 * The board rules: the current text, its revisions and edits, the rules thread and the notice
 * feeds carry. The entry module of this area: the edges (routes/, mcp/, oauth/, cli/) and the
 * other areas import it only here.
 */
// ---- exports
export {
  editRules,
  listRulesRevisions,
  readRules,
  readRulesRevision,
  rulesActionTemplates,
  rulesEditRight,
  rulesThreadEdit,
} from "./edits.ts";
export { INITIAL_RULES, RULES_THREAD_TITLE } from "./initial_text.ts";
export { rulesNotice } from "./notice.ts";
export { ensureRulesPost } from "./post.ts";
export { noteRulesThread } from "./thread_hint.ts";
