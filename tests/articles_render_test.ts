/**
 * One renderer for articles: the preview (`POST /v1/articles/preview`), `article.html` of
 * the public API and the website's article page render the body with the same components,
 * so the preview is the markup humans get. Only where a figure's image and full-size page
 * are differs: a `data:` URL of the sanitised SVG in the API fragments, the figure URLs on
 * the site, and no full-size page for a preview (there is no page yet).
 */
import assert from "node:assert/strict";
import { marked } from "marked";
import { jsonInit, register, type TestBoard, testBoard } from "./helpers.ts";
import {
  articleBody,
  comment,
  commentBody,
  ENGLISH_TEXT,
  publicGet,
  SIMPLE_SVG,
  submit,
  uploadSvg,
  vote,
} from "./article_helpers.ts";
import { Guest, publishedArticle } from "./website_helpers.ts";

const TEXT_BLOCKS = [
  { type: "heading", text: 'Why <checks> & "quotes" matter', level: 2 },
  { type: "paragraph", text: `${ENGLISH_TEXT}\nA second line with <b>markup</b> & 'quotes'.` },
  { type: "heading", text: "Details", level: 3 },
  { type: "quote", text: "Quoted <i>text</i>", cite: "Someone & co" },
  { type: "list", items: ["first & foremost", "<second>"], ordered: true },
  { type: "list", items: ["one", "two"], ordered: false },
  { type: "code", text: "if (a < b && c > d) return '<x>';", language: "ts" },
];

/** The inside of the first `<div class="…">` of `html` (article and comment bodies hold no div). */
function divOf(html: string, cls: string): string {
  const m = html.match(new RegExp(`<div class="${cls}">([\\s\\S]*?)</div>`));
  assert.ok(m, `no <div class="${cls}"> in ${html.slice(0, 2000)}`);
  return m[1];
}

/** The text source `POST /v1/articles/preview` answers for `body` (a 200 asserted). */
async function previewSource(board: TestBoard, key: string, body: unknown): Promise<string> {
  const res = await board.request("/v1/articles/preview", jsonInit("POST", body, key));
  const out = await res.json();
  assert.equal(res.status, 200, JSON.stringify(out));
  return out.rendered.text;
}

Deno.test("preview, API and website render an article body with the same markup", async (t) => {
  await using board = await testBoard();
  const author = await register(board);
  const asset = await uploadSvg(board, author.key, SIMPLE_SVG);
  const blocks = [
    ...TEXT_BLOCKS,
    { type: "svg", asset_id: asset, alt: "A blue <square>", caption: "Figure & one" },
  ];
  const title = "One <renderer> for all";
  const previewRes = await board.request(
    "/v1/articles/preview",
    jsonInit("POST", articleBody({ title, blocks }), author.key),
  );
  assert.equal(previewRes.status, 200);
  const preview: string = (await previewRes.json()).rendered.html;
  const a = { id: "", revision: "" };
  {
    const s = await submit(board, author.key, { title, blocks });
    for (const voter of [await register(board), await register(board)]) {
      await vote(board, voter.key, s.post_id, s.revision_id);
    }
    [a.id, a.revision] = [s.post_id, s.revision_id];
  }
  const api = await publicGet(board, `/api/articles/posts/${a.id}`);
  assert.equal(api.status, 200);
  const fragment: string = api.body.article.html;
  const page = (await new Guest(board).get(`/articles/${a.id}`)).html;

  const site = divOf(page, "article-body");
  const fromApi = divOf(fragment, "article-body");
  const fromPreview = divOf(preview, "article-body");

  await t.step("text blocks: the same bytes in all three", () => {
    const [siteText, apiText, previewText] = [site, fromApi, fromPreview].map((h) =>
      h.slice(0, h.indexOf("<figure"))
    );
    assert.ok(siteText.includes("&lt;b&gt;markup&lt;/b&gt;"), siteText);
    assert.equal(apiText, siteText);
    assert.equal(previewText, siteText);
  });

  await t.step("figures differ only in where the image and its full-size page are", () => {
    const src = fromApi.match(/<img src="(data:image\/svg\+xml;base64,[^"]+)"/)?.[1];
    assert.ok(src, fromApi);
    assert.ok(fromPreview.includes(`<img src="${src}"`), "the preview shows the same image");
    const view = `/articles/${a.id}/figures/${asset}/view`;
    const normalised = fromApi
      .replace(src, `/articles/${a.id}/figures/${asset}.svg`)
      .replaceAll(`${board.deps.config.baseUrl}${view}`, view);
    // The site also gives the image its intrinsic size, read from the stored figure (without
    // it, the compiled template leaves the two attributes' separating spaces).
    assert.match(site, / width="10" height="10"/);
    assert.equal(normalised, site.replace(/ width="\d+" height="\d+"/, "  "));
    // A preview has no full-size page yet: no link around the image, no "Full size" link.
    assert.ok(!fromPreview.includes("<a "), fromPreview);
    assert.equal(
      fromPreview.replace(/<a [^>]*>|<\/a>|Full size/g, ""),
      fromApi.replace(/<a [^>]*>|<\/a>|Full size/g, ""),
    );
  });

  await t.step("the title is the page's text, escaped the same way", () => {
    assert.match(fragment, /<h1 dir="auto">One &lt;renderer&gt; for all<\/h1>/);
    assert.match(preview, /<h1 dir="auto">One &lt;renderer&gt; for all<\/h1>/);
    assert.match(page, /<h1 id="article-title" dir="auto">One &lt;renderer&gt; for all<\/h1>/);
  });
});

Deno.test("a comment preview renders the blocks as the article page shows the comment", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const commenter = await register(board);
  const blocks = [
    { type: "paragraph", text: `${ENGLISH_TEXT} With <b>markup</b> & 'quotes'.` },
    { type: "quote", text: "Quoted <i>text</i>", cite: "Someone & co" },
    { type: "list", items: ["first & foremost", "<second>"], ordered: false },
  ];
  const res = await board.request(
    "/v1/articles/preview",
    jsonInit("POST", commentBody(a.revision, { blocks }), commenter.key),
  );
  const out = await res.json();
  assert.equal(res.status, 200, JSON.stringify(out));
  await comment(board, commenter.key, a.revision, { blocks });
  const page = (await new Guest(board).get(`/articles/${a.id}`)).html;
  assert.equal(divOf(out.rendered.html, "body blocks"), divOf(page, "body blocks"));
  assert.match(out.rendered.html, /&lt;b&gt;markup&lt;\/b&gt;/);
});

Deno.test("the text source fences a code block with more backticks than the code holds", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const code = "A fence inside:\n```\nstill code\n```\nand ```` four.";
  const text = await previewSource(
    board,
    a.key,
    articleBody({
      title: "Code with fences",
      blocks: [
        { type: "paragraph", text: ENGLISH_TEXT },
        { type: "code", text: code, language: "markdown" },
        { type: "code", text: "plain" },
      ],
    }),
  );
  assert.equal(
    text,
    `# Code with fences\n\n${ENGLISH_TEXT}\n\n\`\`\`\`\`markdown\n${code}\n\`\`\`\`\`\n\n\`\`\`\nplain\n\`\`\`\n`,
  );
});

Deno.test("the text source is Markdown that a renderer shows as written: no markup from the text", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const tricky = [
    "# not a heading, and 1. not a list",
    "1. Still not a list, nor\n- this, nor\n> this quote, nor\n+ this, nor\n=== that rule",
    "A [link](http://example.com) and ![an image](http://example.com/x.png) stay text.",
    "So do <b>tags</b>, &amp; entities, `code`, *stars*, _under_ and ~~strikes~~ | pipes.",
    "snake_case_names keep their underscores; a back\\slash stays one.",
    "Bare addresses stay text: https://e.example/?a=1&b=2*x~y, www.example.com and ftp://f.example.",
  ];
  const blocks = [
    { type: "paragraph", text: ENGLISH_TEXT },
    ...tricky.map((text) => ({ type: "paragraph", text })),
    { type: "heading", text: "Issue number #", level: 2 },
    { type: "list", items: ["an item over\ntwo lines", "*not emphasis*"], ordered: true },
    { type: "quote", text: "# quoted, not a heading", cite: "[not a link](x)" },
  ];
  const html = await marked.parse(
    await previewSource(
      board,
      a.key,
      articleBody({ title: "Text in <angle> brackets & #tags #", blocks }),
    ),
  );
  // The only markup is what the blocks make: one h1, one h2, one list, one quote, paragraphs
  // (no link, not even of a bare address).
  const tags = [...html.matchAll(/<([a-z0-9]+)[\s>]/g)].map((m) => m[1]);
  assert.deepEqual([...new Set(tags)].sort(), ["blockquote", "h1", "h2", "li", "ol", "p"], html);
  assert.equal(tags.filter((t) => t === "li").length, 2, html);
  const shown = (fragment: string) =>
    fragment.replace(/<[^>]+>/g, "").replaceAll("&lt;", "<").replaceAll("&gt;", ">")
      .replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&amp;", "&")
      .replace(/\s+/g, " ");
  const text = shown(html);
  for (const t of tricky) assert.ok(text.includes(t.replace(/\s+/g, " ")), `${t}\nin\n${text}`);
  assert.match(html, /<h1>Text in &lt;angle&gt; brackets &amp; #tags #<\/h1>/);
  assert.match(html, /<h2>Issue number #<\/h2>/);
  assert.ok(text.includes("an item over two lines") && text.includes("*not emphasis*"), text);
  assert.ok(text.includes("# quoted, not a heading") && text.includes("[not a link](x)"), text);
});

Deno.test("the text source makes no code block, address link or line break from a block's spacing", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const blocks = [
    { type: "paragraph", text: ENGLISH_TEXT },
    {
      type: "paragraph",
      text: "    four spaces are not code,\n\ta tab is not,\n\n    nor after a blank line",
    },
    {
      type: "paragraph",
      text: "Write to alice@example.com or mailto:bob@example.com, one  \nline",
    },
    { type: "heading", text: "A heading\n\n    with no code under it", level: 2 },
    { type: "quote", text: "quoted\r\n\r\n     still quoted", cite: "a cite\n\n    in the quote" },
    { type: "list", items: ["     an item", "another\n\n        item"], ordered: false },
  ];
  const html = await marked.parse(await previewSource(board, a.key, articleBody({ blocks })));
  const tags = [...html.matchAll(/<([a-z0-9]+)[\s>]/g)].map((m) => m[1]);
  assert.deepEqual([...new Set(tags)].sort(), ["blockquote", "h1", "h2", "li", "p", "ul"], html);
  assert.equal(html.match(/<blockquote>/g)?.length, 1, html);
  for (const shown of ["alice@example.com", "mailto:bob@example.com", "with no code under it"]) {
    assert.ok(html.includes(shown), `${shown}\nin\n${html}`);
  }
  assert.match(html, /<h2>A heading with no code under it<\/h2>/);
});

Deno.test("the text source keeps a figure whose alt text holds a blank line an image", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const assetId = await uploadSvg(board, a.key, SIMPLE_SVG);
  const blocks = [
    { type: "paragraph", text: ENGLISH_TEXT },
    { type: "svg", asset_id: assetId, alt: "A square\n\n    drawn in blue" },
  ];
  const html = await marked.parse(await previewSource(board, a.key, articleBody({ blocks })));
  assert.match(html, /<img src="svg:[0-9a-f-]+" alt="A square drawn in blue">/, html);
  assert.doesNotMatch(html, /<pre>|<code>/, html);
});
