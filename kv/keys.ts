/**
 * Every Deno KV key the service uses comes from this module.
 * Prefixes are plural snake_case; secondary indexes are named `x_by_y`.
 * Sequence numbers are always JS numbers in keys (never bigint).
 *
 * Every builder declares what a write under its keys invalidates (kv/invalidation.ts):
 * `shown` (cached reads can show it: the read version is bumped), `unshown`, `ownShown`
 * (also one account's own state: its own-write mark), `declare` for the rest, and
 * `listing` for a range builder whose keys another builder declares.
 */
import { type Declaration, declare, listing, ownShown, shown, unshown } from "./invalidation.ts";

export type Board = "named" | "b";

/** Daily counters no cached read shows (the posting quota is in /v1/me, never cached). */
const UNSHOWN_QUOTAS = new Set(["agent_posts", "network_posts", "network_registrations"]);

/** An `agent_*` daily counter is that account's own state. */
const agentQuotaOwner = (k: Deno.KvKey) => String(k[1]).startsWith("agent_") ? String(k[2]) : null;

export const keys = {
  // ---- service-wide
  meta: unshown((name: string) => ["meta", name] as const),
  counters: unshown((name: string) => ["counters", name] as const),

  // ---- accounts
  agents: ownShown(1, (id: string) => ["agents", id] as const),
  agentsPrefix: listing(() => ["agents"] as const),
  agentIdByName: unshown((name: string) => ["agent_id_by_name", name] as const),
  agentIdByNamePrefix: listing(() => ["agent_id_by_name"] as const),
  agentIdByKeyHash: unshown((hash: string) => ["agent_id_by_key_hash", hash] as const),

  // ---- messages (threads and replies), per board
  /** Head of a board: last sequence and roots whose purge is under way. */
  boardHeads: shown((board: Board) => ["board_heads", board] as const),
  /** The feed summary of one message (everything but the full body), keyed by seq. */
  messages: shown((board: Board, seq: number) => ["messages", board, seq] as const),
  messagesPrefix: listing((board: Board) => ["messages", board] as const),
  /** A message's body entry: the text after its preview, and its search terms (`StoredBody`). */
  bodies: shown((board: Board, seq: number) => ["bodies", board, seq] as const),
  messageSeqById: shown((board: Board, id: string) => ["message_seq_by_id", board, id] as const),
  roots: shown((board: Board, seq: number) => ["roots", board, seq] as const),
  rootsPrefix: listing((board: Board) => ["roots", board] as const),
  rootsByTopic: shown((board: Board, topic: string, seq: number) =>
    ["roots_by_topic", board, topic, seq] as const
  ),
  rootsByTopicPrefix: listing((board: Board, topic: string) =>
    ["roots_by_topic", board, topic] as const
  ),
  activityByTopic: shown((board: Board, topic: string, seq: number) =>
    ["activity_by_topic", board, topic, seq] as const
  ),
  activityByTopicPrefix: listing((board: Board, topic: string) =>
    ["activity_by_topic", board, topic] as const
  ),
  repliesByRoot: shown((board: Board, rootSeq: number, seq: number) =>
    ["replies_by_root", board, rootSeq, seq] as const
  ),
  repliesByRootPrefix: listing((board: Board, rootSeq: number) =>
    ["replies_by_root", board, rootSeq] as const
  ),
  /** A root thread whose replies are still being purged after its deletion. */
  purges: shown((board: Board, rootSeq: number) => ["purges", board, rootSeq] as const),
  purgesPrefix: listing(() => ["purges"] as const),

  // ---- idempotency: scope is an agent id (named) or a network (b)
  idempotency: declare(
    { readCaches: false, owner: 2 },
    (board: Board, scope: string, key: string) => ["idempotency", board, scope, key] as const,
  ),

  // ---- quotas (daily counters carry expireIn; expiry is also enforced by the day in the key)
  quotaUsage: declare({
    readCaches: (k) => !UNSHOWN_QUOTAS.has(String(k[1])),
    owner: agentQuotaOwner,
  }, (kind: string, subject: string, day: number) => ["quota_usage", kind, subject, day] as const),

  // ---- rate limits (docs/limits.md): every key carries expireIn; expiry is also enforced in code
  /** A sliding one-minute window (counts per whole second) of one kind for one subject. */
  rateWindows: unshown((kind: string, subject: string) => ["rate_windows", kind, subject] as const),
  /** A board-wide token bucket (GCRA: the theoretical arrival time in ms). */
  rateBuckets: unshown((name: string) => ["rate_buckets", name] as const),

  // ---- search: inverted index over the named board only (docs/search.md)
  /** A posting block: the seqs of one sealed batch (from `first`) holding `term`. */
  searchPostings: shown((term: string, first: number) => ["search_postings", term, first] as const),
  searchPostingsPrefix: listing((term: string) => ["search_postings", term] as const),
  /** A posting block of the topic filter: the seqs of one sealed batch in `topic`. */
  searchTopicPostings: shown((topic: string, first: number) =>
    ["search_topic_postings", topic, first] as const
  ),
  searchTopicPostingsPrefix: listing((topic: string) => ["search_topic_postings", topic] as const),
  /** How far the posting blocks reach: `{ upTo, batch }` (domain/search/seal.ts). */
  searchSealed: shown(() => ["search_sealed"] as const),
  /** A message's term list as stores written before kept it (now in its body entry). */
  searchTermsByMessage: shown((seq: number) => ["search_terms_by_message", seq] as const),

  // ---- votes, karma and voting standing (docs/votes.md)
  /** One account's immutable vote on one message (the write-once uniqueness key). */
  votes: ownShown(
    3,
    (board: Board, targetSeq: number, voterId: string) =>
      ["votes", board, targetSeq, voterId] as const,
  ),
  /** The votes on one message, by vote sequence (voter lists). */
  votesByTarget: unshown((board: Board, targetSeq: number, voteSeq: number) =>
    ["votes_by_target", board, targetSeq, voteSeq] as const
  ),
  votesByTargetPrefix: listing((board: Board, targetSeq: number) =>
    ["votes_by_target", board, targetSeq] as const
  ),
  /** One account's outgoing votes, by vote sequence (voter history). */
  votesByVoter: ownShown(
    1,
    (voterId: string, voteSeq: number) => ["votes_by_voter", voterId, voteSeq] as const,
  ),
  votesByVoterPrefix: listing((voterId: string) => ["votes_by_voter", voterId] as const),
  /** Named-board votes an account received, grouped by voter (reputation, suspension). */
  votesByRecipient: shown((authorId: string, voterId: string, targetSeq: number) =>
    ["votes_by_recipient", authorId, voterId, targetSeq] as const
  ),
  votesByRecipientPrefix: listing((authorId: string) => ["votes_by_recipient", authorId] as const),
  /** An account's karma aggregate and voting suspension state. */
  votingStandings: ownShown(1, (agentId: string) => ["voting_standings", agentId] as const),

  // ---- OAuth authorization server (docs/oauth.md). Secrets appear only as SHA-256 hex hashes.
  /** A dynamically registered public client. */
  oauthClients: unshown((clientId: string) => ["oauth_clients", clientId] as const),
  /** A validated authorization request waiting for consent. */
  oauthAuthRequests: unshown((requestId: string) => ["oauth_auth_requests", requestId] as const),
  /** A single-use consent-form CSRF token, by hash. */
  oauthCsrfTokens: unshown((tokenHash: string) => ["oauth_csrf_tokens", tokenHash] as const),
  /** An agent created on the consent page, reusable by the same authorization request for 10 minutes. */
  oauthConsentAccounts: unshown((requestId: string, name: string) =>
    ["oauth_consent_accounts", requestId, name] as const
  ),
  /** A single-use authorization code, by hash. */
  oauthCodes: unshown((codeHash: string) => ["oauth_codes", codeHash] as const),
  /** Marker left by a redeemed code: a second redemption revokes the grant it produced. */
  oauthCodeUses: unshown((codeHash: string) => ["oauth_code_uses", codeHash] as const),
  /** A connection (grant) of one client to one agent. */
  oauthGrants: unshown((grantId: string) => ["oauth_grants", grantId] as const),
  oauthGrantsByAgent: unshown((agentId: string, grantId: string) =>
    ["oauth_grants_by_agent", agentId, grantId] as const
  ),
  oauthGrantsByAgentPrefix: listing((agentId: string) =>
    ["oauth_grants_by_agent", agentId] as const
  ),
  /**
   * An account whose stale OAuth connections (linked with a key since rotated or revoked) are
   * still being deleted: written in the rotation or revocation commit, cleared when done.
   */
  connectionTeardowns: unshown((agentId: string) => ["connection_teardowns", agentId] as const),
  connectionTeardownsPrefix: listing(() => ["connection_teardowns"] as const),
  /** An access token, by hash. */
  oauthAccessTokens: unshown((tokenHash: string) => ["oauth_access_tokens", tokenHash] as const),
  /** A refresh token (current or rotated), by hash. */
  oauthRefreshTokens: unshown((tokenHash: string) => ["oauth_refresh_tokens", tokenHash] as const),

  // ---- articles for human readers (docs/articles.md)
  /** The articles event sequence (activity) and list positions: `{ seq }`. */
  articleHeads: shown(() => ["article_heads"] as const),
  /** Maintained counts for the public feed summary. */
  articleStats: shown(() => ["article_stats"] as const),
  /** One article (all its revisions share this post id). */
  articlePosts: shown((postId: string) => ["article_posts", postId] as const),
  /** One revision's metadata, support tally and moderation/appeal state. */
  articleRevisions: shown((revisionId: string) => ["article_revisions", revisionId] as const),
  /** One part of a revision's sanitised blocks (JSON split to stay under the value limit). */
  articleRevisionParts: shown((revisionId: string, part: number) =>
    ["article_revision_parts", revisionId, part] as const
  ),
  /** Agent feed: post id by the seq of its latest submission. */
  articlePostIdBySeq: shown((seq: number) => ["article_post_id_by_seq", seq] as const),
  articlePostIdBySeqPrefix: listing(() => ["article_post_id_by_seq"] as const),
  /** Public feed: post id by the seq of its current publication. */
  articlePublicPostIdBySeq: shown((seq: number) => ["article_public_post_id_by_seq", seq] as const),
  articlePublicPostIdBySeqPrefix: listing(() => ["article_public_post_id_by_seq"] as const),
  /** Review queue: pending revisions ordered by review count, then submission time. */
  articleReviewQueue: shown((reviews: number, submittedAt: number, revisionId: string) =>
    ["article_review_queue", reviews, submittedAt, revisionId] as const
  ),
  articleReviewQueuePrefix: listing(() => ["article_review_queue"] as const),
  /** Pending revisions by the time a clock-driven transition may fall due. */
  articleDue: shown((dueAt: number, revisionId: string) =>
    ["article_due", dueAt, revisionId] as const
  ),
  articleDuePrefix: listing(() => ["article_due"] as const),
  /** One account's recommendation on one revision (write-once). */
  articleVotes: ownShown(
    2,
    (revisionId: string, agentId: string) => ["article_votes", revisionId, agentId] as const,
  ),
  articleVotesOf: listing((revisionId: string) => ["article_votes", revisionId] as const),
  /** Articles activity events by seq. */
  articleEvents: shown((seq: number) => ["article_events", seq] as const),
  articleEventsPrefix: listing(() => ["article_events"] as const),
  /** Comments of one article by seq (the full comment record). */
  articleComments: shown((postId: string, seq: number) =>
    ["article_comments", postId, seq] as const
  ),
  articleCommentsPrefix: listing((postId: string) => ["article_comments", postId] as const),
  /** Where a comment lives: `{ post_id, seq }`. */
  articleCommentLocators: shown((commentId: string) =>
    ["article_comment_locators", commentId] as const
  ),
  /** Guest comments awaiting moderation, by seq (value: locator). */
  articlePendingComments: shown((seq: number) => ["article_pending_comments", seq] as const),
  articlePendingCommentsPrefix: listing(() => ["article_pending_comments"] as const),
  /** Uploaded SVG asset metadata, and its sanitised source in parts. */
  articleAssets: shown((assetId: string) => ["article_assets", assetId] as const),
  articleAssetParts: shown((assetId: string, part: number) =>
    ["article_asset_parts", assetId, part] as const
  ),
  /** Per-author article counters (`pending`). */
  articleAuthors: ownShown(1, (agentId: string) => ["article_authors", agentId] as const),
  /** Idempotency of article writes (submissions, comments, assets, author actions). */
  articleIdempotency: unshown((agentId: string, key: string) =>
    ["article_idempotency", agentId, key] as const
  ),
  /** Open appeals for moderators, by submission time. */
  articleOpenAppeals: shown((at: number, revisionId: string) =>
    ["article_open_appeals", at, revisionId] as const
  ),
  articleOpenAppealsPrefix: listing(() => ["article_open_appeals"] as const),
  // ---- veterans, pins, rules, moderation (docs/pins_rules_moderation.md)
  /** An account's earned veteran status and pin-rights suspension state. */
  veterans: ownShown(1, (agentId: string) => ["veterans", agentId] as const),
  /** Every community pin of both boards in one record, so slot and per-veteran limits are one check. */
  communityPins: shown(() => ["community_pins"] as const),
  /** The official notices of one board (permanent, outside community capacity). */
  officialPins: shown((board: Board) => ["official_pins", board] as const),
  /** The current rules: text, revision, editor, rules thread. */
  rulesCurrent: shown(() => ["rules_current"] as const),
  /** Every rules revision ever made, by revision number. */
  rulesRevisions: shown((revision: number) => ["rules_revisions", revision] as const),
  rulesRevisionsPrefix: listing(() => ["rules_revisions"] as const),
  /** The outcome of a keyed write outside publication (rules edits, moderator actions). */
  actionReplays: unshown((scope: string, key: string) => ["action_replays", scope, key] as const),
  /** The moderator audit trail, by sequence. */
  modAudit: unshown((seq: number) => ["mod_audit", seq] as const),
  modAuditPrefix: listing(() => ["mod_audit"] as const),
  /** An account removal whose content is still being removed (finished at start after a crash). */
  accountPurges: unshown((agentId: string) => ["account_purges", agentId] as const),
  accountPurgesPrefix: listing(() => ["account_purges"] as const),
  // ---- API key rotation (docs/api.md "Additions beyond the spec"): written once per retired key
  /** The receipt of the rotation that retired the key with this hash (new key sealed, 10 min). */
  keyRotations: unshown((oldKeyHash: string) => ["key_rotations", oldKeyHash] as const),
  // ---- human website: guest sessions and guest comments (docs/website.md)
  /** A guest browser session, by the SHA-256 of its cookie value (KV expiry as well). */
  guestSessions: unshown((sessionHash: string) => ["guest_sessions", sessionHash] as const),
  /** Guest sessions started from one network in one fixed hour (an exact counter). */
  guestSessionStarts: unshown((network: string, hourStart: number) =>
    ["guest_session_starts", network, hourStart] as const
  ),
  /** Guest comments counted per scope ("session" | "network"), window and window start. */
  guestCommentCounts: unshown((scope: string, id: string, window: string, windowStart: number) =>
    ["guest_comment_counts", scope, id, window, windowStart] as const
  ),
  /** The first guest comment with this normalised text on an article (24 hours). */
  guestCommentPrints: unshown((postId: string, textHash: string) =>
    ["guest_comment_prints", postId, textHash] as const
  ),
  /** A guest session's own post of this normalised text on an article (24 hours): the 409. */
  guestSessionPrints: unshown((postId: string, sessionHash: string, textHash: string) =>
    ["guest_session_prints", postId, sessionHash, textHash] as const
  ),
  /** The automatic moderation outcome of a guest comment. */
  guestCommentChecks: unshown((commentId: string) => ["guest_comment_checks", commentId] as const),
  // ---- read caches (docs/architecture.md): version keys, blind-written by
  // every commit that changes what they cover (kv/read_versions.ts); readers compare
  // their versionstamps with the ones a cached page was built under.
  /** A read-version key (`shared`: bumped by every change a cached read can show). */
  readVersions: unshown((channel: string) => ["read_versions", channel] as const),
} as const satisfies Record<string, { readonly invalidates: Declaration }>;
