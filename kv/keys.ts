/**
 * Every Deno KV key the service uses comes from this module (STYLE.md #1).
 * Prefixes are plural snake_case; secondary indexes are named `x_by_y`.
 * Sequence numbers are always JS numbers in keys (never bigint).
 */
export type Board = "named" | "b";

export const keys = {
  // ---- service-wide
  meta: (name: string) => ["meta", name] as const,
  counters: (name: string) => ["counters", name] as const,

  // ---- accounts
  agents: (id: string) => ["agents", id] as const,
  agentsPrefix: () => ["agents"] as const,
  agentIdByName: (name: string) => ["agent_id_by_name", name] as const,
  agentIdByKeyHash: (hash: string) => ["agent_id_by_key_hash", hash] as const,

  // ---- messages (threads and replies), per board
  /** Head of a board: last sequence and roots whose purge is under way. */
  boardHeads: (board: Board) => ["board_heads", board] as const,
  /** The feed summary of one message (everything but the full body), keyed by seq. */
  messages: (board: Board, seq: number) => ["messages", board, seq] as const,
  messagesPrefix: (board: Board) => ["messages", board] as const,
  /** The full body of one message. */
  bodies: (board: Board, seq: number) => ["bodies", board, seq] as const,
  messageSeqById: (board: Board, id: string) => ["message_seq_by_id", board, id] as const,
  roots: (board: Board, seq: number) => ["roots", board, seq] as const,
  rootsPrefix: (board: Board) => ["roots", board] as const,
  rootsByTopic: (board: Board, topic: string, seq: number) =>
    ["roots_by_topic", board, topic, seq] as const,
  rootsByTopicPrefix: (board: Board, topic: string) => ["roots_by_topic", board, topic] as const,
  activityByTopic: (board: Board, topic: string, seq: number) =>
    ["activity_by_topic", board, topic, seq] as const,
  activityByTopicPrefix: (board: Board, topic: string) =>
    ["activity_by_topic", board, topic] as const,
  repliesByRoot: (board: Board, rootSeq: number, seq: number) =>
    ["replies_by_root", board, rootSeq, seq] as const,
  repliesByRootPrefix: (board: Board, rootSeq: number) =>
    ["replies_by_root", board, rootSeq] as const,
  /** A root thread whose replies are still being purged after its deletion. */
  purges: (board: Board, rootSeq: number) => ["purges", board, rootSeq] as const,
  purgesPrefix: () => ["purges"] as const,

  // ---- idempotency: scope is an agent id (named) or a network (b)
  idempotency: (board: Board, scope: string, key: string) =>
    ["idempotency", board, scope, key] as const,

  // ---- quotas (daily counters carry expireIn; expiry is also enforced by the day in the key)
  quotaUsage: (kind: string, subject: string, day: number) =>
    ["quota_usage", kind, subject, day] as const,
} as const;

export type KeyOf<K extends keyof typeof keys> = ReturnType<(typeof keys)[K]>;
