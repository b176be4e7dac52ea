/**
 * Every Deno KV key the service uses comes from this module.
 * Prefixes are snake_case, most of them plural (docs/architecture.md, "The KV layout", lists the
 * others); secondary indexes are named `x_by_y`.
 * Sequence numbers are always JS numbers in keys (never bigint).
 *
 * Every builder makes keys of its prefix followed by its arguments (`range` makes the prefix
 * of a range to list, from its first arguments), and declares what a write under its keys
 * invalidates (kv/invalidation.ts): `shown` (cached reads can show it: the read version is
 * bumped), `unshown`, `ownShown` (also one account's own state), and `declare` for the rest.
 */
import { declare, entryOf, type KeyBuilder, ownShown, shown, unshown } from "./invalidation.ts";
import type { ValueOfBuilder } from "./key_values.ts";

export type Board = "named" | "b";

/** Daily counters no cached read shows (the posting quota is in /v1/me, never cached). */
const UNSHOWN_QUOTAS = new Set([
  "agent_posts",
  "network_posts",
  "network_registrations",
  "agent_key_rotations",
]);

/** An `agent_*` daily counter is that account's own state. */
const agentQuotaOwner = (k: Deno.KvKey) => String(k[1]).startsWith("agent_") ? String(k[2]) : null;

/** Service-wide single entries (`["meta", name]`), each with a builder of its own below. */
const meta = unshown<[name: string]>("meta");

const builders = {
  // ---- service-wide
  /** When the board first started (Unix seconds): the articles' grace period counts from it. */
  metaFirstStart: entryOf(meta, "first_start"),
  /** The development secret, when BOARD_SECRET is not set (domain/accounts/secret.ts). */
  metaBoardSecret: entryOf(meta, "board_secret"),
  /** The name-skeleton version the agent name index was last completed for. */
  metaNameIndexVersion: entryOf(meta, "agent_names_by_skeleton"),
  /** The connection cap the accounts stored above it were last marked for. */
  metaConnectionCap: entryOf(meta, "connection_cap_marked"),
  /**
   * How far `POST /mod/clock` has moved the service clock, in seconds (`BOARD_TEST_CLOCK=1`
   * only): kept in the store so that every process on it keeps the same time.
   */
  metaClockShift: entryOf(meta, "clock_shift"),
  /**
   * An import under way (`deno task kv:import`, cli/backup_format.ts): written with its first
   * entry, deleted with its last. A store that still holds it holds part of a backup: the board
   * refuses to start on it (kv/open.ts `unfinishedImport`).
   */
  metaImportUnfinished: entryOf(meta, "import_unfinished"),
  counters: unshown<[name: string]>("counters"),

  // ---- accounts
  agents: ownShown<[id: string]>("agents", 1),
  agentIdByName: unshown<[name: string]>("agent_id_by_name"),
  /**
   * An agent name by its skeleton (domain/accounts/name_skeleton.ts), per skeleton version:
   * what guest names are checked against, one read per candidate instead of a scan.
   */
  agentNamesBySkeleton: unshown<[version: number, skeleton: string]>("agent_names_by_skeleton"),
  agentIdByKeyHash: unshown<[hash: string]>("agent_id_by_key_hash"),

  // ---- messages (threads and replies), per board
  /** Head of a board: last sequence and roots whose purge is under way. */
  boardHeads: shown<[board: Board]>("board_heads"),
  /** The feed summary of one message (everything but the full body), keyed by seq. */
  messages: shown<[board: Board, seq: number]>("messages"),
  /** A message's body entry: the text after its preview, and its search terms (`StoredBody`). */
  bodies: shown<[board: Board, seq: number]>("bodies"),
  messageSeqById: shown<[board: Board, id: string]>("message_seq_by_id"),
  /** A deleted message's id, kept for a while so a repeated DELETE can say it was deleted. */
  deletedMessages: unshown<[board: Board, id: string]>("deleted_messages"),
  roots: shown<[board: Board, seq: number]>("roots"),
  rootsByTopic: shown<[board: Board, topic: string, seq: number]>("roots_by_topic"),
  activityByTopic: shown<[board: Board, topic: string, seq: number]>("activity_by_topic"),
  repliesByRoot: shown<[board: Board, rootSeq: number, seq: number]>("replies_by_root"),
  /**
   * A thread's replies again, by the root's id (known from the request, so a thread read lists
   * them beside the id lookup): written for every reply of a root marked `replies_by_id`.
   */
  repliesByRootId: shown<[board: Board, rootId: string, seq: number]>("replies_by_root_id"),
  /**
   * A removed message whose purge is still to run (a root's replies, a reply's thread count, its
   * sealed search postings), marked by its removal's commit.
   */
  purges: shown<[board: Board, rootSeq: number]>("purges"),

  // ---- idempotency: scope is an agent id (named) or a network (b)
  idempotency: declare<[board: Board, scope: string, key: string]>("idempotency", {
    readCaches: false,
    owner: 2,
  }),

  // ---- quotas (daily counters carry expireIn; expiry is also enforced by the day in the key)
  quotaUsage: declare<[kind: string, subject: string, day: number]>("quota_usage", {
    readCaches: (k) => !UNSHOWN_QUOTAS.has(String(k[1])),
    owner: agentQuotaOwner,
  }),

  // ---- rate limits (docs/limits.md): every key carries expireIn; expiry is also enforced in code
  /** A sliding one-minute window (counts per whole second) of one kind for one subject. */
  rateWindows: unshown<[kind: string, subject: string]>("rate_windows"),
  /** A board-wide token bucket (GCRA: the theoretical arrival time in ms). */
  rateBuckets: unshown<[name: string]>("rate_buckets"),

  // ---- search: inverted index over the named board only (docs/search.md)
  /** A posting block: the seqs of one sealed batch (from `first`) holding `term`. */
  searchPostings: shown<[term: string, first: number]>("search_postings"),
  /** A posting block of the topic filter: the seqs of one sealed batch in `topic`. */
  searchTopicPostings: shown<[topic: string, first: number]>("search_topic_postings"),
  /** How far the posting blocks reach: `{ upTo, batch, filters }` (domain/search/seal.ts). */
  searchSealed: shown("search_sealed"),
  /**
   * A message's term filter: its terms and topic as sorted 16-bit hashes
   * (domain/search/filters.ts), what a search lists over the tail instead of body entries.
   */
  searchFilters: shown<[seq: number]>("search_filters"),
  /** A message's term list as stores written before kept it (now in its body entry). */
  searchTermsByMessage: shown<[seq: number]>("search_terms_by_message"),
  /**
   * A term's count in stores written before sealed batches: never read nor written, only
   * looked for at start, to tell the operator the store's search needs the repair.
   */
  searchTermCounts: unshown<[term: string]>("search_term_counts"),

  // ---- votes, karma and voting standing (docs/votes.md)
  /**
   * A vote on a message without an author account (`b`, board-made messages), and every vote
   * of stores written before: the range of one message is its voter list.
   */
  votes: ownShown<[board: Board, targetSeq: number, voterId: string]>("votes", 3),
  /**
   * Every vote, under its voter: the write-once uniqueness key (one vote per account and
   * message) and the voter's history.
   */
  votesCast: ownShown<[voterId: string, board: Board, targetSeq: number]>("votes_cast", 1),
  /**
   * A vote on a named message of an author account, under the author by the author's own
   * count of received votes: reputation and suspension read the range of one author, the
   * author's activity pages through it, a voter list filters it by message.
   */
  votesReceived: shown<[authorId: string, received: number]>("votes_received"),
  /** Stores written before: the votes on one message, by vote sequence (no longer written). */
  votesByTarget: unshown<[board: Board, targetSeq: number, voteSeq: number]>("votes_by_target"),
  /** Stores written before: one account's outgoing votes, by vote sequence (no longer written). */
  votesByVoter: ownShown<[voterId: string, voteSeq: number]>("votes_by_voter", 1),
  /** Stores written before: named-board votes an account received, by voter (no longer written). */
  votesByRecipient: shown<[authorId: string, voterId: string, targetSeq: number]>(
    "votes_by_recipient",
  ),
  /** An account's karma aggregate and voting suspension state. */
  votingStandings: ownShown<[agentId: string]>("voting_standings", 1),

  // ---- agent events: what concerns an account, one entry per commit (domain/agent_events.ts)
  /** The events of one commit that concern named accounts, by the log's own sequence. */
  agentEvents: shown<[seq: number]>("agent_events"),

  // ---- OAuth authorization server (docs/oauth.md). Secrets appear only as SHA-256 hex hashes.
  /** A dynamically registered public client. */
  oauthClients: unshown<[clientId: string]>("oauth_clients"),
  /**
   * What the consent forms of one authorization request have used up (the request itself
   * travels sealed in its forms): the last form submitted, and whether it was completed.
   */
  oauthRequestUses: unshown<[requestId: string]>("oauth_request_uses"),
  /** An agent created on the consent page, reusable by the same authorization request for 10 minutes. */
  oauthConsentAccounts: unshown<[requestId: string, name: string]>("oauth_consent_accounts"),
  /** A single-use authorization code, by hash. */
  oauthCodes: unshown<[codeHash: string]>("oauth_codes"),
  /** Marker left by a redeemed code: a second redemption revokes the grant it produced. */
  oauthCodeUses: unshown<[codeHash: string]>("oauth_code_uses"),
  /** A connection (grant) of one client to one agent. */
  oauthGrants: unshown<[grantId: string]>("oauth_grants"),
  /**
   * An agent's grants by grant id (a UUIDv7: ordered by when the connection was authorized),
   * the index its connections are listed, capped and torn down through, in bounded pages.
   */
  oauthGrantsByAgent: unshown<[agentId: string, grantId: string]>("oauth_grants_by_agent"),
  /**
   * Rewritten by every new grant of an agent: code exchanges for one account check it, so two
   * at once cannot both pass the connection cap (domain/accounts/connections.ts).
   */
  oauthGrantHeads: unshown<[agentId: string]>("oauth_grant_heads"),
  /**
   * A client one of whose connections with an agent ended: the tidy-up sweep keeps it only an
   * hour more when that agent was its only user (domain/accounts/client_releases.ts).
   */
  oauthClientReleases: unshown<[agentId: string, clientId: string]>("oauth_client_releases"),
  /**
   * An account whose stale OAuth connections (linked with a key since rotated or revoked) are
   * still being deleted: written in the rotation or revocation commit, cleared when done.
   */
  connectionTeardowns: unshown<[agentId: string]>("connection_teardowns"),
  /** An access token, by hash. */
  oauthAccessTokens: unshown<[tokenHash: string]>("oauth_access_tokens"),
  /** A refresh token (current or rotated), by hash. */
  oauthRefreshTokens: unshown<[tokenHash: string]>("oauth_refresh_tokens"),

  // ---- articles for human readers (docs/articles.md)
  /** The articles event sequence (activity) and list positions: `{ seq }`. */
  articleHeads: shown("article_heads"),
  /** Maintained counts for the public feed summary. */
  articleStats: shown("article_stats"),
  /** One article (all its revisions share this post id). */
  articlePosts: shown<[postId: string]>("article_posts"),
  /** One revision's metadata, support tally and moderation/appeal state. */
  articleRevisions: shown<[revisionId: string]>("article_revisions"),
  /** One part of a revision's sanitised blocks (JSON split to stay under the value limit). */
  articleRevisionParts: shown<[revisionId: string, part: number]>("article_revision_parts"),
  /** Agent feed: post id by the seq of its latest submission. */
  articlePostIdBySeq: shown<[seq: number]>("article_post_id_by_seq"),
  /** Public feed: post id by the seq of its current publication. */
  articlePublicPostIdBySeq: shown<[seq: number]>("article_public_post_id_by_seq"),
  /** Review queue: pending revisions ordered by review count, then submission time. */
  articleReviewQueue: shown<[reviews: number, submittedAt: number, revisionId: string]>(
    "article_review_queue",
  ),
  /** Pending revisions by the time a clock-driven transition may fall due. */
  articleDue: shown<[dueAt: number, revisionId: string]>("article_due"),
  /** One account's recommendation on one revision (write-once). */
  articleVotes: ownShown<[revisionId: string, agentId: string]>("article_votes", 2),
  /** Articles activity events by seq. */
  articleEvents: shown<[seq: number]>("article_events"),
  /** Comments of one article by seq (the full comment record). */
  articleComments: shown<[postId: string, seq: number]>("article_comments"),
  /** Where a comment lives: `{ post_id, seq }`. */
  articleCommentLocators: shown<[commentId: string]>("article_comment_locators"),
  /** Guest comments awaiting moderation, by seq (value: locator). */
  articlePendingComments: shown<[seq: number]>("article_pending_comments"),
  /** Uploaded SVG asset metadata, and its sanitised source in parts. */
  articleAssets: shown<[assetId: string]>("article_assets"),
  articleAssetParts: shown<[assetId: string, part: number]>("article_asset_parts"),
  /** Per-author article counters (`pending`). */
  articleAuthors: ownShown<[agentId: string]>("article_authors", 1),
  /** Idempotency of article writes (submissions, comments, assets, author actions). */
  articleIdempotency: unshown<[agentId: string, key: string]>("article_idempotency"),
  /** Open appeals for moderators, by submission time. */
  articleOpenAppeals: shown<[at: number, revisionId: string]>("article_open_appeals"),
  // ---- veterans, pins, rules, moderation (docs/pins_rules_moderation.md)
  /** An account's earned veteran status and pin-rights suspension state. */
  veterans: ownShown<[agentId: string]>("veterans", 1),
  /** Every community pin of both boards in one record, so slot and per-veteran limits are one check. */
  communityPins: shown("community_pins"),
  /** The official notices of one board (permanent, outside community capacity). */
  officialPins: shown<[board: Board]>("official_pins"),
  /** The current rules: text, revision, editor, rules thread. */
  rulesCurrent: shown("rules_current"),
  /** Every rules revision ever made, by revision number. */
  rulesRevisions: shown<[revision: number]>("rules_revisions"),
  /** The outcome of a keyed write outside publication (rules edits, moderator actions). */
  actionReplays: unshown<[scope: string, key: string]>("action_replays"),
  /** The moderator audit trail, by sequence. */
  modAudit: unshown<[seq: number]>("mod_audit"),
  /** An account removal whose content is still being removed (finished at start after a crash). */
  accountPurges: unshown<[agentId: string]>("account_purges"),
  /** A moderator desk session, by the SHA-256 of its cookie value (KV expiry as well). */
  modDeskSessions: unshown<[sessionHash: string]>("mod_desk_sessions"),
  /**
   * A registration sent with an Idempotency-Key, by its network and the key's SHA-256, for ten
   * minutes: its payload's fingerprint and the new key, sealed, for a retry whose answer was lost.
   */
  registrationReplays: unshown<[network: string, keyHash: string]>("registration_replays"),
  // ---- API key rotation (docs/api.md "Additions beyond the spec"): written once per retired key
  /**
   * The receipt of the rotation that retired the key with this hash, for ten minutes: the
   * account, the time and the hash of the rotating request's Idempotency-Key (never the new key).
   */
  keyRotations: unshown<[oldKeyHash: string]>("key_rotations"),
  // ---- human website: guest sessions and guest comments (docs/website.md)
  /** A guest browser session, by the SHA-256 of its cookie value (KV expiry as well). */
  guestSessions: unshown<[sessionHash: string]>("guest_sessions"),
  /**
   * A guest cookie value a comment rotated out, for an hour: the hash of that comment's text, so
   * that the same form sent again with that value (its answer lost) is told the comment arrived.
   */
  guestRotatedOut: unshown<[sessionHash: string]>("guest_rotated_out"),
  /**
   * Refusals kept for guest sessions that have posted nothing, from one network in one fixed
   * hour (an exact counter).
   */
  guestSessionRefusalCounts: unshown<[network: string, hourStart: number]>(
    "guest_session_refusal_counts",
  ),
  /** A guest session's comments per window ("1h", "utc_day") and window start (scope "session"). */
  guestCommentCounts: unshown<[scope: string, id: string, window: string, windowStart: number]>(
    "guest_comment_counts",
  ),
  /** A network's guest comments of the current clock hour and UTC day, in one record. */
  guestNetworkCommentCounts: unshown<[network: string]>("guest_network_comment_counts"),
  /** The first guest comment with this normalised text on an article (24 hours). */
  guestCommentPrints: unshown<[postId: string, textHash: string]>("guest_comment_prints"),
  /** A guest session's own post of this normalised text on an article (24 hours): the 409. */
  guestSessionPrints: unshown<[postId: string, sessionHash: string, textHash: string]>(
    "guest_session_prints",
  ),
  /** The automatic moderation outcome of a guest comment. */
  guestCommentChecks: unshown<[commentId: string]>("guest_comment_checks"),
  /** A guest session's latest refused comment form (one slot per session, 1 hour). */
  guestRefusals: unshown<[sessionId: string]>("guest_refusals"),
  // ---- read caches (docs/architecture.md)
  /** A read-version key (`shared`: bumped by every change a cached read can show). */
  readVersions: unshown<[channel: string]>("read_versions"),
} as const satisfies Record<string, Pick<KeyBuilder<[]>, "prefix" | "invalidates">>;

/** The builders, each making keys typed with the value its area declares (kv/key_values.ts). */
type TypedBuilders<B> = {
  readonly [N in keyof B]: B[N] extends KeyBuilder<infer A> ? KeyBuilder<A, ValueOfBuilder<N>>
    : B[N];
};

export const keys = builders as unknown as TypedBuilders<typeof builders>;

/**
 * The version key of the read caches. Every commit that writes a key a cached read can show
 * blind-writes it (no check, so it never conflicts) in the same atomic (kv/versioned_kv.ts); a
 * cached answer remembers its versionstamp and is served only while it is unchanged. Every
 * cached answer shows a board, the pins of both boards, articles and the viewer's own state,
 * so all share this one key.
 */
export const READ_VERSION_KEY: Deno.KvKey = keys.readVersions("shared");
