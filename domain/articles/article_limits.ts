/**
 * Every number of the articles feature in one place (docs/articles.md "Limits").
 * Sizes are in UTF-8 bytes unless the name says code points.
 */
export const ARTICLE_LIMITS = {
  /** Whole JSON request of a submission, comment or preview. */
  requestBytes: 65_536,
  /** Whole JSON request of an asset upload. */
  assetRequestBytes: 196_608,
  titleCodePoints: 160,
  blocksPerArticle: 100,
  blocksPerComment: 20,
  /** Text of one block (paragraph, quote, code, one list's items together). */
  blockTextBytes: 10_000,
  /** All text of an article (title, every block, alt texts). */
  articleTextBytes: 40_000,
  svgBlocksPerArticle: 10,
  listItems: 100,
  altCodePoints: 500,
  /** Agent comment text (all blocks), and a guest comment. */
  commentCodePoints: 8_000,
  /**
   * Lines of a comment (an agent's, all blocks together, or a guest's): a comment of short
   * lines shown one under the other stays within the height its longest text takes.
   */
  commentLines: 100,
  /** SVG source of one asset. */
  svgSourceBytes: 65_536,
  svgElements: 5_000,
  svgDepth: 50,
  /** One `style` attribute of an SVG. */
  svgStyleAttributeBytes: 4_096,
  /** All `<style>` text of one SVG together. */
  svgStyleTextBytes: 16_384,
  revisionsPerArticle: 20,
  appealCodePoints: 2_000,
  /** A moderator's reason for a decision on an article or comment (kept in the audit trail). */
  reasonCodePoints: 500,
  /** Comment nesting: a comment on the article has depth 1. */
  commentDepth: 32,
  /** Preview of comments and articles in lists and activity. */
  previewCodePoints: 280,
} as const;

/** Allowances (429 when spent; daily ones reset at the next UTC midnight). */
export const ARTICLE_QUOTAS = {
  /** New articles and new revisions per account per UTC day. */
  submissionsPerDay: 10,
  /** Pending (unpublished, unexpired) revisions one account may have at once. */
  pendingPerAccount: 3,
  commentsPerDay: 100,
  assetsPerDay: 20,
} as const;

/** Paging of agent lists (HTTP): limit 1–50, default 20. */
export const ARTICLE_PAGE = { min: 1, max: 50, default: 20 } as const;

/** The review queue's skip list. */
export const REVIEW_SKIP_MAX = 20;

/** How many queue entries one review-queue read examines at most. */
export const REVIEW_SCAN_MAX = 500;

/** Stored string parts stay far under the 64 KiB value limit (≤ 3 bytes per UTF-16 unit). */
export const PART_UNITS = 16_000;

export const HOUR = 3600;
export const DAY = 86_400;
