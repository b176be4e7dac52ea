/**
 * The Atom feed of published articles (`/articles.atom`) and the pages' metadata: the
 * feed parses as XML (saxes) and has every element Atom 1.0 (RFC 4287) requires, titles
 * are escaped, only published articles appear; every page links the feed for
 * autodiscovery; article pages carry a description and Open Graph metadata.
 */
import assert from "node:assert/strict";
import { SaxesParser } from "saxes";
import { register, testBoard } from "./helpers.ts";
import { submit } from "./article_helpers.ts";
import { decode, publishedArticle } from "./website_helpers.ts";
import { FEED_ENTRIES } from "../routes/web/atom_feed.ts";

const ATOM = "http://www.w3.org/2005/Atom";

interface XmlNode {
  name: string;
  ns: string;
  attrs: Record<string, string>;
  text: string;
  children: XmlNode[];
}

/** Parses XML into a tree with saxes (throws on any well-formedness error). */
function parseXml(xml: string): XmlNode {
  const parser = new SaxesParser({ xmlns: true });
  const root: XmlNode = { name: "#document", ns: "", attrs: {}, text: "", children: [] };
  const stack = [root];
  parser.on("error", (e) => {
    throw e;
  });
  parser.on("opentag", (tag) => {
    const attrs: Record<string, string> = {};
    for (const [k, a] of Object.entries(tag.attributes)) {
      attrs[k] = typeof a === "string" ? a : a.value;
    }
    const node: XmlNode = { name: tag.local!, ns: tag.uri!, attrs, text: "", children: [] };
    stack[stack.length - 1].children.push(node);
    stack.push(node);
  });
  parser.on("text", (t) => void (stack[stack.length - 1].text += t));
  parser.on("closetag", () => void stack.pop());
  parser.write(xml).close();
  return root.children[0];
}

function all(node: XmlNode, name: string): XmlNode[] {
  return node.children.filter((c) => c.name === name && c.ns === ATOM);
}

function one(node: XmlNode, name: string, what: string): XmlNode {
  const found = all(node, name);
  assert.equal(found.length, 1, `${what}: exactly one <${name}>`);
  return found[0];
}

/** RFC 3339 date-time, as Atom requires for <updated> and <published>. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

Deno.test("/articles.atom is a valid Atom 1.0 feed of the published articles", async () => {
  await using board = await testBoard();
  const tricky = `Tom & Jerry's <b>"bold"</b> guide ]]> to escaping`;
  const a = await publishedArticle(board, { title: tricky });
  board.clock.advance(60);
  const b = await publishedArticle(board, { title: "A second article, newer" });
  const author = await register(board);
  const pending = await submit(board, author.key, { title: "Not yet published anywhere" });

  const res = await board.request("/articles.atom");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/atom+xml; charset=utf-8");
  const xml = await res.text();
  assert.ok(xml.startsWith('<?xml version="1.0" encoding="utf-8"?>'));
  const feed = parseXml(xml);
  assert.equal(feed.name, "feed");
  assert.equal(feed.ns, ATOM);

  // Feed-level required elements (RFC 4287 §4.1.1).
  assert.equal(one(feed, "id", "feed").text, "http://board.test/articles");
  assert.ok(one(feed, "title", "feed").text.length > 0);
  assert.match(one(feed, "updated", "feed").text, RFC3339);
  const links = all(feed, "link");
  const self = links.find((l) => l.attrs.rel === "self");
  assert.equal(self?.attrs.href, "http://board.test/articles.atom");
  assert.equal(self?.attrs.type, "application/atom+xml");
  assert.equal(
    links.find((l) => l.attrs.rel === "alternate")?.attrs.href,
    "http://board.test/articles",
  );

  const entries = all(feed, "entry");
  assert.equal(entries.length, 2, "the pending article is not in the feed");
  assert.ok(!xml.includes(pending.post_id));
  for (const e of entries) {
    // Entry-level required elements (§4.1.2); the feed has no author, so each entry does.
    assert.match(one(e, "id", "entry").text, /^urn:uuid:[0-9a-f-]{36}$/);
    assert.ok(one(e, "title", "entry").text.length > 0);
    assert.match(one(e, "updated", "entry").text, RFC3339);
    assert.match(one(e, "published", "entry").text, RFC3339);
    assert.ok(one(one(e, "author", "entry"), "name", "author").text.length > 0);
    const alt = all(e, "link").find((l) => l.attrs.rel === "alternate");
    assert.match(alt?.attrs.href ?? "", /^http:\/\/board\.test\/articles\/[0-9a-f-]{36}$/);
    assert.ok(one(e, "summary", "entry").text.length > 0);
  }
  assert.equal(all(feed, "author").length, 0);
  // Newest first; the feed's updated is the newest entry's.
  assert.equal(one(entries[0], "id", "entry").text, `urn:uuid:${b.id}`);
  assert.equal(one(entries[1], "id", "entry").text, `urn:uuid:${a.id}`);
  assert.equal(one(feed, "updated", "feed").text, one(entries[0], "updated", "entry").text);
  // The title comes back exactly, escaped in the source.
  assert.equal(one(entries[1], "title", "entry").text, tricky);
  assert.ok(xml.includes("Tom &amp; Jerry&#39;s &lt;b&gt;&quot;bold&quot;&lt;/b&gt; guide ]]&gt;"));
  assert.equal(one(entries[1], "author", "entry").children[0].text, a.author.name);
});

Deno.test("/articles.atom with no articles is still a valid feed; it holds 20 entries", async () => {
  await using board = await testBoard();
  const empty = parseXml(await (await board.request("/articles.atom")).text());
  assert.equal(all(empty, "entry").length, 0);
  assert.equal(
    one(empty, "updated", "feed").text,
    new Date(board.clock.now() * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
  );
  for (let i = 0; i <= FEED_ENTRIES; i++) await publishedArticle(board);
  const full = parseXml(await (await board.request("/articles.atom")).text());
  assert.equal(all(full, "entry").length, FEED_ENTRIES);
});

Deno.test("pages link the feed for autodiscovery; article pages carry sharing metadata", async () => {
  await using board = await testBoard();
  const title = `Reading "quotes" & <tags> in titles`;
  const a = await publishedArticle(board, {
    title,
    blocks: [
      { type: "heading", text: "Not the description", level: 2 },
      {
        type: "paragraph",
        text:
          "The first paragraph of the article becomes its description, cut at a word boundary when it runs longer than two hundred characters, so that search results and link previews show whole words only and never half of one.",
      },
    ],
  });
  for (const path of ["/", "/articles", `/articles/${a.id}`, "/docs", "/docs/api", "/nope"]) {
    const html = await (await board.request(path, { headers: { accept: "text/html" } })).text();
    assert.ok(
      html.includes(
        '<link rel="alternate" type="application/atom+xml" title="Posting Board: articles" href="/articles.atom">',
      ),
      path,
    );
  }
  const html = await (await board.request(`/articles/${a.id}`)).text();
  const meta = (attr: string, key: string) =>
    decode(html.match(new RegExp(`<meta ${attr}="${key}" content="([^"]*)">`))?.[1] ?? "");
  const description = meta("name", "description");
  assert.ok(description.startsWith("The first paragraph of the article becomes its description"));
  assert.ok(description.endsWith("show whole words only and…"), description);
  assert.equal(meta("property", "og:description"), description);
  assert.equal(meta("property", "og:title"), title);
  assert.equal(meta("property", "og:type"), "article");
  assert.equal(meta("property", "og:url"), `http://board.test/articles/${a.id}`);
  assert.equal(meta("property", "og:site_name"), "Posting Board");
  assert.equal(meta("property", "article:author"), a.author.name);
  assert.match(meta("property", "article:published_time"), /^\d{4}-\d\d-\d\dT/);
  assert.ok(html.includes(`<link rel="canonical" href="http://board.test/articles/${a.id}">`));
  assert.ok(html.includes(`content="Reading &quot;quotes&quot; &amp; &lt;tags&gt; in titles"`));
});

Deno.test("/articles.atom answers a feed reader's If-None-Match with 304 until the feed changes", async () => {
  await using board = await testBoard();
  await publishedArticle(board);
  const first = await board.request("/articles.atom");
  const tag = first.headers.get("etag");
  assert.match(tag ?? "", /^W\/"[^"]+"$/);
  await first.body?.cancel();
  const again = await board.request("/articles.atom", { headers: { "if-none-match": tag! } });
  assert.equal(again.status, 304);
  assert.equal(again.headers.get("etag"), tag);
  assert.equal(again.headers.get("cache-control"), "no-cache");
  // A 304 repeats the Vary of the 200 it stands for (RFC 9110).
  assert.equal(first.headers.get("vary"), "Accept-Encoding");
  assert.equal(again.headers.get("vary"), "Accept-Encoding");
  assert.equal(await again.text(), "");
  // A compressed copy is the same feed: its validator matches too.
  const gzip = await board.request("/articles.atom", {
    headers: { "if-none-match": tag!, "accept-encoding": "gzip" },
  });
  assert.equal(gzip.status, 304);
  await gzip.body?.cancel();
  await publishedArticle(board);
  const changed = await board.request("/articles.atom", { headers: { "if-none-match": tag! } });
  assert.equal(changed.status, 200);
  assert.notEqual(changed.headers.get("etag"), tag);
  assert.equal(all(parseXml(await changed.text()), "entry").length, 2);
});

Deno.test("/articles.atom: an empty feed keeps its date and its validator as time passes", async () => {
  await using board = await testBoard();
  const first = await board.request("/articles.atom");
  const tag = first.headers.get("etag")!;
  const updated = one(parseXml(await first.text()), "updated", "feed").text;
  board.clock.advance(3600);
  const again = await board.request("/articles.atom", { headers: { "if-none-match": tag } });
  assert.equal(again.status, 304);
  await again.body?.cancel();
  const full = await board.request("/articles.atom");
  assert.equal(one(parseXml(await full.text()), "updated", "feed").text, updated);
});
