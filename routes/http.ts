/** HTTP helpers shared by every router: error objects, bounded JSON bodies, query parsing. */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { BoardError, type ErrorCode } from "../domain/errors.ts";
import { PAGE_LIMIT, type PageParams, parsePageParams } from "../domain/paging.ts";
import { boardSchema, UUID_PATTERN } from "./schemas.ts";
import type { Board } from "../kv/keys.ts";
import { TxConflictError } from "../kv/tx.ts";
import { readBoundedText } from "./body_reader.ts";
import { utf8Length } from "../domain/text.ts";
import { repeatedMemberName } from "./json_keys.ts";
import type { AppEnv } from "./env.ts";
import { allowanceNetwork } from "../domain/network.ts";
import { redactCredentials } from "../domain/accounts/mod.ts";

/** Maximum size of a whole serialized JSON request. */
export const MAX_REQUEST_BYTES = 16384;

/** ASCII spellings of the characters board messages use beyond printable ASCII. */
const ASCII_SPELLING: Record<string, string> = {
  "\u2014": "-",
  "\u2013": "-",
  "\u2026": "...",
  "\u2018": "'",
  "\u2019": "'",
  "\u201c": "'",
  "\u201d": "'",
  "\u2192": "->",
};

/**
 * An OAuth `error_description` as RFC 6749 §5.2 allows it: printable ASCII without `"` and
 * `\` (a double quote becomes `'`, a backslash `/`, a dash or ellipsis its ASCII spelling,
 * any other character `?`). Every OAuth error answer, body, redirect or challenge, uses it.
 */
export function oauthDescription(text: string): string {
  return text.replace(
    /[^\x20\x21\x23-\x5b\x5d-\x7e]/g,
    (ch) =>
      ch === '"' ? "'" : ch === "\\" ? "/" : ASCII_SPELLING[ch] ?? (/\s/.test(ch) ? " " : "?"),
  );
}

/** The JSON body of an OAuth error: `error`, and its `error_description` (`oauthDescription`). */
export function oauthErrorBody(error: string, description?: string): Record<string, string> {
  return description === undefined
    ? { error }
    : { error, error_description: oauthDescription(description) };
}

/** The id of an error code's entry on /docs (`error-not-found`). */
export function errorAnchor(code: string): string {
  return `error-${code.toLowerCase().replace(/_/g, "-")}`;
}

/**
 * The board error object. A credential the request carried where it was not read (a path, a
 * field or parameter name) is never said back: it is redacted in the message and the details.
 */
export function errorObject(
  baseUrl: string,
  code: ErrorCode | string,
  message: string,
  details?: unknown,
) {
  const said = details === undefined
    ? undefined
    : JSON.parse(redactCredentials(JSON.stringify(details)));
  return {
    error: {
      code,
      message: redactCredentials(message),
      ...(said !== undefined ? { details: said } : {}),
    },
    docs: `${baseUrl}/docs#${errorAnchor(code)}`,
  };
}

/**
 * Whether `err` is the store refusing a write for want of room or permission (SQLite's "database
 * or disk is full", a read-only file or file system): the operator's to fix, not a bug. When it
 * is, the log gets one line for it, not a stack trace.
 */
export function storeCannotWrite(err: unknown): boolean {
  const refused = err instanceof Error &&
    /database or disk is full|read-?only database|disk I\/O error/i.test(err.message);
  if (refused) console.error(`the store cannot be written: ${(err as Error).message}`);
  return refused;
}

/** Maps any thrown error to the board error object (never leaks internals). */
export function errorResponse(c: Context<AppEnv>, err: unknown): Response {
  const baseUrl = c.get("deps")?.config.baseUrl ?? "";
  let status = 500;
  let body;
  const headers: Record<string, string> = {};
  if (err instanceof BoardError) {
    status = err.status;
    body = errorObject(baseUrl, err.code, err.message, err.details);
    if (err.retryAfter !== undefined) {
      headers["Retry-After"] = String(Math.max(1, Math.ceil(err.retryAfter)));
    }
  } else if (err instanceof TxConflictError) {
    status = 503;
    body = errorObject(baseUrl, "UNAVAILABLE", "The board is busy; retry shortly.");
  } else if (storeCannotWrite(err)) {
    status = 503;
    body = errorObject(
      baseUrl,
      "UNAVAILABLE",
      "The board cannot store writes right now; reads still work. Retry later.",
    );
    headers["Retry-After"] = "30";
  } else if (err instanceof HTTPException) {
    status = err.status;
    const code = status === 404 ? "NOT_FOUND" : "INVALID_INPUT";
    body = errorObject(baseUrl, code, err.message || "Invalid request.");
  } else {
    console.error("unhandled error", err);
    body = errorObject(
      baseUrl,
      "INTERNAL",
      "Something went wrong on the board's side; retry later.",
    );
  }
  // Every 429 and 503 says when to retry (a second unless the refusal said more).
  if ((status === 429 || status === 503) && !headers["Retry-After"]) headers["Retry-After"] = "1";
  // An error object is never stored by a cache nor sniffed as another type, on any path.
  headers["Cache-Control"] = "no-store";
  headers["X-Content-Type-Options"] = "nosniff";
  return c.json(body, status as 400, headers);
}

/**
 * What to say of a header that arrived as several values (a header sent more than once
 * arrives as its values joined with ", ": a client's default headers plus the request's
 * own): `Header "X" was sent 2 times ("a, a"): send it once.`, or null for a single value.
 * For headers whose valid values hold no comma.
 */
export function repeatedHeader(name: string, value: string | null | undefined): string | null {
  if (!value?.includes(",")) return null;
  const times = value.split(",").length;
  return `Header "${name}" was sent ${times} times ("${value}"): send it once.`;
}

/**
 * The first `charset` parameter of a Content-Type that names an encoding other than UTF-8, the
 * one a JSON body is read in. Every parameter counts: a second one (`charset=utf-8;
 * charset=latin1`) is as ambiguous as a second header.
 */
export function foreignCharset(type: string): string | undefined {
  return [...type.matchAll(/;\s*charset\s*=\s*"?([^";\s]*)"?/gi)]
    .map((m) => m[1]).find((c) => !/^utf-?8$/i.test(c));
}

/**
 * 400 JSON_REQUIRED unless the request declares `Content-Type: application/json`, in UTF-8:
 * a `charset` parameter naming another encoding is refused, since the body is read as UTF-8
 * (JSON's one encoding) and would otherwise be misread.
 */
export function requireJsonContentType(headers: Headers): void {
  const type = headers.get("content-type");
  if (!/^application\/json\s*(;|$)/i.test(type ?? "")) {
    throw new BoardError(
      "JSON_REQUIRED",
      repeatedHeader("Content-Type", type) ??
        'Send the header "Content-Type: application/json" with a body.',
      { header: "Content-Type", expected: "application/json", received: type },
    );
  }
  const charset = foreignCharset(type!);
  if (charset !== undefined) {
    throw new BoardError(
      "JSON_REQUIRED",
      `The body is read as UTF-8, JSON's encoding; "charset=${charset}" names another. Send the body in UTF-8 with "Content-Type: application/json" (or "; charset=utf-8").`,
      { header: "Content-Type", expected: "application/json; charset=utf-8", received: type },
    );
  }
}

/**
 * What a too-large request is told besides its size: serializers that write non-ASCII text
 * (or `<`, `>`, `&`) as `\uXXXX` escapes by default send up to six bytes per character, so a
 * post well within its 8,192 bytes of text can pass the request's limit.
 */
const ESCAPES_COUNT =
  "The whole JSON request counts, escapes included: if text is sent as \\uXXXX escapes, send it as UTF-8 instead (Python: json.dumps(body, ensure_ascii=False); Go: a json.Encoder with SetEscapeHTML(false)).";

/** Whether bytes read hold a JSON `\u` escape (the bytes `\` `u`, across chunk ends too). */
function holdsUnicodeEscape(read: Uint8Array[]): boolean {
  let backslash = false;
  for (const chunk of read) {
    for (const byte of chunk) {
      if (backslash && byte === 0x75) return true;
      backslash = !backslash && byte === 0x5c;
    }
  }
  return false;
}

/**
 * Reads the request body as a bounded stream (never more than `limit` + one chunk) and
 * parses it as a UTF-8 JSON object. Throws 413 with the measurement details or
 * 400 INVALID_JSON with the bytes fully read.
 */
export async function readJsonObject(
  req: Request,
  limit = MAX_REQUEST_BYTES,
  /** Answers an empty body (nothing but white space) as `{}` instead of refusing it. */
  emptyAsObject = false,
): Promise<Record<string, unknown>> {
  requireJsonContentType(req.headers);
  const declared = req.headers.get("content-length");
  if (declared !== null && !/^\d+$/.test(declared.trim())) {
    throw new BoardError("INVALID_INPUT", 'Header "Content-Length" is not a whole number.', {
      header: "Content-Length",
    });
  }
  const text = await readBoundedText(req, limit, {
    declaredTooLarge: () => {
      const trimmed = declared!.trim();
      const n = Number(trimmed);
      const safe = Number.isSafeInteger(n);
      return new BoardError(
        "PAYLOAD_TOO_LARGE",
        `The request body is declared as ${
          safe ? n : trimmed
        } bytes; the limit is ${limit}. ${ESCAPES_COUNT}`,
        {
          scope: "request",
          limit_bytes: limit,
          ...(safe ? { declared_bytes: n } : { declared_content_length: trimmed }),
        },
      );
    },
    encoded: (coding) =>
      new BoardError(
        "UNSUPPORTED_MEDIA_TYPE",
        `The request body is sent with "Content-Encoding: ${coding}"; the board takes bodies uncompressed. Send the JSON as it is, without that header.`,
        { header: "Content-Encoding", received: coding },
      ),
    incomplete: (read) =>
      new BoardError("INVALID_JSON", "The request body ended before it was complete.", {
        bytes_read: read,
        reason: "incomplete_body",
        ...(declared !== null ? { declared_bytes: Number(declared) } : {}),
      }),
    tooLarge: (observed, read) =>
      new BoardError(
        "PAYLOAD_TOO_LARGE",
        `The request body is larger than ${limit} bytes.` +
          (holdsUnicodeEscape(read) ? ` ${ESCAPES_COUNT}` : ""),
        {
          scope: "request",
          limit_bytes: limit,
          observed_bytes_at_least: observed,
          ...(declared !== null ? { declared_bytes: Number(declared) } : {}),
        },
      ),
    notUtf8: (read) =>
      new BoardError("INVALID_JSON", "The request body is not valid UTF-8.", {
        bytes_read: read,
        reason: "invalid_utf8",
      }),
  });
  const total = utf8Length(text);
  if (emptyAsObject && text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new BoardError("INVALID_JSON", "The request body is not valid JSON.", {
      bytes_read: total,
      reason: total === 0 ? "empty_body" : "syntax_error",
      parser: e instanceof Error ? e.message.slice(0, 200) : undefined,
    });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new BoardError("INVALID_JSON", "The request body must be a JSON object.", {
      bytes_read: total,
      reason: "not_an_object",
    });
  }
  const repeated = repeatedMemberName(text);
  if (repeated !== null) {
    throw new BoardError(
      "INVALID_JSON",
      `The request body names "${
        repeated.slice(0, 60)
      }" twice in one object; send each field once.`,
      { bytes_read: total, reason: "duplicate_name", name: repeated.slice(0, 60) },
    );
  }
  return value as Record<string, unknown>;
}

/**
 * `limit`, `before`, `after` of the request within `bounds`; a malformed or repeated one is
 * 400 INVALID_LIMIT / INVALID_CURSOR.
 */
export function pageQuery(
  c: Context,
  bounds: { min: number; max: number; default: number } = PAGE_LIMIT,
  names = { limit: "limit", before: "before", after: "after" },
): PageParams {
  return parsePageParams(
    {
      limit: c.req.queries(names.limit),
      before: c.req.queries(names.before),
      after: c.req.queries(names.after),
    },
    bounds,
    names,
  );
}

/** One query parameter; a repeated one is a 400 (ambiguous input). */
export function queryParam(c: Context, name: string): string | undefined {
  const all = c.req.queries(name);
  if (!all || all.length === 0) return undefined;
  if (all.length > 1) {
    throw new BoardError(
      "INVALID_INPUT",
      `Parameter "${name}" was given ${all.length} times; give it once.`,
      { parameter: name },
    );
  }
  return all[0];
}

/** An optional uuid query parameter (lowercased), or 400 INVALID_INPUT. */
export function uuidQueryParam(c: Context, name: string): string | undefined {
  const v = queryParam(c, name);
  if (v === undefined) return undefined;
  if (!UUID_PATTERN.test(v)) {
    throw new BoardError("INVALID_INPUT", `Parameter "${name}" must be a uuid.`, {
      parameter: name,
    });
  }
  return v.toLowerCase();
}

/** The `board` query parameter (`fallback` when absent), or 400 INVALID_INPUT. */
export function boardQueryParam(c: Context, fallback?: Board): Board {
  const raw = queryParam(c, "board") ?? fallback;
  const parsed = boardSchema.safeParse(raw);
  if (!parsed.success) {
    throw new BoardError(
      "INVALID_INPUT",
      raw === undefined
        ? 'Parameter "board" is required: "named" or "b".'
        : 'Parameter "board" must be "named" or "b".',
      { parameter: "board" },
    );
  }
  return parsed.data;
}

/** A uuid path parameter, or 400. */
export function uuidParam(c: Context, name = "id"): string {
  const v = c.req.param(name) ?? "";
  if (!UUID_PATTERN.test(v)) {
    throw new BoardError("INVALID_INPUT", `Path parameter "${name}" must be a uuid.`, {
      parameter: name,
    });
  }
  return v.toLowerCase();
}

/**
 * The network allowance a request spends: the client network, or its separate
 * cross-origin allowance for a request sent from another site's page
 * (`allowanceNetwork` in domain/network.ts). Every limit a CORS-open endpoint charges
 * per network (credential calls, lookups, batch extras, writes, daily posts, client
 * registrations, OAuth requests) is keyed on it.
 */
export function callBucket(c: Context<AppEnv>): string {
  return allowanceNetwork(
    c.get("network"),
    c.req.header("origin"),
    new URL(c.get("deps").config.baseUrl).origin,
  );
}
