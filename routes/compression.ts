/**
 * Response compression (docs/api.md, "Compression"): JSON, HTML and other text answers are
 * sent gzip- or brotli-encoded when the request's `Accept-Encoding` allows it. Brotli is
 * chosen when the client rates it at least as high as gzip; a coding rated `q=0` is never
 * used, nor is `identity` refused. Bodies under MIN_COMPRESS_BYTES, already encoded bodies,
 * streams (`text/event-stream`), binary types, `Cache-Control: no-transform` and HEAD
 * answers pass unchanged, and so do `no-store` HTML pages: they carry a session's CSRF
 * token next to text a cross-site request can put there (an echoed form), which
 * compressed sizes would leak (BREACH). Every answer of a compressible type carries
 * `Vary: Accept-Encoding`, compressed or not, so shared caches keep the variants apart.
 */
import type { Context, MiddlewareHandler } from "hono";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { weightedList } from "./accept.ts";

/** Smaller bodies go out as they are: the saving would not pay for the work. */
export const MIN_COMPRESS_BYTES = 1024;

type Coding = "br" | "gzip";

const COMPRESSIBLE =
  /^(text\/(?!event-stream)[\w.+-]+|application\/([\w.+-]+\+)?(json|xml)|application\/(javascript|manifest\+json)|image\/svg\+xml)\s*(;|$)/i;

/**
 * The coding to answer with for an `Accept-Encoding` header value: `br` when the client
 * rates brotli at least as high as gzip (and above 0), otherwise `gzip` when allowed
 * (directly or through `*`), otherwise null (send the body as it is).
 */
export function chooseCoding(accept: string | null | undefined): Coding | null {
  const q = new Map<string, number>();
  for (const { value, q: weight } of weightedList(accept)) {
    // A q that is no number is read as 0 here: a coding is used only when surely acceptable.
    if (value) q.set(value, Number.isFinite(weight) ? weight : 0);
  }
  const rate = (name: string) => q.get(name) ?? (name === "x-gzip" ? 0 : q.get("*") ?? 0);
  const gzip = Math.max(rate("gzip"), q.get("x-gzip") ?? 0);
  const br = rate("br");
  if (br > 0 && br >= gzip) return "br";
  if (gzip > 0) return "gzip";
  return null;
}

/** Compresses `body` with `coding` (brotli quality 5: near its best ratio for little CPU). */
function compressBody(body: Uint8Array, coding: Coding): Uint8Array<ArrayBuffer> {
  if (coding === "gzip") return new Uint8Array(gzipSync(body, { level: 6 }));
  return new Uint8Array(brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 5,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  }));
}

/**
 * Compressed copies of the cached hot reads (routes/cached_pages.ts), one map per coding,
 * keyed by the answer's text itself: a copy is served again for as long as the read cache
 * answers the same text, and can never be stale (another text is another key). Least
 * recently used copies go first once the copies and their texts pass the byte budget.
 */
export class CompressedCopies {
  #kept = new Map<string, Partial<Record<Coding, Uint8Array<ArrayBuffer>>>>();
  #bytes = 0;
  constructor(readonly budget: number) {}

  /** `text` compressed with `coding`: the kept copy, or a new one (then kept). */
  get(text: string, coding: Coding): Uint8Array<ArrayBuffer> {
    let copies = this.#kept.get(text);
    if (copies) this.#kept.delete(text); // re-inserted below: most recently used last
    else {
      copies = {};
      this.#bytes += text.length * 2;
    }
    this.#kept.set(text, copies);
    let copy = copies[coding];
    if (!copy) {
      copy = copies[coding] = compressBody(new TextEncoder().encode(text), coding);
      this.#bytes += copy.length;
      this.#evict();
    }
    return copy;
  }

  #evict(): void {
    for (const [text, copies] of this.#kept) {
      if (this.#bytes <= this.budget) return;
      this.#kept.delete(text);
      this.#bytes -= text.length * 2 + (copies.br?.length ?? 0) + (copies.gzip?.length ?? 0);
    }
  }
}

/** Memory for compressed copies of cached reads, per instance (docs/architecture.md). */
const COMPRESSED_COPIES_BUDGET = 16 * 1024 * 1024;
const copies = new CompressedCopies(COMPRESSED_COPIES_BUDGET);

/**
 * The answer for a cached JSON text: compressed from a kept copy when the request accepts
 * gzip or brotli and the text is large enough, else the text as it is (which the
 * compression middleware then leaves alone, or compresses if it is a HEAD or small body).
 */
export function cachedJsonAnswer(c: Context, text: string): Response {
  const coding = c.req.method === "GET" && text.length >= MIN_COMPRESS_BYTES
    ? chooseCoding(c.req.header("accept-encoding"))
    : null;
  if (!coding) return c.body(text, 200, { "Content-Type": "application/json" });
  return c.body(copies.get(text, coding), 200, {
    "Content-Type": "application/json",
    "Content-Encoding": coding,
    "Vary": "Accept-Encoding",
  });
}

function addVary(headers: Headers): void {
  const vary = headers.get("vary");
  if (!vary) headers.set("vary", "Accept-Encoding");
  else if (!/(^|,)\s*(accept-encoding|\*)\s*(,|$)/i.test(vary)) {
    headers.set("vary", `${vary}, Accept-Encoding`);
  }
}

/** The compression middleware: install first, so it sees every answer, errors included. */
export const compressResponses: MiddlewareHandler = async (c, next) => {
  await next();
  // `res.body` is never touched unless the answer is compressed: reading it turns a fixed
  // body into a stream, which the server then sends chunked, and more slowly.
  let res = c.res;
  const type = res.headers.get("content-type") ?? "";
  if (res.status === 204 || res.status === 304 || !COMPRESSIBLE.test(type)) return;
  try {
    addVary(res.headers);
  } catch {
    // Immutable headers (a response made elsewhere): answer a copy that says it varies.
    const headers = new Headers(res.headers);
    addVary(headers);
    c.res = undefined;
    c.res = res = new Response(res.body, {
      status: res.status,
      statusText: res.statusText,
      headers,
    });
  }
  const cacheControl = res.headers.get("cache-control") ?? "";
  if (
    c.req.method === "HEAD" || res.status === 206 ||
    res.headers.has("content-encoding") || /no-transform/i.test(cacheControl) ||
    (/^text\/html/i.test(type) && /no-store/i.test(cacheControl))
  ) return;
  const coding = chooseCoding(c.req.header("accept-encoding"));
  if (!coding) return;
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (declared < MIN_COMPRESS_BYTES) return;
  const body = new Uint8Array(await res.arrayBuffer());
  const headers = new Headers(res.headers);
  let out = body;
  if (body.length >= MIN_COMPRESS_BYTES) {
    out = compressBody(body, coding);
    headers.set("content-encoding", coding);
  }
  headers.set("content-length", String(out.length));
  c.res = undefined;
  c.res = new Response(out, { status: res.status, statusText: res.statusText, headers });
};
