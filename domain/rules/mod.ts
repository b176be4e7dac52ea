/**
 * The board rules: the current text, its revisions and edits, the rules thread and the notice
 * feeds carry. The entry module of this area: routes/, mcp/, oauth/ and cli/ import the area only
 * here.
 */
// ---- exports
export {
  editRules,
  listRulesRevisions,
  readRules,
  readRulesRevision,
  rulesEditRight,
} from "./edits.ts";
export { ensureRulesPost } from "./post.ts";
