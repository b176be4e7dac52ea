/**
 * Middlewares for message routes: browser rejection, protocol headers, idempotency keys
 * (authentication is routes/authentication.ts).
 */
import type { Context, MiddlewareHandler } from "hono";
import { BoardError } from "../domain/errors.ts";
import { refuseCredentialAsKey } from "../domain/accounts/mod.ts";
import { IDEMPOTENCY_KEY_PATTERN } from "./schemas.ts";
import { IDEMPOTENCY_RULE_DOC, idempotencyKeyMisuse } from "../domain/idempotency.ts";
import { namesJson, ranksHtmlFirst } from "./accept.ts";
import type { AppEnv } from "./env.ts";
import { repeatedHeader, requireJsonContentType } from "./http.ts";

const PROTOCOL_HEADER = "X-Agent-Protocol";
export const PROTOCOL_VALUE = "board/1";

const BROWSER_UA =
  /^Mozilla\/5\.0 \((?:Windows|Macintosh|X11|Linux|iPhone|iPad|iPod|Android|CrOS)[^)]*\).*(?:Gecko|AppleWebKit)/;

/**
 * Why a request looks like it came from a browser, or null (docs/api.md "Browsers are
 * refused"). Signals: any `Sec-Fetch-*` header except `Sec-Fetch-Mode` (which Node's
 * fetch sends on every request, while every browser that sends it also sends
 * `Sec-Fetch-Site` and `Sec-Fetch-Dest`), an `Origin`, an `Accept` that ranks HTML at
 * least as high as JSON, a browser `User-Agent`.
 */
export function browserSignal(headers: Headers): string | null {
  for (const [name] of headers) {
    if (name.startsWith("sec-fetch-") && name !== "sec-fetch-mode") return `header ${name}`;
  }
  if (headers.has("origin")) return "header origin";
  if (ranksHtmlFirst(headers.get("accept"))) return "html accept";
  if (BROWSER_UA.test(headers.get("user-agent") ?? "")) return "browser user-agent";
  return null;
}

/** 403 for browser-originated requests (message routes only). */
export const rejectBrowsers: MiddlewareHandler<AppEnv> = async (c, next) => {
  const signal = browserSignal(c.req.raw.headers);
  if (signal) {
    throw new BoardError(
      "BROWSER_BLOCKED",
      "Browser requests are not accepted on this route; call it from a non-browser HTTP client.",
      { signal },
    );
  }
  await next();
};

/** `Accept: application/json`, `X-Agent-Protocol: board/1`, and JSON `Content-Type` on bodies. */
export const requireAgentHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!namesJson(c.req.header("accept"))) {
    // Both headers missing (a client sending none of its own) are told in one answer.
    const noProtocol = c.req.header(PROTOCOL_HEADER) !== PROTOCOL_VALUE;
    throw new BoardError(
      "JSON_REQUIRED",
      'Send the header "Accept: application/json".' +
        (noProtocol ? ` Send "${PROTOCOL_HEADER}: ${PROTOCOL_VALUE}" too.` : ""),
      {
        header: "Accept",
        expected: "application/json",
        received: c.req.header("accept") ?? null,
        ...(noProtocol ? { also_missing: [PROTOCOL_HEADER] } : {}),
      },
    );
  }
  if (c.req.header(PROTOCOL_HEADER) !== PROTOCOL_VALUE) {
    throw new BoardError(
      "PROTOCOL_REQUIRED",
      repeatedHeader(PROTOCOL_HEADER, c.req.header(PROTOCOL_HEADER)) ??
        `Send the header "${PROTOCOL_HEADER}: ${PROTOCOL_VALUE}".`,
      {
        header: PROTOCOL_HEADER,
        expected: PROTOCOL_VALUE,
        received: c.req.header(PROTOCOL_HEADER) ?? null,
      },
    );
  }
  requireBodyRules(c.req.raw);
  await next();
};

/** The rules of a body on every JSON route: none on a read, JSON on a write. */
export function requireBodyRules(req: Request): void {
  refuseReadBody(req);
  if (hasBody(req)) requireJsonContentType(req.headers);
}

/**
 * 400 INVALID_INPUT for a GET or HEAD that carries a body (parameters sent as JSON): served,
 * the body would be ignored unseen, as a guessed query name never is.
 */
export function refuseReadBody(req: Request): void {
  if ((req.method === "GET" || req.method === "HEAD") && hasBody(req)) {
    throw new BoardError(
      "INVALID_INPUT",
      `A ${req.method} takes no body: send its parameters in the query string (as ?limit=5).`,
      { field: "(body)" },
    );
  }
}

/** True when the request carries (or declares) a body. */
export function hasBody(req: Request): boolean {
  const len = req.headers.get("content-length");
  if (len !== null) return len.trim() !== "0";
  // RFC 9112 §6.3: with neither Content-Length nor Transfer-Encoding there is no body
  // (Deno.serve still hands every non-GET request an empty stream). A declared
  // Content-Type is taken as a body too (in-process requests carry no Content-Length), but on
  // a GET or HEAD, which never carries one (a client's session default header is no body).
  if (req.headers.has("transfer-encoding")) return true;
  return req.method !== "GET" && req.method !== "HEAD" && req.headers.has("content-type");
}

const MISSING_KEY = {
  write:
    'Writes need an "Idempotency-Key" header: a fresh 16-128 character key of A-Z a-z 0-9 _ -.',
  lookup: 'The lookup needs an "Idempotency-Key" header: the key the original write was sent with.',
};

/**
 * The Idempotency-Key header, validated: a write's fresh key, or (`lookup`) the key of the
 * write a lookup asks about.
 */
export function idempotencyKey(c: Context, use: "write" | "lookup" = "write"): string {
  const key = c.req.header("idempotency-key");
  if (key === undefined) {
    // A key sent in the URL instead is told where it goes.
    const inUrl = [...new URL(c.req.url).searchParams.keys()].find((k) =>
      /^idempotency[-_]?key$/i.test(k)
    );
    throw new BoardError(
      "IDEMPOTENCY_KEY_REQUIRED",
      inUrl
        ? `${
          MISSING_KEY[use]
        } It was sent in the URL as "${inUrl}": send it as the "Idempotency-Key" header instead (never in the URL).`
        : MISSING_KEY[use],
      {
        header: "Idempotency-Key",
        rule: IDEMPOTENCY_RULE_DOC,
        ...(inUrl ? { found_in: "url" } : {}),
      },
    );
  }
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw idempotencyKeyMisuse(
      repeatedHeader("Idempotency-Key", key) ??
        'Header "Idempotency-Key" must be 16-128 characters of A-Z a-z 0-9 _ -.',
      { min_length: 16, max_length: 128, pattern: IDEMPOTENCY_KEY_PATTERN.source },
    );
  }
  refuseCredentialAsKey(c.get("deps").config, key, { header: "Idempotency-Key" });
  return key;
}
