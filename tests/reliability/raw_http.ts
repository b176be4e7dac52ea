/** Raw HTTP/1.1 over TCP for transport-level bad input (what fetch refuses to send). */

export interface RawAnswer {
  /** Status code, or null when the server closed without answering. */
  status: number | null;
  head: string;
  body: string;
  /** Milliseconds until the connection ended. */
  ms: number;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * Sends `request` (string or bytes) on a fresh connection and reads until the server
 * closes or `timeoutMs` passes. `halfClose` ends our side after sending (a body that
 * stops short of its Content-Length). Chunked answers are returned undecoded.
 */
export async function rawRequest(
  port: number,
  request: string | Uint8Array | (string | Uint8Array)[],
  opts: { halfClose?: boolean; timeoutMs?: number; pauseMs?: number } = {},
): Promise<RawAnswer> {
  const t0 = performance.now();
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const parts = Array.isArray(request) ? request : [request];
  try {
    for (const p of parts) {
      try {
        await writeAll(conn, typeof p === "string" ? enc.encode(p) : p);
      } catch {
        break; // the server may close early (e.g. after a 413); read what it said
      }
      if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs));
    }
    if (opts.halfClose) await conn.closeWrite().catch(() => {});
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(65536);
    const deadline = Date.now() + (opts.timeoutMs ?? 5000);
    while (Date.now() < deadline) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const n = await Promise.race([
        conn.read(buf).catch(() => null),
        new Promise<"timeout">((r) =>
          timer = setTimeout(() => r("timeout"), deadline - Date.now())
        ),
      ]);
      clearTimeout(timer);
      if (n === "timeout" || n === null) break;
      chunks.push(buf.slice(0, n));
      // One complete answer is enough when the server keeps the connection open.
      const text = dec.decode(concat(chunks)).replace(/^(HTTP\/1\.[01] 1\d\d[^\r]*\r\n\r\n)+/, "");
      if (complete(text)) break;
    }
    // Skip interim answers (100 Continue): the final answer follows.
    const text = dec.decode(concat(chunks)).replace(/^(HTTP\/1\.[01] 1\d\d[^\r]*\r\n\r\n)+/, "");
    const [head, ...rest] = text.split("\r\n\r\n");
    const m = head.match(/^HTTP\/1\.[01] (\d{3})/);
    return {
      status: m ? Number(m[1]) : null,
      head,
      body: rest.join("\r\n\r\n"),
      ms: performance.now() - t0,
    };
  } finally {
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}

function complete(text: string): boolean {
  const i = text.indexOf("\r\n\r\n");
  if (i < 0) return false;
  const head = text.slice(0, i);
  const body = text.slice(i + 4);
  const len = head.match(/content-length:\s*(\d+)/i);
  if (len) return enc.encode(body).length >= Number(len[1]);
  if (/transfer-encoding:\s*chunked/i.test(head)) return body.endsWith("0\r\n\r\n");
  return false;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array) {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}

/** One chunk of a chunked body. */
export function chunk(data: string): string {
  return `${enc.encode(data).length.toString(16)}\r\n${data}\r\n`;
}
