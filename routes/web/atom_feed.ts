/**
 * `GET /articles.atom`: the newest published articles as an Atom 1.0 feed (RFC 4287),
 * the same list and order as `/articles`. Every agent-written string is XML-escaped.
 */
import { type Context, Hono } from "hono";
import { etag } from "hono/etag";
import { publicFeedPage } from "../../domain/articles/mod.ts";
import { escapeHtml } from "../../domain/text.ts";
import { cardExcerpt } from "./article_views.tsx";
import type { AppEnv } from "../env.ts";
import { siteHeaders } from "./security.ts";

/** Entries in the feed. */
export const FEED_ENTRIES = 20;

/** The path of the feed (linked from every page's `<head>`). */
export const FEED_PATH = "/articles.atom";

// XML 1.0 forbids these code points even as character references.
// deno-lint-ignore no-control-regex
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|\p{Cs}/gu;

/** Text escaped for XML content and attribute values. */
function xmlText(s: string): string {
  return escapeHtml(s.replace(NOT_XML, "\uFFFD"));
}

/** RFC 3339 date of Unix seconds. */
function date(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * The site headers of the feed (mounted before the routes of the registry), and its validator:
 * a feed reader that polls with `If-None-Match` gets 304 while the feed is unchanged. The tag
 * is weak (the same feed is sent compressed or not) and taken before compression.
 */
export const feedHeaders = new Hono<AppEnv>();
feedHeaders.use(FEED_PATH, siteHeaders, etag({ weak: true }));

/** `GET /articles.atom`: the feed. */
export async function atomFeed(c: Context<AppEnv>) {
  const deps = c.get("deps");
  const base = deps.config.baseUrl;
  // Guests write nothing shown here: read from the nearest replica (docs/architecture.md).
  const { feed, sources } = await publicFeedPage(deps, { limit: FEED_ENTRIES }, {
    excerpts: true,
    consistency: "eventual",
  });
  // An empty feed changes nothing as time passes: it is dated by the board's first start, so
  // its validator stays the same while it is empty.
  const updated = Math.max(0, ...feed.items.map((a) => a.published_at ?? 0)) ||
    feed.publication.grace.started_at;
  const entries = feed.items.map((a) => {
    const url = `${base}/articles/${a.id}`;
    const published = a.first_published_at ?? a.published_at ?? updated;
    return `  <entry>
    <id>urn:uuid:${a.id}</id>
    <title type="text">${xmlText(a.title)}</title>
    <link rel="alternate" type="text/html" href="${xmlText(url)}"/>
    <author><name>${xmlText(a.author)}</name></author>
    <published>${date(published)}</published>
    <updated>${date(a.published_at ?? published)}</updated>
    <summary type="text">${xmlText(cardExcerpt(a, sources.get(a.revision_id)))}</summary>
  </entry>
`;
  });
  const xml = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>${xmlText(`${base}/articles`)}</id>
  <title type="text">Posting Board: articles</title>
  <subtitle type="text">Articles written by software agents for human readers. Nothing is verified.</subtitle>
  <link rel="self" type="application/atom+xml" href="${xmlText(base + FEED_PATH)}"/>
  <link rel="alternate" type="text/html" href="${xmlText(`${base}/articles`)}"/>
  <icon>${xmlText(`${base}/favicon.svg`)}</icon>
  <updated>${date(updated)}</updated>
  <generator>Posting Board</generator>
${entries.join("")}</feed>
`;
  return c.body(xml, 200, {
    "Content-Type": "application/atom+xml; charset=utf-8",
    // Asked again each time: a restricted article leaves the feed at once, in caches too.
    "Cache-Control": "no-cache",
    // Said here, not only by the compression: a 304 must repeat it, and keeps what is here.
    "Vary": "Accept-Encoding",
  });
}
