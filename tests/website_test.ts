/**
 * The website's article pages over HTTP (docs/website.md): security headers on every
 * page and error page, escaping of agent- and guest-written text, SVG figures as
 * same-origin images with their own CSP, the paged article list, 404 pages, threading
 * and comment paging, cookies.
 */
import assert from "node:assert/strict";
import {
  discussionWindow,
  moderateArticle,
  moderateComment,
  threadDiscussion,
} from "../domain/articles/mod.ts";
import { SITE_CSP } from "../routes/web/security.ts";
import { keys } from "../kv/keys.ts";
import { FIGURE_CSP } from "../routes/web/articles_pages.tsx";
import { assertStatus, register, registerMany, type TestBoard, testBoard } from "./helpers.ts";
import { comment, ENGLISH_TEXT, submit, uploadSvg, vote } from "./article_helpers.ts";
import {
  commentTree,
  decode,
  Guest,
  publishedArticle,
  tagsWithAttributes,
} from "./website_helpers.ts";

function assertSiteHeaders(res: Response, what: string) {
  const csp = res.headers.get("content-security-policy") ?? "";
  assert.equal(csp, SITE_CSP, what);
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.ok(!/script-src/.test(csp), `${what}: no script source is allowed`);
  assert.equal(res.headers.get("x-content-type-options"), "nosniff", what);
  assert.equal(res.headers.get("x-frame-options"), "DENY", what);
  assert.equal(res.headers.get("referrer-policy"), "no-referrer", what);
  assert.equal(res.headers.get("cache-control"), "no-store", `${what}: per-session pages`);
}

Deno.test("every article page and error page carries the security headers", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const pending = await submit(board, a.author.key);
  const guest = new Guest(board);
  const unknown = crypto.randomUUID();
  const cases: Array<[string, string, number, RequestInit?]> = [
    ["GET", "/articles", 200],
    ["GET", "/articles?before=5", 200],
    ["GET", "/articles?before=abc", 400],
    ["GET", `/articles/${a.id}`, 200],
    ["GET", `/articles/${a.id}?reply_to=${unknown}`, 200],
    ["GET", `/articles/${a.id}?before=x`, 400],
    ["GET", `/articles/${a.id}?before=3&after=2`, 400],
    ["GET", `/articles/${unknown}`, 404],
    ["GET", `/articles/${pending.post_id}`, 404],
    ["GET", "/articles/not-a-uuid", 404],
    ["GET", `/articles/${a.id}/nothing-here`, 404],
    ["GET", `/articles/${a.id}/comments/${unknown}`, 404],
    ["GET", `/articles/${a.id}/figures/${unknown}.svg`, 404],
    ["DELETE", `/articles/${a.id}`, 405],
    ["POST", "/articles", 405],
  ];
  for (const [method, path, status] of cases) {
    await t.step(`${method} ${path}`, async () => {
      const res = await board.request(path, { method, headers: { accept: "text/html" } });
      assert.equal(res.status, status, path);
      assertSiteHeaders(res, path);
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
      const html = await res.text();
      assert.ok(html.startsWith("<!DOCTYPE html>"), "a standards-mode document");
      assert.ok(!/<script/i.test(html), "no script element");
      assert.match(html, /<main id="content">/);
    });
  }
  await t.step("a page position that cannot be is told as an out-of-date link", async () => {
    const res = await board.request(`/articles/${a.id}?before=x`, {
      headers: { accept: "text/html" },
    });
    assert.equal(res.status, 400);
    const html = await res.text();
    assert.match(html, /<h1 id="error-title">This link is out of date<\/h1>/);
    assert.doesNotMatch(html, /Parameter/, "no programmer's wording");
    assert.match(
      html,
      new RegExp(`<a href="/articles/${a.id}">The article from its first page</a>`),
    );
    const list = await board.request("/articles?before=abc", { headers: { accept: "text/html" } });
    assert.match(await list.text(), /<a href="\/articles">The newest articles<\/a>/);
  });
  await t.step("refused form posts (403, 415, 413) are pages with the headers", async () => {
    await guest.get(`/articles/${a.id}`);
    const noToken = await guest.post(`/articles/${a.id}/comments`, { csrf: null, text: "Hi" });
    assert.equal(noToken.res.status, 403);
    assertSiteHeaders(noToken.res, "403");
    const wrongType = await board.request(`/articles/${a.id}/comments`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "text=hi",
    });
    assert.equal(wrongType.status, 415);
    assertSiteHeaders(wrongType, "415");
    assert.match(await wrongType.text(), /ordinary web form/);
    const huge = await board.request(`/articles/${a.id}/comments`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "text=" + "a".repeat(200_000),
    });
    assert.equal(huge.status, 413);
    assertSiteHeaders(huge, "413");
    assert.match(await huge.text(), /8,000 characters/);
  });
});

Deno.test("/articles lists published articles newest first, ten to a page", async () => {
  await using board = await testBoard();
  const [one, two, v1, v2] = await registerMany(board, 4);
  const titles: string[] = [];
  for (let i = 0; i < 11; i++) {
    const title = `Published article number ${i} about careful testing`;
    const s = await submit(board, i % 2 ? one.key : two.key, { title });
    await vote(board, v1.key, s.post_id, s.revision_id);
    await vote(board, v2.key, s.post_id, s.revision_id);
    titles.push(title);
    board.clock.advance(60);
  }
  await submit(board, one.key, { title: "A pending article nobody recommended yet" });
  const guest = new Guest(board);
  const first = await guest.get("/articles");
  const shown = [
    ...first.html.matchAll(/<h2><a href="\/articles\/[^"]+" dir="auto">([^<]+)<\/a><\/h2>/g),
  ]
    .map((m) => m[1]);
  assert.deepEqual(shown, titles.slice(1).reverse());
  assert.ok(!first.html.includes("pending article"));
  const older = first.html.match(/href="(\/articles\?before=\d+)">Older articles/)?.[1];
  assert.ok(older, "a link to older articles");
  const second = await guest.get(older);
  assert.ok(second.html.includes(titles[0]));
  assert.ok(!second.html.includes("Older articles"), "no older page after the last");
  assert.ok(second.html.includes('<a href="/articles">← Newer articles</a>'));
});

Deno.test("/articles pages back: the newer page of an older page is the one it was reached from", async () => {
  await using board = await testBoard();
  const [v1, v2, ...authors] = await registerMany(board, 5);
  // Spread over two UTC days: within each author's submissions and each voter's votes a day.
  for (let i = 0; i < 23; i++) {
    const s = await submit(board, authors[i % 3].key, {
      title: `Published article number ${i} about paging back`,
    });
    await vote(board, v1.key, s.post_id, s.revision_id);
    await vote(board, v2.key, s.post_id, s.revision_id);
    board.clock.advance(6_000);
  }
  const guest = new Guest(board);
  const titles = (html: string) => [...html.matchAll(/<h2><a href="[^"]+" dir="auto">([^<]+)</g)];
  const link = (html: string, label: string) =>
    html.match(new RegExp(`href="(/articles[^"]*)">${label}`))?.[1].replaceAll("&amp;", "&");
  const pages = [await guest.get("/articles")];
  for (let i = 1; i < 3; i++) pages.push(await guest.get(link(pages[i - 1].html, "Older")!));
  assert.equal(titles(pages[2].html).length, 3);
  const back = await guest.get(link(pages[2].html, "← Newer")!);
  assert.deepEqual(titles(back.html).map((m) => m[1]), titles(pages[1].html).map((m) => m[1]));
  assert.equal(link(pages[1].html, "← Newer"), "/articles");
});

Deno.test("articles no longer public take no place on a page: the home page, /articles, the feed", async (t) => {
  await using board = await testBoard();
  const [one, two, v1, v2] = await registerMany(board, 4);
  const ids: string[] = [];
  const revisions: string[] = [];
  for (let i = 0; i < 7; i++) {
    const s = await submit(board, i % 2 ? one.key : two.key, {
      title: `Published article number ${i} about careful testing`,
    });
    await vote(board, v1.key, s.post_id, s.revision_id);
    await vote(board, v2.key, s.post_id, s.revision_id);
    ids.push(s.post_id);
    revisions.push(s.revision_id);
    board.clock.advance(60);
  }
  const guest = new Guest(board);
  const feedIds = async (query: string) => {
    const res = await board.request(`/api/articles/feed${query}`);
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    return { ids: body.items.map((i: { id: string }) => i.id), next: body.next_before };
  };
  const listed = (html: string) =>
    [...html.matchAll(/<h[23]><a href="\/articles\/([0-9a-f-]{36})" dir="auto">/g)].map((m) =>
      m[1]
    );
  const newestFirst = (...at: number[]) => at.map((i) => ids[i]);

  /** The article the public index holds at `id`'s public position (null: none). */
  const indexed = async (id: string) => {
    const post = (await board.kv.get(keys.articlePosts(id))).value!;
    return (await board.kv.get(keys.articlePublicPostIdBySeq(post.public_seq!))).value;
  };

  await t.step("five restricted (a spam wave): the pages show the others", async () => {
    for (const id of ids.slice(2)) await moderateArticle(board.deps, id, "restrict", "Spam");
    // They left the public index, so no page reads past them.
    for (const id of ids.slice(2)) assert.equal(await indexed(id), null);
    assert.deepEqual((await feedIds("?limit=5")).ids, newestFirst(1, 0));
    assert.deepEqual(listed((await guest.get("/")).html), newestFirst(1, 0));
    const page = await guest.get("/articles");
    assert.deepEqual(listed(page.html), newestFirst(1, 0));
    assert.ok(!page.html.includes("Older articles"));
  });

  await t.step("restored, an article is back at its place", async () => {
    await moderateArticle(board.deps, ids[4], "restore", "Not spam after all");
    assert.deepEqual(await indexed(ids[4]), { post_id: ids[4], revision_id: revisions[4] });
    assert.deepEqual((await feedIds("?limit=5")).ids, newestFirst(4, 1, 0));
    const first = await feedIds("?limit=1");
    assert.deepEqual(first.ids, newestFirst(4));
    const second = await feedIds(`?limit=1&before=${first.next}`);
    assert.deepEqual(second.ids, newestFirst(1));
  });

  await t.step(
    "an entry a store written before kept for a hidden article is read past",
    async () => {
      // Such stores kept a restricted article in the public index at its public position.
      const post = (await board.kv.get(keys.articlePosts(ids[6]))).value!;
      await board.kv.set(keys.articlePublicPostIdBySeq(post.public_seq!), ids[6]);
      const page = await feedIds("?limit=2");
      assert.deepEqual(page.ids, newestFirst(4, 1));
      assert.deepEqual((await feedIds(`?limit=2&before=${page.next}`)).ids, newestFirst(0));
      assert.deepEqual(listed((await guest.get("/")).html), newestFirst(4, 1, 0));
    },
  );
});

Deno.test("withdrawn-from-public (restricted) articles are a 404 page", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  assert.equal((await guest.get(`/articles/${a.id}`)).res.status, 200);
  await moderateArticle(board.deps, a.id, "restrict", "Spam");
  const after = await guest.get(`/articles/${a.id}`);
  assert.equal(after.res.status, 404);
  assert.match(after.html, /Page not found/);
  assert.ok(!(await guest.get("/articles")).html.includes(a.id));
});

const CORPUS = [
  "<script>alert(1)</script>",
  '"><img src=x onerror=alert(2)>',
  "<svg onload=alert(3)>",
  "</textarea><script>alert(4)</script>",
  '<a href="javascript:alert(5)">x</a>',
  "<iframe src=javascript:alert(6)></iframe>",
  "<style>body{display:none}</style>",
  "&lt;script&gt;alert(7)&lt;/script&gt;",
];

Deno.test("agent- and guest-written text is escaped everywhere on the page", async () => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const svg = await uploadSvg(
    board,
    author.key,
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><title>&lt;script&gt;alert(8)&lt;/script&gt;</title><rect width="5" height="5"/></svg>',
  );
  const s = await submit(board, author.key, {
    title: `The ${CORPUS[0]} guide to escaping every single thing`,
    blocks: [
      { type: "paragraph", text: `This paragraph carries ${CORPUS.join(" and ")} for the test.` },
      { type: "heading", text: `A heading with ${CORPUS[1]} inside`, level: 2 },
      { type: "quote", text: `A quote with ${CORPUS[2]} inside`, cite: CORPUS[3] },
      { type: "list", items: CORPUS.slice(0, 3) },
      { type: "code", text: CORPUS.join("\n") },
      { type: "svg", asset_id: svg, alt: `A figure ${CORPUS[1]}`, caption: CORPUS[4] },
    ],
  });
  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id);
  await comment(board, b.key, s.revision_id, {
    blocks: [{ type: "paragraph", text: `An agent comment with ${CORPUS.join(" ")} in it.` }],
  });
  const guest = new Guest(board);
  await guest.comment(s.post_id, `A guest writes ${CORPUS.join(" ")} here`, {
    name: '<b onmouseover="alert(9)">Eve</b>',
  });
  const { html } = await guest.get(`/articles/${s.post_id}`);
  assert.ok(!/<script/i.test(html), "no script element");
  assert.ok(!/<(?:iframe|style|svg|a href="javascript)/i.test(html), "no planted element");
  const tags = tagsWithAttributes(html);
  assert.ok(tags.length > 50, "the page was parsed");
  for (const { tag, attrs } of tags) {
    assert.ok(!attrs.some((a) => a.startsWith("on")), `no event handler on <${tag}>`);
    assert.ok(!["script", "iframe", "style", "svg", "object", "embed"].includes(tag), tag);
  }
  assert.ok(!html.includes("<b "), "the guest's name is text");
  // The planted text is all there, as text.
  const text = decode(html);
  for (const piece of CORPUS) assert.ok(text.includes(piece), piece);
  assert.ok(text.includes('<b onmouseover="alert(9)">Eve</b>'));
  // Every <img> on the page is a figure served by the site.
  const imgs = [...html.matchAll(/<img\b[^>]*>/g)].map((m) => m[0]);
  assert.equal(imgs.length, 1);
  assert.match(imgs[0], new RegExp(`src="/articles/${s.post_id}/figures/${svg}\\.svg"`));
  // The planted strings in the list page too.
  const list = await guest.get("/articles");
  assert.ok(!/<script/i.test(list.html));
  assert.ok(decode(list.html).includes(CORPUS[0]));
});

Deno.test("SVG figures are the sanitised source, served as images with their own CSP", async () => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const used = await uploadSvg(
    board,
    author.key,
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10" data-x="1"><!-- note --><rect width="5" height="5" style="fill: #336699"/></svg>',
  );
  const unused = await uploadSvg(board, author.key);
  const s = await submit(board, author.key, {
    blocks: [{
      type: "paragraph",
      text: "A paragraph of English text to go with the picture below it.",
    }, {
      type: "svg",
      asset_id: used,
      alt: "A blue square",
    }],
  });
  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id);
  const res = await board.request(`/articles/${s.post_id}/figures/${used}.svg`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^image\/svg\+xml/);
  assert.equal(res.headers.get("content-security-policy"), FIGURE_CSP);
  assert.match(FIGURE_CSP, /default-src 'none'/);
  assert.match(FIGURE_CSP, /sandbox/);
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  const svg = await res.text();
  assert.ok(svg.startsWith("<svg"));
  assert.ok(!svg.includes("data-x") && !svg.includes("note"), "the sanitised form");
  for (
    const path of [
      `/articles/${s.post_id}/figures/${unused}.svg`,
      `/articles/${s.post_id}/figures/x.svg`,
    ]
  ) {
    const r = await board.request(path);
    assert.equal(r.status, 404, path);
    assert.match(r.headers.get("content-type") ?? "", /^text\/html/);
    await r.body?.cancel();
  }
  const page = await new Guest(board).get(`/articles/${s.post_id}`);
  assert.match(page.html, /<img src="[^"]+\.svg" alt="A blue square"/);
  assert.ok(!page.html.includes("<svg"), "no inline SVG markup on the page");
});

Deno.test("comments are threaded by parent, with reply links, permalinks and paging", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const root = await comment(board, a.b.key, a.revision);
  const child = await comment(board, a.c.key, a.revision, { parent_id: root.comment_id });
  const guest = new Guest(board);
  const reply = await guest.comment(a.id, "A guest reply to the reply, in plain words.", {
    parent_id: child.comment_id,
  });
  const other = await comment(board, a.author.key, a.revision);

  await t.step("the page nests replies under their parents", async () => {
    const { html } = await new Guest(board).get(`/articles/${a.id}`);
    const tree = commentTree(html);
    assert.equal(tree.get(root.comment_id), null);
    assert.equal(tree.get(child.comment_id), root.comment_id);
    assert.equal(tree.get(reply), child.comment_id);
    assert.equal(tree.get(other.comment_id), null);
    assert.ok(html.includes(`?reply_to=${reply}"`), "a reply link per comment");
    assert.ok(html.includes(`data-depth="3"`));
  });

  await t.step("a reply link opens the form as a reply", async () => {
    const { html } = await guest.get(`/articles/${a.id}?reply_to=${child.comment_id}`);
    assert.match(html, /<h3 id="form-title">Reply to <bdi>[^<]+<\/bdi><\/h3>/);
    assert.ok(html.includes(`name="parent_id" value="${child.comment_id}"`));
  });

  await t.step("a permalink redirects to the page that starts at the comment", async () => {
    const res = await board.request(`/articles/${a.id}/comments/${child.comment_id}`);
    assert.equal(res.status, 303);
    const loc = res.headers.get("location") ?? "";
    assert.match(loc, new RegExp(`\\?after=\\d+#c-${child.comment_id}$`));
    const { html } = await new Guest(board).get(loc.replace(/#.*/, ""));
    const tree = commentTree(html);
    assert.ok(!tree.has(root.comment_id), "the older parent is on an earlier page");
    assert.equal(tree.get(child.comment_id), null);
    assert.ok(html.includes(`/articles/${a.id}/comments/${root.comment_id}`), "link to parent");
    assert.ok(html.includes("Earlier comments"));
  });

  await t.step("windows page back and forth without losing a comment", async () => {
    // The article page's own pieces, two records a page (a viewer without a session has no
    // unpublished comments of its own, so no moderation outcomes to show).
    const viewer = { session: null, everPublic: new Set([a.revision]) };
    const discussionPage = async (page: { before?: number; after?: number }) =>
      threadDiscussion(await discussionWindow(board.deps.kv, a.id, page, 2), viewer, new Map());
    const newest = await discussionPage({});
    assert.deepEqual(newest.roots.map((n) => n.comment.id), [reply, other.comment_id]);
    assert.equal(newest.later, null);
    assert.ok(newest.earlier);
    const older = await discussionPage({ before: newest.earlier });
    assert.deepEqual(older.roots.map((n) => n.comment.id), [root.comment_id]);
    assert.deepEqual(older.roots[0].children.map((n) => n.comment.id), [child.comment_id]);
    assert.equal(older.earlier, null);
    assert.ok(older.later);
    const back = await discussionPage({ after: older.later! });
    assert.deepEqual(back.roots.map((n) => n.comment.id), [reply, other.comment_id]);
  });
});

Deno.test("the reply form quotes the start of an agent comment of any blocks, lists included", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const list = await comment(board, a.b.key, a.revision, {
    blocks: [{ type: "list", items: ["First point of the list", "Second point"] }],
  });
  const mixed = await comment(board, a.c.key, a.revision, {
    blocks: [
      { type: "code", text: "deno task check" },
      { type: "list", items: ["then the tests"] },
    ],
  });
  const guest = new Guest(board);
  const quoted = async (id: string) => {
    const { html } = await guest.get(`/articles/${a.id}?reply_to=${id}`);
    return decode(
      html.match(/<blockquote class="replying" dir="auto">([^<]*)<\/blockquote>/)?.[1] ?? "",
    );
  };
  assert.equal(await quoted(list.comment_id), "First point of the list Second point");
  assert.equal(await quoted(mixed.comment_id), "deno task check then the tests");
});

Deno.test("32 levels of replies render nested; the deepest offers no reply", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  let parent: string | null = null;
  const ids: string[] = [];
  for (let depth = 1; depth <= 31; depth++) {
    const who = depth % 2 ? a.b : a.c;
    const r = await comment(board, who.key, a.revision, parent ? { parent_id: parent } : {});
    ids.push(r.comment_id);
    parent = r.comment_id;
  }
  const guest = new Guest(board);
  const deepest = await guest.comment(a.id, "The thirty-second level, written by a guest.", {
    parent_id: parent!,
  });
  ids.push(deepest);
  const { html } = await guest.get(`/articles/${a.id}`);
  const tree = commentTree(html);
  for (let i = 1; i < ids.length; i++) assert.equal(tree.get(ids[i]), ids[i - 1], `level ${i + 1}`);
  assert.ok(html.includes(`data-depth="32"`));
  assert.ok(!html.includes(`?reply_to=${deepest}`), "no reply link at level 32");
  assert.ok(html.includes(`?reply_to=${ids[30]}`), "level 31 takes replies");
  // A reply to level 32 is refused with a message, the text kept.
  const refused = await guest.post(`/articles/${a.id}/comments`, {
    text: "A thirty-third level",
    parent_id: deepest,
  });
  assert.equal(refused.res.status, 400);
  assert.match(refused.html, /nest at most 32 levels/);
  assert.match(refused.html, /A thirty-third level<\/textarea>/);
  const viaLink = await guest.get(`/articles/${a.id}?reply_to=${deepest}`);
  assert.match(viaLink.html, /deepest level of its thread \(32\)/);
  assert.ok(!viaLink.html.includes(`name="parent_id"`));
});

Deno.test("the guest cookie: HttpOnly, SameSite=Lax; __Host-, Secure and Path=/ on https", async () => {
  for (
    const [baseUrl, name, path, secure] of [
      ["http://board.test", "board_guest", "/articles", false],
      ["https://board.test", "__Host-board_guest", "/", true],
    ] as const
  ) {
    await using board = await testBoard({ baseUrl });
    const a = await publishedArticle(board);
    const res = await board.request(`/articles/${a.id}`);
    await res.body?.cancel();
    const cookie = res.headers.get("set-cookie") ?? "";
    assert.match(cookie, new RegExp(`^${name}=[A-Za-z0-9_.-]+;`));
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.match(cookie, new RegExp(`Path=${path}(;|$)`));
    assert.doesNotMatch(cookie, /Domain=/i);
    assert.equal(/;\s*Secure/.test(cookie), secure, baseUrl);
    // The list page needs no session.
    const list = await board.request("/articles");
    await list.body?.cancel();
    assert.equal(list.headers.get("set-cookie"), null);
  }
});

Deno.test("published comments on a pending candidate stay off the page until it is public", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const next = await submit(board, a.author.key, { replaces_post_id: a.id });
  const onCandidate = await comment(board, a.b.key, next.revision_id);
  const { html } = await new Guest(board).get(`/articles/${a.id}`);
  assert.ok(!commentTree(html).has(onCandidate.comment_id));
  await vote(board, a.b.key, a.id, next.revision_id);
  await vote(board, a.c.key, a.id, next.revision_id);
  const later = await new Guest(board).get(`/articles/${a.id}`);
  assert.ok(commentTree(later.html).has(onCandidate.comment_id));
  assert.match(later.html, /revision 2/);
});

Deno.test("a moderator-hidden parent leaves its replies with a note, not an orphan error", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  // Published at once by the automatic moderation.
  const parent = await new Guest(board).comment(a.id, "A parent comment");
  const child = await comment(board, a.b.key, a.revision, { parent_id: parent });
  await moderateComment(board.deps, parent, "reject", "Abuse");
  const { res, html } = await new Guest(board).get(`/articles/${a.id}`);
  assert.equal(res.status, 200);
  const tree = commentTree(html);
  assert.ok(!tree.has(parent));
  assert.equal(tree.get(child.comment_id), null);
  assert.match(html, /in reply to an earlier comment/);
  await assertStatus(await board.request(`/articles/${a.id}/comments/${parent}`), 404);
});

Deno.test("over https every answer carries Strict-Transport-Security; over http none does", async () => {
  for (
    const [baseUrl, hsts] of [
      ["https://board.test", "max-age=31536000"],
      ["http://board.test", null],
    ] as const
  ) {
    await using board = await testBoard({ baseUrl });
    for (
      const [path, init] of [
        ["/articles", {}],
        ["/articles/", {}], // a redirect
        ["/nowhere", { headers: { accept: "text/html" } }],
        ["/v1/posts", { headers: { accept: "application/json", "x-agent-protocol": "board/1" } }],
        ["/.well-known/oauth-authorization-server", {}],
      ] as const
    ) {
      const res = await board.request(path, init);
      await res.body?.cancel();
      assert.equal(res.headers.get("strict-transport-security"), hsts, `${baseUrl}${path}`);
    }
  }
});

/** A published article with 55 agent comments (five more than a page), their ids oldest first. */
async function articleWith55Comments(board: TestBoard) {
  const a = await publishedArticle(board);
  const writers = [a.author, a.b, a.c];
  const ids: string[] = [];
  for (let i = 0; i < 55; i++) {
    const r = await comment(board, writers[i % 3].key, a.revision, {
      blocks: [{ type: "paragraph", text: `${ENGLISH_TEXT} Comment number ${i + 1}.` }],
    });
    ids.push(r.comment_id);
  }
  return { a, ids };
}

Deno.test("a page of the discussion holds 50 comment records; earlier ones are a page away", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const { a, ids } = await articleWith55Comments(board);
  const { html } = await new Guest(board).get(`/articles/${a.id}`);
  const shown = [...commentTree(html).keys()];
  assert.deepEqual(shown, ids.slice(5), "the newest 50, oldest first");
  assert.ok(html.includes("Earlier comments"));
  const earlier = html.match(/href="([^"#]*\?before=\d+)[^"]*"/)![1];
  const older = await new Guest(board).get(earlier);
  assert.deepEqual([...commentTree(older.html).keys()], ids.slice(0, 5));
});

Deno.test("a page of the discussion whose records are all hidden says so, and links on", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const { a, ids } = await articleWith55Comments(board);
  // The five oldest were spam: a moderator rejected them. Their records still make a window.
  for (const id of ids.slice(0, 5)) await moderateComment(board.deps, id, "reject", "Spam");
  const guest = new Guest(board);
  const { html } = await guest.get(`/articles/${a.id}`);
  assert.match(html, /<h2 id="comments-title">Comments \(50\)<\/h2>/);
  const earlier = html.match(/href="([^"#]*\?before=\d+)[^"]*"/)![1];
  const older = await guest.get(earlier);
  assert.equal(commentTree(older.html).size, 0, "nothing of that window is shown");
  // Not "No comments here yet" under "Comments (50)": the page says none of its own is shown.
  assert.doesNotMatch(older.html, /No comments here yet/);
  assert.match(older.html, /<p class="muted">No comments to show on this page\.<\/p>/);
  assert.match(older.html, /\?after=\d+#comments-title">\s*Newer comments →/);
  // An address before every record (a hand-edited cursor) says none is shown here, and leads
  // to the comments.
  const before = await guest.get(`/articles/${a.id}?before=1`);
  assert.doesNotMatch(before.html, /No comments here yet/);
  assert.match(before.html, /No comments to show on this page\./);
  assert.match(
    before.html,
    new RegExp(`href="/articles/${a.id}#comments-title">Show the comments`),
  );
  // An article without comments still says that there are none yet.
  const bare = await publishedArticle(board);
  assert.match((await guest.get(`/articles/${bare.id}`)).html, /No comments here yet\./);
  // The list of articles past its end says so.
  assert.match((await guest.get("/articles?before=1")).html, /No older articles\./);
});
