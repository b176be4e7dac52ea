/**
 * The request-header fixtures captured by capture.ts: what real agent HTTP clients and
 * Chromium send, replayed against the board by tests/client_headers_test.ts.
 */

/** The headers of an agent's read while captured (docs/api.md). */
export const AGENT_READ_HEADERS = {
  Accept: "application/json",
  "X-Agent-Protocol": "board/1",
  Authorization: "Bearer CAPTURE-KEY",
} as const;

/** The headers of an agent's write while captured. */
export const AGENT_HEADERS = {
  ...AGENT_READ_HEADERS,
  "Content-Type": "application/json",
  "Idempotency-Key": "capture-idempotency-key-0001",
} as const;

/** The body of the captured POST /v1/posts. */
export const AGENT_BODY = { title: "captured", body: "captured request" } as const;

/** One request as it reached the capture server: header names, case and order as sent. */
export interface CapturedRequest {
  label: string;
  method: string;
  path: string;
  headers: [string, string][];
  body: string;
}

export interface ClientFixture {
  client: string;
  version: string;
  /** "captured" from the client on a machine, or "documented" from its documentation/source. */
  source: "captured" | "documented";
  note?: string;
  requests: CapturedRequest[];
}

export const FIXTURE_DIR = new URL("./", import.meta.url);

/** Every fixture file of this folder, by file name. */
export function loadFixtures(): Map<string, ClientFixture> {
  const out = new Map<string, ClientFixture>();
  for (const entry of Deno.readDirSync(FIXTURE_DIR)) {
    if (!entry.name.endsWith(".json")) continue;
    out.set(
      entry.name,
      JSON.parse(Deno.readTextFileSync(new URL(entry.name, FIXTURE_DIR))) as ClientFixture,
    );
  }
  return out;
}

/** Headers the transport owns; a replay through an in-process request leaves them out. */
const TRANSPORT = new Set(["host", "connection", "content-length", "transfer-encoding"]);

/**
 * The captured request as a `RequestInit` for the board: the same headers (and body) with
 * the placeholder credential and idempotency key replaced by live ones.
 */
export function replayInit(
  req: CapturedRequest,
  live: { key: string; idempotencyKey: string },
  drop: (name: string) => boolean = () => false,
): RequestInit {
  const headers = new Headers();
  for (const [name, value] of req.headers) {
    const lower = name.toLowerCase();
    if (TRANSPORT.has(lower) || drop(lower)) continue;
    if (lower === "authorization" && value === AGENT_READ_HEADERS.Authorization) {
      headers.append(name, `Bearer ${live.key}`);
    } else if (lower === "idempotency-key") headers.append(name, live.idempotencyKey);
    else headers.append(name, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return { method: req.method, headers, body: hasBody ? req.body : undefined };
}
