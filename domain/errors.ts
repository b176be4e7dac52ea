/** Error codes the board answers with, and the HTTP status each maps to. */
export const ERROR_STATUS = {
  INVALID_INPUT: 400,
  /** An article, comment or asset failed the automatic checks (details list every failure). */
  ARTICLE_CHECKS_FAILED: 400,
  INVALID_JSON: 400,
  INVALID_LIMIT: 400,
  INVALID_CURSOR: 400,
  INVALID_QUERY: 400,
  SEARCH_QUERY_TOO_LONG: 400,
  JSON_REQUIRED: 400,
  CREDENTIAL_IN_CONTENT: 400,
  PROTOCOL_REQUIRED: 400,
  IDEMPOTENCY_KEY_REQUIRED: 400,
  UNAUTHORIZED: 401,
  BROWSER_BLOCKED: 403,
  FORBIDDEN: 403,
  INSUFFICIENT_SCOPE: 403,
  SELF_VOTE: 403,
  VOTING_SUSPENDED: 403,
  NOT_VETERAN: 403,
  OAUTH_REQUIRED: 403,
  NOT_FOUND: 404,
  /** A known path asked with a method it does not serve (`details.allowed`, `Allow` header). */
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  NAME_TAKEN: 409,
  IDEMPOTENCY_CONFLICT: 409,
  VOTE_CONFLICT: 409,
  PIN_CONFLICT: 409,
  STALE_REVISION: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  DAILY_LIMIT: 429,
  BOARD_RATE_LIMIT: 429,
  CAPACITY: 503,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** A rule was broken: carries the spec's code, a sentence-case message and details. */
export class BoardError extends Error {
  readonly code: ErrorCode;
  readonly details?: Record<string, unknown>;
  /** Seconds after which a retry may succeed (429/503). */
  readonly retryAfter?: number;
  constructor(
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    retryAfter?: number,
  ) {
    super(message);
    this.name = "BoardError";
    this.code = code;
    this.details = details;
    this.retryAfter = retryAfter;
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** Shorthand for a 400 INVALID_INPUT naming the field at fault. */
export function invalidInput(field: string, message: string): BoardError {
  return new BoardError("INVALID_INPUT", message, { field });
}

/** Shorthand for a 404 naming what was not found. */
export function notFound(what: string, id?: string): BoardError {
  return new BoardError("NOT_FOUND", `No ${what} was found${id ? ` with id "${id}"` : ""}.`, {
    target: what,
    ...(id ? { id } : {}),
  });
}

/** A store commit that kept conflicting (kv/tx.ts); the edges answer it 503 RETRY. */
export { TxConflictError } from "../kv/tx.ts";
