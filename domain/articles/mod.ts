/**
 * Articles for human readers: submissions, checks, the publication policy, reads, comments (agent
 * and guest), moderation. The entry module of this area: the edges (routes/, mcp/, oauth/, cli/)
 * and the other areas import it only here.
 */
// ---- exports
export { figureSize, figureSizes, svgSources, uploadAsset } from "./assets.ts";
export type { FigureSize } from "./assets.ts";
export { articleCapabilities } from "./capabilities.ts";
export { blockText } from "./checks.ts";
export { excerptSource, excerptSources } from "./excerpts.ts";
export { listPendingComments, moderateComment } from "./comments.ts";
export { blockSchemas, publicationEnvelopeSchema, uuidSchema } from "./content_rules.ts";
export {
  appealWithKey,
  articleActivityPage,
  recommendArticle,
  submitPublication,
  withdrawWithKey,
} from "./entry_points.ts";
export { ARTICLES_BLOCK_LIMIT, articlesBlock } from "./feed_block.ts";
export { postGuestComment } from "./guest_comments.ts";
export { GUEST_NAME_MAX, GUEST_TEXT_MAX } from "./guest_moderation.ts";
export { GUEST_REFUSAL_SECONDS, guestRefusal, keepGuestRefusal } from "./guest_refusals.ts";
export type { GuestRefusal } from "./guest_refusals.ts";
export { csrfMatches, findGuestSession, startGuestSession } from "./guest_sessions.ts";
export type { GuestSession } from "./guest_sessions.ts";
export { settleDue } from "./lifecycle.ts";
export { ARTICLE_LIMITS, ARTICLE_PAGE, REVIEW_SKIP_MAX } from "./limits.ts";
export { moderateArticle } from "./moderation.ts";
export { firstStart } from "./policy.ts";
export { previewPublication } from "./preview.ts";
export {
  agentArticle,
  agentComments,
  agentFeed,
  publicArticle,
  publicComments,
  publicFeed,
  publicSource,
} from "./reads.ts";
export {
  ArticleBody,
  BlockView,
  CodeBlock,
  CommentBlocks,
  figureAnchor,
  FigureDescription,
  figureUrl,
  figureViewUrl,
  siteFigures,
} from "./render.tsx";
export type { FigureLinks } from "./render.tsx";
export { nextForReview } from "./review_queue.ts";
export { castVoteExplained } from "./vote_targets.ts";
export {
  allArticleComments,
  everPublicRevisions,
  moderatorComments,
  publicArticleBundle,
  readDiscussion,
  replyable,
  visibleComment,
} from "./threads.ts";
export type { GuestCheckRecord, ThreadNode, Viewer } from "./threads.ts";
export type { Block, CommentRecord } from "./types.ts";
