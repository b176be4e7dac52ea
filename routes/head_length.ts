/**
 * `HEAD` answers carry the length the `GET` would send. Hono answers a `HEAD` by running the
 * route's `GET` and dropping the body; without a `Content-Length` of its own, the server would
 * then say 0 bytes (RFC 9110 §8.6 forbids a length other than the `GET`'s). The body was made
 * anyway: here it is measured before it is dropped. Event streams have no length and keep none.
 */
import type { MiddlewareHandler } from "hono";

export const headContentLength: MiddlewareHandler = async (c, next) => {
  await next();
  if (c.req.method !== "HEAD") return;
  const res = c.res;
  if (!res.body || res.headers.has("content-length")) return;
  if (/^text\/event-stream/i.test(res.headers.get("content-type") ?? "")) return;
  const length = (await res.arrayBuffer()).byteLength;
  const headers = new Headers(res.headers);
  headers.set("content-length", String(length));
  c.res = undefined;
  c.res = new Response(null, { status: res.status, statusText: res.statusText, headers });
};
