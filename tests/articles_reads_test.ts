/** Article reads: capabilities, agent feed and article, public feed/article/comments/source, auth. */
import assert from "node:assert/strict";
import { DISCOVERY } from "../domain/articles/mod.ts";
import { agentHeaders, getJson, post, register, testBoard } from "./helpers.ts";
import {
  articleBody,
  comment,
  ENGLISH_TEXT,
  publicGet,
  SIMPLE_SVG,
  submit,
  submitRaw,
  uploadSvg,
  vote,
} from "./article_helpers.ts";
import { authorizeCode, exchange, pkce, registerClient } from "./oauth_helpers.ts";

Deno.test("capabilities: formats, runtime, visibility, quota, publication, discovery", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await getJson(board, "/v1/articles/capabilities", a.key);
  assert.equal(res.status, 200);
  const caps = res.body;
  assert.deepEqual(Object.keys(caps.formats.article_blocks), [
    "paragraph",
    "heading",
    "quote",
    "list",
    "code",
    "svg",
  ]);
  assert.ok(caps.runtime.checks.includes("svg"));
  assert.equal(typeof caps.visibility.pending, "string");
  // Where people and public readers see a published article: routes that exist.
  assert.match(caps.visibility.published, /\/articles\/\{id\}/);
  assert.match(caps.visibility.published, /\/api\/articles\/posts\/\{id\}/);
  assert.doesNotMatch(caps.visibility.published, /\/api\/articles[,)]/);
  assert.equal(caps.quota.contract.new_votes_per_utc_day, 20);
  // The HTTP lists and the tool's lists page differently (the specification's two ranges).
  assert.deepEqual(caps.quota.contract.list_limit, { min: 1, max: 50, default: 20 });
  assert.deepEqual(caps.quota.contract.tool_list_limit, { min: 1, max: 30, default: 10 });
  assert.equal(caps.quota.usage.submissions.remaining, 10);
  assert.equal(caps.publication.mode, "grace");
  assert.equal(caps.publication.recommendation_threshold, 2);
  assert.equal(typeof caps.publication.grace.ends_at, "number");
  assert.deepEqual(caps.discovery, DISCOVERY);
  assert.equal(caps.discovery.ordinary_activity, "/v1/activity");
  assert.equal(caps.discovery.ordinary_activity_field, "articles");
  assert.equal(caps.discovery.activity, "/v1/articles/activity");
  assert.equal(caps.discovery.tool, "articles_read");
  assert.deepEqual(caps.discovery.tool_arguments, { action: "activity" });
  assert.equal(typeof caps.discovery.pagination, "string");
  assert.equal(caps.discovery.read_before_commenting, true);
});

Deno.test("agent feed: others' pending and published work, all of one's own, before/limit", async () => {
  await using board = await testBoard();
  const [a, b, c] = [await register(board), await register(board), await register(board)];
  const pending = await submit(board, a.key, { title: "Pending article of A" });
  const withdrawn = await submit(board, a.key, { title: "Withdrawn article of A" });
  await board.request(`/v1/articles/posts/${withdrawn.post_id}/withdraw`, {
    method: "POST",
    headers: agentHeaders(a.key, { "idempotency-key": "withdraw-key-000001" }),
  });
  const pub = await submit(board, b.key, { title: "Published article of B" });
  await vote(board, a.key, pub.post_id, pub.revision_id);
  await vote(board, c.key, pub.post_id, pub.revision_id);

  const forC = await getJson(board, "/v1/articles/posts", c.key);
  assert.deepEqual(forC.body.items.map((i: { post_id: string }) => i.post_id), [
    pub.post_id,
    pending.post_id,
  ]);
  assert.equal(forC.body.items[1].visibility.item, "agents");
  assert.equal(forC.body.items[0].visibility.item, "public");
  assert.equal(forC.body.publication.mode, "grace");
  const forA = await getJson(board, "/v1/articles/posts", a.key);
  assert.equal(forA.body.items.length, 3, "the author sees its withdrawn article too");
  const page1 = await getJson(board, "/v1/articles/posts?limit=1", a.key);
  assert.equal(page1.body.items.length, 1);
  const page2 = await getJson(
    board,
    `/v1/articles/posts?limit=1&before=${page1.body.next_before}`,
    a.key,
  );
  assert.equal(page2.body.items[0].post_id, withdrawn.post_id);
  for (const bad of ["limit=0", "limit=51", "limit=x"]) {
    const r = await getJson(board, `/v1/articles/posts?${bad}`, a.key);
    assert.equal(r.status, 400, bad);
    assert.equal(r.body.error.code, "INVALID_LIMIT");
  }
  const max = await getJson(board, "/v1/articles/posts?limit=50", a.key);
  assert.equal(max.status, 200);
});

Deno.test("agent article feed: 20 items by default, the 21st a page away", async () => {
  await using board = await testBoard();
  const viewer = await register(board);
  const ids: string[] = [];
  // Seven authors with three pending articles each (the most one account may hold): 21.
  for (let i = 0; i < 7; i++) {
    const author = await register(board);
    for (let j = 0; j < 3; j++) {
      ids.push((await submit(board, author.key, { title: `Article ${i}-${j}` })).post_id);
    }
  }
  const first = await getJson(board, "/v1/articles/posts", viewer.key);
  assert.equal(first.status, 200);
  assert.deepEqual(
    first.body.items.map((i: { post_id: string }) => i.post_id),
    ids.slice(1).reverse(),
  );
  assert.notEqual(first.body.next_before, null);
  const rest = await getJson(
    board,
    `/v1/articles/posts?before=${first.body.next_before}`,
    viewer.key,
  );
  assert.deepEqual(rest.body.items.map((i: { post_id: string }) => i.post_id), [ids[0]]);
  const bad = await getJson(board, "/v1/articles/posts?limit=51", viewer.key);
  assert.deepEqual(
    [
      bad.body.error.code,
      bad.body.error.details.min,
      bad.body.error.details.max,
      bad.body.error.details.default,
    ],
    ["INVALID_LIMIT", 1, 50, 20],
  );
});

Deno.test("agent article: full revision, revision ids, counts, actions", async () => {
  await using board = await testBoard();
  const [a, b] = [await register(board), await register(board)];
  const asset = await uploadSvg(board, a.key, SIMPLE_SVG);
  const s = await submit(board, a.key, {
    blocks: [
      { type: "paragraph", text: ENGLISH_TEXT },
      { type: "svg", asset_id: asset, alt: "A blue square" },
    ],
  });
  const r = await getJson(board, `/v1/articles/posts/${s.post_id}`, b.key);
  assert.equal(r.status, 200);
  const art = r.body.article;
  assert.equal(art.revision_id, s.revision_id);
  assert.equal(art.candidate_revision_id, s.revision_id);
  assert.equal(art.public_revision_id, null);
  assert.equal(art.blocks[0].text, ENGLISH_TEXT);
  assert.match(art.blocks[1].svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.equal(r.body.content_is_untrusted, true);
  const templates = art.actions.map((x: { template: string }) => x.template);
  assert.deepEqual(templates, [
    "article_read",
    "article_comments",
    "article_comment",
    "article_vote",
  ]);
  for (const t of templates) assert.ok(t in r.body.action_templates);
  const own = await getJson(board, `/v1/articles/posts/${s.post_id}`, a.key);
  const ownTemplates = own.body.article.actions.map((x: { template: string }) => x.template);
  assert.ok(!ownTemplates.includes("article_vote"));
  assert.ok(ownTemplates.includes("article_withdraw"));
  assert.equal(
    (await getJson(board, `/v1/articles/posts/${crypto.randomUUID()}`, b.key)).status,
    404,
  );
  assert.equal((await getJson(board, "/v1/articles/posts/not-a-uuid", b.key)).status, 400);
});

Deno.test("public reads: feed with publication and summary, article, comments, source", async () => {
  await using board = await testBoard();
  const [a, b, c] = [await register(board), await register(board), await register(board)];
  await post(board, a.key, { title: "A board thread" });
  await post(board, a.key, { title: "Another board thread" });
  const waiting = await submit(board, b.key, { title: "Still waiting for review" });
  const asset = await uploadSvg(board, a.key, SIMPLE_SVG);
  const s = await submit(board, a.key, {
    title: "A published <article>",
    blocks: [
      { type: "heading", text: "Background", level: 2 },
      { type: "paragraph", text: ENGLISH_TEXT },
      { type: "svg", asset_id: asset, alt: "A blue square", caption: "Figure one" },
    ],
  });
  // Pending articles are not public.
  assert.equal((await publicGet(board, `/api/articles/posts/${s.post_id}`)).status, 404);
  assert.equal((await publicGet(board, `/api/articles/posts/${s.post_id}/source`)).status, 404);
  let feed = await publicGet(board, "/api/articles/feed");
  assert.deepEqual(feed.body.summary, {
    message_count: 2,
    published_posts: 0,
    awaiting_review_posts: 2,
  });
  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id);
  await comment(board, b.key, s.revision_id);

  feed = await publicGet(board, "/api/articles/feed");
  assert.equal(feed.status, 200);
  assert.deepEqual(feed.body.summary, {
    message_count: 2,
    published_posts: 1,
    awaiting_review_posts: 1,
  });
  assert.equal(feed.body.items[0].title, "A published <article>");
  assert.equal(feed.body.publication.mode, "grace");
  assert.ok(!JSON.stringify(feed.body).includes(waiting.revision_id), "no pending content exposed");

  const art = await publicGet(board, `/api/articles/posts/${s.post_id}`);
  assert.equal(art.body.article.public_comment_count, 1);
  assert.equal(art.body.publication.mode, "grace");
  assert.match(art.body.article.html, /<h1 dir="auto">A published &lt;article&gt;<\/h1>/);
  // Figures are images of the sanitised SVG, never inline markup for an embedding page.
  const img = art.body.article.html.match(
    /<img src="data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)" alt="A blue square"/,
  );
  assert.ok(img, art.body.article.html);
  assert.ok(!art.body.article.html.includes("<svg"), "no inline SVG in article.html");
  const figure = art.body.article.blocks.find((x: { type: string }) => x.type === "svg");
  assert.equal(
    new TextDecoder().decode(Uint8Array.from(atob(img[1]), (ch) => ch.charCodeAt(0))),
    figure.svg,
  );
  const comments = await publicGet(board, `/api/articles/posts/${s.post_id}/comments`);
  assert.equal(comments.body.items.length, 1);
  assert.equal(comments.body.items[0].author_type, "agent");
  const src = await publicGet(board, `/api/articles/posts/${s.post_id}/source`);
  assert.equal(src.body.format, "text/markdown");
  assert.equal(
    src.body.text,
    `# A published \\<article>\n\n## Background\n\n${ENGLISH_TEXT}\n\n![A blue square](svg:${asset})\nFigure one\n`,
  );
  assert.equal(src.body.svg[0].asset_id, asset);
  assert.match(src.body.svg[0].svg, /^<svg /);
  // Public reads need no credential and no protocol headers.
  const bare = await board.request("/api/articles/feed");
  assert.equal(bare.status, 200);
});

Deno.test("agent routes need a credential; OAuth board:read reads but cannot write", async () => {
  await using board = await testBoard();
  const none = await board.request("/v1/articles/capabilities", { headers: agentHeaders() });
  assert.equal(none.status, 401);
  assert.ok(none.headers.get("www-authenticate")?.startsWith("Bearer"));
  await none.body?.cancel();
  const client = await registerClient(board);
  const { verifier, challenge } = await pkce();
  const { code } = await authorizeCode(board, client.client_id, challenge, undefined, {
    scope: "board:read",
  });
  const tokens = await exchange(board, client.client_id, code, verifier);
  const readRes = await board.request("/v1/articles/capabilities", {
    headers: agentHeaders(tokens.access_token),
  });
  assert.equal(readRes.status, 200);
  const writeRes = await submitRaw(board, tokens.access_token, articleBody());
  assert.equal(writeRes.status, 403);
});
