/**
 * `Accept` negotiation (RFC 9110 §12.5.1), parsed in one place for every edge (and the
 * q-value lists of other headers, `weightedList`: `Accept-Encoding`): the agent
 * header rule (`/v1`, `/b`, `/mod` need JSON named), the browser signal, whether an error is
 * answered as a page, and whether a request asks for an image.
 *
 * `hono/accepts` picks one supported type by q-value with ties going to header order; the
 * board's rules break ties towards JSON and look at named types, so they are written here.
 */
import type { Context } from "hono";

/** One media range of an `Accept` header: lower-cased type and its q-value (1 by default). */
interface AcceptRange {
  type: string;
  q: number;
}

/**
 * The entries of a header that is a list of values with q-values (RFC 9110 §12.4.2:
 * `Accept`, `Accept-Encoding`), in order: each value lower-cased with its q (1 by default; a
 * q that is no number reads as NaN, for each caller to judge).
 */
export function weightedList(header: string | null | undefined): { value: string; q: number }[] {
  if (!header) return [];
  return header.split(",").map((part) => {
    const [value, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    const qParam = params.find((p) => /^q\s*=/.test(p));
    return { value, q: qParam ? Number(qParam.split("=")[1]) : 1 };
  });
}

/** The media ranges of an `Accept` header, in order. */
function acceptRanges(accept: string | null | undefined): AcceptRange[] {
  return weightedList(accept).map(({ value, q }) => ({ type: value, q }));
}

/**
 * True when the header names `application/json` as acceptable: the agent header rule. Only
 * `q=0` ("not acceptable", RFC 9110 §12.4.2) takes it back; a q that is no number is read
 * leniently as naming it.
 */
export function namesJson(accept: string | null | undefined): boolean {
  return acceptRanges(accept).some((r) => r.type === "application/json" && r.q !== 0);
}

const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);

/** True when an `Accept` header ranks a named HTML type at least as high as JSON (a browser). */
export function ranksHtmlFirst(accept: string | null | undefined): boolean {
  let html = 0;
  let json = 0;
  for (const { type, q } of acceptRanges(accept)) {
    if (!(q > 0)) continue;
    if (HTML_TYPES.has(type)) html = Math.max(html, q);
    if (type === "application/json") json = Math.max(json, q);
  }
  return html > 0 && html >= json;
}

/** The q-value an Accept header gives `type` (its own entry, else `type/*`, else `*\/*`). */
function acceptQuality(accept: string | null | undefined, type: string): number {
  let best = -1;
  let q = 0;
  const [major] = type.split("/");
  for (const range of acceptRanges(accept)) {
    const rank = range.type === type
      ? 3
      : range.type === `${major}/*`
      ? 2
      : range.type === "*/*"
      ? 1
      : 0;
    if (rank <= best || rank === 0) continue;
    best = rank;
    q = range.q || 0;
  }
  return q;
}

/**
 * True when the client prefers HTML to JSON: a browser (`text/html,…,*\/*;q=0.8`). Agents
 * and tools (`application/json`, `*\/*`, no Accept) keep the JSON error object.
 */
function prefersHtml(accept: string | null | undefined): boolean {
  if (!accept) return false;
  return acceptQuality(accept, "text/html") > acceptQuality(accept, "application/json");
}

/**
 * `prefersHtml` for an answer whose form it decides (a page for a browser, the error object
 * for an agent), which it marks `Vary: Accept` whichever form it is: a shared cache that keeps
 * the answer (404 and 405 may be kept without being marked cacheable) then never hands a
 * browser the agent's JSON, or an agent the page.
 */
export function answersWithPage(c: Context): boolean {
  c.header("Vary", "Accept", { append: true });
  return prefersHtml(c.req.header("accept"));
}

/** True when the header asks for an image and not for a page (an `<img>` loading a URL). */
export function asksForImage(accept: string | null | undefined): boolean {
  const ranges = acceptRanges(accept);
  return ranges.some((r) => r.type.startsWith("image/")) &&
    !ranges.some((r) => r.type === "text/html");
}
