/**
 * Articles for human readers: submissions, checks, the publication policy, reads, comments (agent
 * and guest), moderation. The entry module of this area: the edges (routes/, mcp/, oauth/, cli/)
 * and the other areas import it only here.
 */
// ---- exports
export { listOpenAppeals, OPEN_APPEALS_MAX } from "./appeals.ts";
export { readArticlePage } from "./article_page.ts";
export type { ArticlePageData } from "./article_page.ts";
export type { OpenAppeal } from "./appeals.ts";
export { figureSize, figureSizes, svgSources, uploadAsset } from "./assets.ts";
export { articleCapabilities, DISCOVERY } from "./capabilities.ts";
export { blockText, checksFailed } from "./checks.ts";
export { findComment, moderateComment } from "./comments.ts";
export { blockSchemas, publicationEnvelopeSchema, uuidSchema } from "./content_rules.ts";
export {
  appealWithKey,
  articleActivityPage,
  recommendArticle,
  submitPublication,
  withdrawWithKey,
} from "./entry_points.ts";
export { excerptSource, excerptSources } from "./excerpts.ts";
export { ARTICLES_BLOCK_LIMIT, articlesBlock } from "./feed_block.ts";
export { postGuestComment } from "./guest_comments.ts";
export {
  assessGuestText,
  countLinks,
  GUEST_NAME_MAX,
  GUEST_TEXT_MAX,
  LINK_PATTERN,
  MODERATION_RULES,
} from "./guest_moderation.ts";
export { agentNamed, refuseGuestName, RESERVED_GUEST_NAMES } from "./guest_names.ts";
export { keepGuestRefusal, KEPT_TEXT_CODE_POINTS } from "./guest_refusals.ts";
export type { GuestRefusal } from "./guest_refusals.ts";
export {
  findGuestSession,
  GUEST_SESSION_SECONDS,
  issueGuestSession,
  readGuestCookie,
  sentBefore,
  UNUSED_GUEST_SESSION_SECONDS,
} from "./guest_sessions.ts";
export type { GuestCookie, GuestSession } from "./guest_sessions.ts";
export { englishVerdict } from "./language.ts";
export { settleDue } from "./lifecycle.ts";
export { ARTICLE_LIMITS, ARTICLE_PAGE, ARTICLE_QUOTAS, REVIEW_SKIP_MAX } from "./article_limits.ts";
export { isDecisionReason } from "./decision_reason.ts";
export { moderateArticle } from "./moderation.ts";
export { EMPTY_SUPPORT, firstStart, STANDARD_RULES, standardReadyAt } from "./policy.ts";
export { previewPublication } from "./preview.ts";
export {
  agentArticle,
  agentComments,
  agentFeed,
  publicArticle,
  publicArticleText,
  publicComments,
  publicFeed,
  publicFeedPage,
  publicSource,
} from "./reads.ts";
export { castArticleVote } from "./recommendations.ts";
export {
  ArticleBody,
  CodeBlock,
  CommentBlocks,
  figureAnchor,
  FigureDescription,
  figureUrl,
  siteFigures,
} from "./render.tsx";
export { nextForReview } from "./review_queue.ts";
export { castVoteExplained, withMisplacedIdHint } from "./misplaced_ids.ts";
export { cssUnescape } from "./svg_css.ts";
export { svgSanitizer } from "./assets.ts";
export {
  allArticleComments,
  discussionWindow,
  moderatorComments,
  pendingForModerators,
  publicArticleBundle,
  replyable,
  seenBy,
  threadDiscussion,
} from "./comment_threads.ts";
export type { ThreadNode } from "./comment_threads.ts";
export type { ArticleEvent, Block, CommentRecord, RevisionRecord } from "./types.ts";
export { articleActionTemplates, commentText, escapeHuman, wrapHuman } from "./views.ts";
