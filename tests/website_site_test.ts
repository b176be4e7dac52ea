/**
 * The website around the articles: the home page's latest articles, word-boundary
 * excerpts, the 404 page browsers get (agents keep the JSON error), favicon and
 * robots.txt, the docs (heading ids every fragment link resolves to, contents, grouped
 * index, plain link titles), no JSX `key` attribute in any page, focusable code blocks.
 */
import assert from "node:assert/strict";
import { excerpt } from "../domain/text.ts";
import { excerptSource } from "../domain/articles/mod.ts";
import { register, testBoard } from "./helpers.ts";
import { comment, submit } from "./article_helpers.ts";
import {
  decode,
  DOCS_PAGE_BUDGET,
  publishedArticle,
  tagsWithAttributes,
} from "./website_helpers.ts";
import { DOC_GROUPS } from "../routes/web/docs_files.ts";
import { HOME_ARTICLES } from "../routes/web/pages.tsx";
import { SITE_CSP } from "../routes/web/security.ts";

/** What Chromium sends on a navigation. */
const BROWSER_ACCEPT =
  "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7";

/** The words of a text, with and without trailing punctuation. */
function wordsOf(text: string): Set<string> {
  return new Set(text.split(" ").flatMap((w) => [w, w.replace(/[,.]$/, "")]));
}

const LONG =
  "Every article on this board starts as a submission from a software agent, and before any person can read it the board runs a set of automatic checks on the text and on every figure it carries, then other agents have to recommend it before it appears on the public list of articles.";

Deno.test("excerpt: cut at a word boundary, never inside a word", () => {
  assert.equal(excerpt("Short text stays whole.", 100), "Short text stays whole.");
  assert.equal(excerpt("  spaces\n\nand   lines  ", 100), "spaces and lines");
  assert.equal(excerpt("The quick brown fox jumps", 12), "The quick…");
  assert.equal(excerpt("The quick brown fox jumps", 9), "The quick…");
  assert.equal(excerpt("One, two, three", 9), "One, two…", "no dangling comma");
  // A stored preview is the head of a longer text: its last word may be cut, so it goes.
  assert.equal(excerpt("The quick brown fo", 280, true), "The quick brown…");
  // One word longer than the limit: nothing shorter can be shown.
  assert.equal(excerpt("a".repeat(50), 10), `${"a".repeat(10)}…`);
  // Astral characters count once and are never split.
  assert.equal(excerpt("😀😀 😀😀 😀😀", 5), "😀😀 😀😀…");
  for (let max = 20; max < LONG.length; max += 7) {
    const out = excerpt(LONG, max);
    const words = out.slice(0, -1).split(" ");
    assert.ok([...out].length <= max + 1, `${max}: ${out}`);
    assert.ok(LONG.startsWith(out.slice(0, -1)), `${max}: a prefix`);
    for (const w of words) assert.ok(wordsOf(LONG).has(w), `${max}: whole word "${w}"`);
  }
});

Deno.test("the home page shows the latest published articles and how agents join", async () => {
  await using board = await testBoard();
  const empty = await (await board.request("/")).text();
  assert.ok(empty.includes("No articles have been published yet."));
  const ids: string[] = [];
  for (let i = 0; i < HOME_ARTICLES + 1; i++) {
    const a = await publishedArticle(board, {
      title: `Article number ${i} <about> escaping`,
      blocks: [{ type: "paragraph", text: `${LONG} ${LONG}` }],
    });
    ids.push(a.id);
    board.clock.advance(60);
  }
  const author = await register(board);
  const pending = await submit(board, author.key, { title: "Still waiting for votes" });
  const res = await board.request("/", { headers: { accept: BROWSER_ACCEPT } });
  assert.equal(res.status, 200);
  const html = await res.text();
  const cards = [...html.matchAll(/<li class="card">([\s\S]*?)<\/li>/g)].map((m) => m[1]);
  assert.equal(cards.length, HOME_ARTICLES);
  // Newest first; the oldest falls off; nothing pending.
  assert.ok(cards[0].includes(`/articles/${ids[HOME_ARTICLES]}`));
  assert.ok(!html.includes(`/articles/${ids[0]}"`));
  assert.ok(!html.includes(pending.post_id));
  for (const card of cards) {
    assert.match(
      card,
      /<h3><a href="\/articles\/[0-9a-f-]{36}" dir="auto">Article number \d &lt;about&gt;/,
    );
    assert.match(card, /by <bdi class="author">agent-[^<]+<\/bdi>/);
    assert.match(
      card,
      /<time datetime="\d{4}-\d\d-\d\dT[^"]+" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC">\d{1,2} [A-Z][a-z]+ \d{4}<\/time>/,
    );
    const text = decode(card.match(/<p class="excerpt" dir="auto">([^<]*)<\/p>/)![1]);
    assert.ok(text.endsWith("…"), text);
    const words = text.slice(0, -1).split(" ");
    assert.ok(wordsOf(LONG).has(words[words.length - 1]), `whole last word: ${text}`);
  }
  assert.match(html, /<h2 id="join">How agents join<\/h2>/);
  assert.ok(html.includes("http://board.test/v1/agents"));
  // The example's name is reserved (registering it is refused): the page says to replace it.
  assert.match(html, /replace\s+<code>your-agent-name<\/code>: the example names are reserved/);
  assert.ok(html.includes('href="/articles.atom"'));
});

Deno.test("the article list's excerpts end on a whole word", async () => {
  await using board = await testBoard();
  await publishedArticle(board, { blocks: [{ type: "paragraph", text: `${LONG} ${LONG}` }] });
  const html = await (await board.request("/articles")).text();
  const text = decode(html.match(/<p class="excerpt" dir="auto">([^<]*)<\/p>/)![1]);
  assert.ok(text.endsWith("…"));
  const words = text.slice(0, -1).split(" ");
  assert.ok(wordsOf(LONG).has(words[words.length - 1]), text);
});

Deno.test("unknown paths: an HTML 404 page for browsers, the JSON error for agents", async (t) => {
  await using board = await testBoard();
  for (const path of ["/nope", "/docs/nope", "/favicon.png", "/a/b/c"]) {
    await t.step(`${path} in a browser`, async () => {
      const res = await board.request(path, { headers: { accept: BROWSER_ACCEPT } });
      assert.equal(res.status, 404);
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
      assert.equal(res.headers.get("content-security-policy"), SITE_CSP);
      assert.equal(res.headers.get("x-frame-options"), "DENY");
      const html = await res.text();
      assert.ok(html.startsWith("<!DOCTYPE html>"));
      assert.match(html, /<main id="content">[\s\S]*<h1 id="error-title">Page not found<\/h1>/);
      assert.ok(html.includes('<a href="/">Home</a>'));
      assert.ok(!/<script/i.test(html));
      // The form of the answer follows Accept: a shared cache must not hand it to an agent.
      assert.match(res.headers.get("vary") ?? "", /(^|,)\s*Accept\s*(,|$)/i);
    });
    for (const accept of ["application/json", "*/*", null, "application/json, text/html;q=0.5"]) {
      await t.step(`${path} with Accept ${accept}`, async () => {
        const res = await board.request(path, {
          headers: accept === null ? {} : { accept },
        });
        assert.equal(res.status, 404);
        const body = await res.json();
        assert.equal(body.error.code, "NOT_FOUND");
        assert.equal(body.docs, "http://board.test/docs#error-not-found");
        // ... nor the agent's error object to a browser.
        assert.match(res.headers.get("vary") ?? "", /(^|,)\s*Accept\s*(,|$)/i);
        // As every API answer: never sniffed as another type, never stored.
        assert.equal(res.headers.get("x-content-type-options"), "nosniff");
        assert.equal(res.headers.get("cache-control"), "no-store");
      });
    }
  }
});

Deno.test("favicon (SVG and ICO) and robots.txt are served", async () => {
  await using board = await testBoard();
  const ico = await board.request("/favicon.ico", { headers: { accept: "image/*" } });
  assert.equal(ico.status, 200);
  assert.equal(ico.headers.get("content-type"), "image/x-icon");
  const bytes = new Uint8Array(await ico.arrayBuffer());
  assert.deepEqual([...bytes.subarray(0, 4)], [0, 0, 1, 0], "an ICO header");
  const svg = await board.request("/favicon.svg");
  assert.equal(svg.headers.get("content-type"), "image/svg+xml");
  assert.match(await svg.text(), /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  const home = await (await board.request("/")).text();
  assert.ok(home.includes('<link rel="icon" href="/favicon.svg" type="image/svg+xml">'));
  const robots = await board.request("/robots.txt");
  assert.equal(robots.status, 200);
  assert.equal(robots.headers.get("content-type"), "text/plain; charset=utf-8");
  const text = await robots.text();
  assert.match(text, /^User-agent: \*$/m);
  for (const path of ["/v1/", "/mod/", "/mcp", "/oauth/", "/b/"]) {
    assert.ok(text.includes(`Disallow: ${path}`), path);
  }
  assert.ok(!/^Disallow: \/articles/m.test(text), "articles stay crawlable");
  // An article's views with the reply form open are not pages of their own.
  assert.match(text, /^Disallow: \/\*\?reply_to=$/m);
  assert.match(text, /^Disallow: \/\*&reply_to=$/m);
});

/** Every `id` of a page. */
function ids(html: string): Set<string> {
  return new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => decode(m[1])));
}

Deno.test("docs: every #fragment link on every docs page resolves to an id; every page within its weight", async (t) => {
  await using board = await testBoard();
  const index = await (await board.request("/docs")).text();
  const pages = ["/docs", ...[...index.matchAll(/href="(\/docs\/[a-z0-9_-]+)"/g)].map((m) => m[1])];
  assert.ok(pages.length > 10);
  const cache = new Map<string, Set<string>>();
  const idsOf = async (path: string) => {
    if (!cache.has(path)) {
      const res = await board.request(path, { headers: { accept: "text/html" } });
      assert.equal(res.status, 200, path);
      cache.set(path, ids(await res.text()));
    }
    return cache.get(path)!;
  };
  let checked = 0;
  for (const path of pages) {
    await t.step(path, async () => {
      const html = await (await board.request(path)).text();
      // Every docs page, not only those the browser tests open, stays within its weight.
      const bytes = new TextEncoder().encode(html).length;
      assert.ok(bytes < DOCS_PAGE_BUDGET, `${path}: ${bytes} bytes`);
      for (const [, raw] of html.matchAll(/href="([^"]*#[^"]*)"/g)) {
        const href = decode(raw);
        const url = new URL(href, `http://board.test${path}`);
        if (url.origin !== "http://board.test") continue;
        const target = url.pathname.replace(/\.md$/, "");
        const fragment = decodeURIComponent(url.hash.slice(1));
        assert.ok((await idsOf(target)).has(fragment), `${path}: ${href} is a dead link`);
        checked++;
      }
    });
  }
  assert.ok(checked > 100, `${checked} fragment links checked`);
  const articles = await idsOf("/docs/articles");
  assert.ok(articles.has("due-transitions-in-the-stream"));
});

Deno.test("docs: headings link to themselves, contents after the title, code and tables focusable", async () => {
  await using board = await testBoard();
  const html = await (await board.request("/docs/articles")).text();
  assert.match(
    html,
    /<h1 id="articles-for-human-readers">[\s\S]*?<\/h1><nav class="toc" aria-label="On this page">/,
  );
  assert.ok(
    html.includes(
      '<h3 id="due-transitions-in-the-stream"><a class="self" href="#due-transitions-in-the-stream">Due transitions in the stream</a></h3>',
    ),
  );
  const toc = html.match(/<nav class="toc"[\s\S]*?<\/nav>/)![0];
  assert.ok(toc.includes('<a href="#due-transitions-in-the-stream">'));
  assert.ok(!toc.includes("`"), "no raw backticks in the contents");
  // A code span in a heading is code in the heading, plain text in the contents.
  assert.ok(html.includes("<code>POST /v1/articles/preview</code></a></h3>"));
  assert.ok(toc.includes('<a href="#post-v1articlespreview">POST /v1/articles/preview</a>'));
  const pres = [...html.matchAll(/<pre\b([^>]*)>/g)].map((m) => m[1]);
  const tables = [
    ...html.matchAll(/<div class="table-wrap"([^>]*)><p class="scroll-hint">[^<]*<\/p><table>/g),
  ].map((m) => m[1]);
  assert.ok(pres.length > 3 && tables.length > 3);
  assert.equal(html.match(/<table>/g)!.length, tables.length, "every table is wrapped");
  const labels = new Set<string>();
  for (const attrs of [...pres, ...tables]) {
    assert.match(attrs, /tabindex="0" role="region" aria-label="[^"]+"/);
    labels.add(attrs.match(/aria-label="([^"]+)"/)![1]);
  }
  assert.equal(labels.size, pres.length + tables.length, "each region has its own label");
});

Deno.test("docs index: guides first, internals apart, titles without backticks", async () => {
  await using board = await testBoard();
  const html = await (await board.request("/docs")).text();
  const index = html.match(/<nav class="doc-index"[\s\S]*?<\/nav>/)![0];
  const sections = [...index.matchAll(/<h2>([^<]+)<\/h2><ul>([\s\S]*?)<\/ul>/g)].map((m) => ({
    title: m[1],
    names: [...m[2].matchAll(/href="\/docs\/([a-z0-9_-]+)"/g)].map((x) => x[1]),
  }));
  assert.deepEqual(sections.map((s) => s.title), ["Guides", "Running the board", "Internals"]);
  for (const s of sections) {
    const group = DOC_GROUPS.find((g) => g.title === s.title)!;
    for (const name of s.names.filter((n) => (group.names as readonly string[]).includes(n))) {
      assert.equal(s.names.indexOf(name), (group.names as readonly string[]).indexOf(name));
    }
  }
  assert.ok(sections[2].names.includes("benchmarks") && sections[2].names.includes("reliability"));
  assert.deepEqual(
    sections[2].names.slice(0, 3),
    ["architecture", "read_plans", "decisions"],
    "maintainers' docs",
  );
  assert.ok(!sections[0].names.includes("benchmarks"));
  assert.ok(sections[0].names.includes("api") && sections[0].names.includes("skill"));
  assert.ok(!index.includes("`"), "no raw backticks in link titles");
  assert.ok(
    index.includes(
      '<a href="/docs/anonymous_board">The anonymous board /b (&quot;Unsorted&quot;)</a>',
    ),
  );
  // A document without a level-1 heading is named after its file.
  assert.ok(index.includes('<a href="/docs/benchmark_soak">Benchmark soak</a>'));
  // Each document appears once.
  const all = sections.flatMap((s) => s.names);
  assert.equal(new Set(all).size, all.length);
});

Deno.test("no page carries a JSX key attribute; code blocks are focusable regions", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board, {
    blocks: [
      { type: "paragraph", text: LONG },
      { type: "list", items: ["The first item of the list", "The second item of the list"] },
      { type: "code", text: "const x = 1;" },
    ],
  });
  await comment(board, a.b.key, a.revision, {
    blocks: [
      { type: "paragraph", text: "I read the whole article and the argument is clear." },
      { type: "list", ordered: true, items: ["One point made well", "Another point made well"] },
    ],
  });
  for (const path of ["/", "/articles", `/articles/${a.id}`, "/docs", "/docs/articles", "/nope"]) {
    const html = await (await board.request(path, { headers: { accept: BROWSER_ACCEPT } })).text();
    const keyed = tagsWithAttributes(html).filter((x) => x.attrs.includes("key"));
    assert.deepEqual(keyed, [], path);
  }
  const html = await (await board.request(`/articles/${a.id}`)).text();
  assert.ok(html.includes('<li dir="auto">The first item of the list</li>'));
  assert.ok(html.includes('<li dir="auto">One point made well</li>'));
  assert.ok(
    html.includes(
      '<pre tabindex="0" role="region" aria-label="Code"><code>const x = 1;</code></pre>',
    ),
  );
  const home = await (await board.request("/")).text();
  assert.match(
    home,
    /<pre tabindex="0" role="region" aria-label="Registering an agent with curl">/,
  );
});

Deno.test("excerpts are cut from the paragraphs, never running a heading into a sentence", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board, {
    title: "Polling without push",
    blocks: [
      { type: "paragraph", text: "Polling too often is a nuisance." },
      { type: "heading", text: "The polling loop", level: 2 },
      { type: "paragraph", text: "The board has no push." },
      { type: "code", text: "while true; do curl $B/v1/activity; sleep 60; done" },
    ],
  });
  const want = "Polling too often is a nuisance. The board has no push.";
  for (const path of ["/", "/articles"]) {
    const html = await (await board.request(path)).text();
    const text = decode(html.match(/<p class="excerpt" dir="auto">([^<]*)<\/p>/)![1]);
    assert.equal(text, want, path);
  }
  const page = await (await board.request(`/articles/${a.id}`)).text();
  assert.ok(page.includes(`<meta name="description" content="${want}">`));
  const feed = await (await board.request("/articles.atom")).text();
  assert.ok(feed.includes(`<summary type="text">${want}</summary>`), feed);
  // An article without paragraphs is excerpted from its quotes and lists.
  assert.equal(
    excerptSource([
      { type: "heading", text: "Notes", level: 2 },
      { type: "list", ordered: false, items: ["One point.", "Another."] },
    ]),
    "One point.\nAnother.",
  );
});

Deno.test("docs index: its own page; the API reference's old anchors lead to it", async () => {
  await using board = await testBoard();
  const index = await (await board.request("/docs")).text();
  const api = await (await board.request("/docs/api")).text();
  assert.ok(index.length < api.length / 2, `index ${index.length} bytes, API ${api.length}`);
  assert.ok(!index.includes('<nav class="toc"'), "no document rendered on the index");
  // Every heading of the API reference (once part of /docs) is an entry of the index under
  // the same id, linking to the heading on /docs/api.
  const headings = [...api.matchAll(/<h([123]) id="([^"]+)">/g)].map((m) => m[2]);
  assert.ok(headings.length > 15);
  for (const id of headings) {
    const entry = index.match(new RegExp(`<li id="${id}"[^>]*><a href="([^"]+)">`));
    assert.ok(entry, `/docs#${id} is gone`);
    const href = entry[1];
    assert.equal(href, href.includes("#") ? `/docs/api#${id}` : "/docs/api");
  }
  // Error objects link to /docs#error-<code>: still here.
  assert.ok(index.includes('<div id="error-not-found">'));
});

Deno.test("lines of facts keep a separator between their parts for a reader without the stylesheet", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board, { title: "Facts in a line" });
  await comment(board, a.b.key, a.revision, {
    blocks: [{ type: "paragraph", text: "A comment that gives the article a count of one." }],
  });
  // Read as a text browser or a reader view shows it: tags gone, no generated content.
  const lines = (html: string) =>
    [...html.matchAll(/<p class="meta line[^"]*">([\s\S]*?)<\/p>/g)].map((m) =>
      decode(m[1].replace(/<[^>]+>/g, "")).replace(/\s+/g, " ").trim()
    );
  const date = /\d{1,2} [A-Z][a-z]+ \d{4}/.source;
  for (const path of ["/", "/articles"]) {
    const card = lines(await (await board.request(path)).text());
    assert.equal(card.length, 1, path);
    // Not "…2026" and "1 comment" run together as "20261 comment".
    assert.match(card[0], new RegExp(`^by ${a.author.name} agent · ${date} · 1 comment$`), card[0]);
  }
  const page = lines(await (await board.request(`/articles/${a.id}`)).text());
  assert.match(page[0], new RegExp(`^by ${a.author.name} agent · published ${date}$`));
  assert.match(page[1], new RegExp(`^${a.b.name} agent · ${date}, \\d\\d:\\d\\d UTC$`));
  // With the stylesheet, the separator is its generated "·" (which wraps cleanly) alone.
  const css = await Deno.readTextFile(new URL("../routes/web/site.css", import.meta.url));
  assert.match(css, /\.meta\.line \.sep \{\s*display: none;\s*\}/);
});

Deno.test("docs: links between documents lead to each page's one address, never its .md twin", async () => {
  await using board = await testBoard();
  const index = await (await board.request("/docs")).text();
  const pages = [...index.matchAll(/href="(\/docs\/[a-z0-9_-]+)"/g)].map((m) => m[1]);
  const twins: string[] = [];
  let between = 0;
  for (const path of new Set(pages)) {
    const html = await (await board.request(path)).text();
    for (const [, href] of html.matchAll(/href="([^"]*)"/g)) {
      const url = new URL(decode(href), `http://board.test${path}`);
      if (url.origin !== "http://board.test" || !url.pathname.startsWith("/docs/")) continue;
      if (url.pathname.endsWith(".md")) twins.push(`${path}: ${href}`);
      else between++;
    }
  }
  // `/docs/api.md` answers too (an old link), but the site itself names one address per page.
  assert.deepEqual(twins, []);
  assert.ok(between > 50, `${between} links between documents`);
});

Deno.test("docs/website.md states the size of the largest docs page as it is", async () => {
  await using board = await testBoard();
  const doc = await Deno.readTextFile(new URL("../docs/website.md", import.meta.url));
  const claim = doc.replace(/\s+/g, " ").match(
    /`\/docs\/(\w+)`, the largest, is about (\d+) KB and travels as about (\d+) KB compressed/,
  );
  assert.ok(claim, "the claim is where it was");
  const [, name, plain, compressed] = claim;
  const size = async (path: string, encoding?: string) => {
    const res = await board.request(
      path,
      encoding ? { headers: { "accept-encoding": encoding } } : {},
    );
    return (await res.arrayBuffer()).byteLength;
  };
  const index = await (await board.request("/docs")).text();
  const pages = [...new Set([...index.matchAll(/href="(\/docs\/[a-z0-9_-]+)"/g)].map((m) => m[1]))];
  const sizes = new Map<string, number>();
  for (const path of pages) sizes.set(path, await size(path));
  const largest = [...sizes].sort((a, b) => b[1] - a[1])[0];
  assert.equal(largest[0], `/docs/${name}`);
  // "About": within a tenth of what the page weighs now.
  const near = (said: number, bytes: number) => Math.abs(said * 1024 - bytes) <= bytes / 10;
  assert.ok(near(Number(plain), largest[1]), `${plain} KB said, ${largest[1]} bytes served`);
  const br = await size(largest[0], "br");
  assert.ok(near(Number(compressed), br), `${compressed} KB said, ${br} bytes compressed`);
});
