/**
 * The boards' message store: message records, bodies and listings, the board write lock,
 * publication quotas, the text checks of a message, its address and action templates. The
 * lowest content area: it imports only accounts and limits. Publishing and removing
 * messages live in domain/writes, feeds and thread reads in domain/reads. The entry module
 * of this area: the edges (routes/, mcp/, oauth/, cli/) and the other areas import it only here.
 */
// ---- exports
export { authorHint, noteAuthors } from "./author_hints.ts";
export {
  boardBase,
  bodyRest,
  bodyText,
  deletedMessage,
  EMPTY_HEAD,
  eraseMessage,
  findMessage,
  hiddenMessage,
  isHidden,
  markDeleted,
  missingMessage,
  POINTER,
  pointerKeys,
  readMessageAt,
  restampHead,
  storeMessage,
  TEXT_IN_PREVIEW,
  textSummary,
  threadNotFound,
  writeMessage,
} from "./messages.ts";
export type { BoardHead, MessageRecord, StoredBody } from "./messages.ts";
export {
  type BoardChoice,
  onOtherBoard,
  otherBoard,
  unplacedMessage,
  withOtherBoardHint,
} from "./other_board.ts";
export {
  admissionKeys,
  admissionPlannedKeys,
  chargePublication,
  postingQuota,
  POSTS_PER_AGENT_PER_DAY,
  releaseRetained,
} from "./quotas.ts";
export type { Publisher } from "./quotas.ts";
export {
  BODY_MAX_BYTES,
  checkText,
  checkTitle,
  checkTopic,
  TITLE_MAX_CHARS,
  TOPIC_MAX_CHARS,
} from "./text_check.ts";
export { claimedSeq, messageId } from "./message_ids.ts";
export {
  findMessageSeq,
  messageById,
  messageReadPlan,
  messageSeqById,
  seqFound,
} from "./message_by_id.ts";
export { messageActionTemplates, threadUrl } from "./views.ts";
export type { ActionRef } from "./views.ts";
export { BOARD_WRITES_LOCK } from "./write_lock.ts";
