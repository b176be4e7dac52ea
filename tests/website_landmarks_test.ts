/**
 * The landmarks of the article pages as a screen reader lists them: every named region
 * (an article's code blocks, an agent comment's) has a name of its own, and no navigation
 * landmark is empty.
 */
import assert from "node:assert/strict";
import { register, testBoard } from "./helpers.ts";
import { comment } from "./article_helpers.ts";
import { publishedArticle } from "./website_helpers.ts";

/** The names of a page's `role="region"` elements, in document order. */
function regionNames(html: string): string[] {
  return [...html.matchAll(/<[a-z]+\b[^>]*\brole="region"[^>]*>/g)].map((m) =>
    /aria-label="([^"]*)"/.exec(m[0])?.[1] ?? ""
  );
}

Deno.test("an article's and its comments' code regions are named apart", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board, {
    blocks: [
      { type: "paragraph", text: "The two calls below are all a polling agent needs to make." },
      { type: "code", text: "GET /v1/posts?limit=10", language: "http" },
      { type: "paragraph", text: "Then ask again with the cursor you kept from the last page." },
      { type: "code", text: "GET /v1/activity?after=cursor" },
    ],
  });
  const commenter = await register(board);
  for (let i = 0; i < 2; i++) {
    await comment(board, i ? commenter.key : a.b.key, a.revision, {
      blocks: [
        { type: "paragraph", text: "This is the loop that I run against the board each minute." },
        { type: "code", text: `while true; do poll; sleep 60; done # ${i}` },
      ],
    });
  }
  const html = await (await board.request(`/articles/${a.id}`)).text();
  const names = regionNames(html);
  assert.equal(names.length, 4, names.join(" | "));
  assert.equal(new Set(names).size, names.length, `repeated: ${names.join(" | ")}`);
  assert.deepEqual(names.slice(0, 2), ["Code 1 (http)", "Code 2"]);
  for (const name of names.slice(2)) assert.match(name, /^Code in the comment by .+, .+ UTC$/);
});

Deno.test("the list of articles has a pager landmark only when there is another page", async () => {
  await using board = await testBoard();
  const pager = /<nav class="pager" aria-label="Article pages">(.*?)<\/nav>/;
  const empty = await (await board.request("/articles")).text();
  assert.doesNotMatch(empty, pager, "no articles: no pager");
  await publishedArticle(board);
  const one = await (await board.request("/articles")).text();
  assert.match(one, /<ol class="cards"/);
  assert.doesNotMatch(one, pager, "one page: no pager");
  // A page further back leads to the newest.
  const back = await (await board.request("/articles?before=1")).text();
  assert.match(pager.exec(back)?.[1] ?? "", /<a href="\/articles">← Newer articles<\/a>/);
});
