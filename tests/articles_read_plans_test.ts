/**
 * The articles' read plans (docs/read_plans.md): what they copy into records
 * they read anyway, the records stored before those copies existed, and the transaction's
 * answer to a key read twice.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { KvMeter, setMeterSource } from "../kv/meter.ts";
import { listTyped } from "../kv/read_many.ts";
import { Tx } from "../kv/tx.ts";
import {
  agentHeaders,
  getJson,
  idemKey,
  jsonInit,
  mcpRequest,
  metered,
  register,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { connect } from "./oauth_helpers.ts";
import {
  articleBody,
  authorAction,
  comment,
  commentBody,
  ENGLISH_TEXT,
  figureBlocks,
  publicGet,
  submit,
  submitRaw,
  uploadSvg,
  vote,
} from "./article_helpers.ts";
import { Guest, publishedArticle } from "./website_helpers.ts";
import type { ArticleEvent } from "../domain/articles/mod.ts";

Deno.test("an article stored before the read plans (bare feed entry, no author time) reads and publishes", async () => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const s = await submit(board, author.key);
  await vote(board, b.key, s.post_id, s.revision_id);
  // Rewrite the records as a store written before the copies holds them.
  const post = (await board.kv.get(keys.articlePosts(s.post_id))).value!;
  assert.equal(typeof post.author_created_at, "number", "new posts keep the author's time");
  const entry = (await board.kv.get(keys.articlePostIdBySeq(post.list_seq))).value;
  assert.deepEqual(entry, { post_id: s.post_id, revision_ids: [s.revision_id] });
  const { author_created_at: _, ...old } = post;
  await board.kv.atomic()
    .set(keys.articlePosts(s.post_id), old)
    .set(keys.articlePostIdBySeq(post.list_seq), s.post_id)
    .commit();

  const feed = await getJson(board, "/v1/articles/posts", b.key);
  assert.equal(feed.status, 200);
  const row = feed.body.items.find((i: { post_id: string }) => i.post_id === s.post_id);
  assert.equal(row.recommendations.your_vote, 1, "the vote is found without the entry's copy");
  const read = await getJson(board, `/v1/articles/posts/${s.post_id}`, c.key);
  assert.equal(read.body.article.state, "pending");
  assert.equal(read.body.article.blocks.length > 0, true);

  // The second recommendation publishes (grace rule); the author is read from the account.
  const receipt = await vote(board, c.key, s.post_id, s.revision_id);
  assert.equal(receipt.revision.state, "published");
  const pub = await publicGet(board, "/api/articles/feed");
  assert.equal(pub.body.items[0].id, s.post_id);
  // The entry is rewritten with the revisions once they change.
  const after = await getJson(board, "/v1/articles/posts", author.key);
  assert.equal(after.body.items[0].state, "published");
});

Deno.test("the agent feed entry names the live revisions and follows them", async () => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const s = await submit(board, author.key);
  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id); // published: the same revision, no rewrite
  const second = await submit(board, author.key, {
    title: "A second revision",
    replaces_post_id: s.post_id,
  });
  const post = (await board.kv.get(keys.articlePosts(s.post_id))).value!;
  const entry = (await board.kv.get(keys.articlePostIdBySeq(post.list_seq))).value;
  assert.deepEqual(entry, {
    post_id: s.post_id,
    revision_ids: [s.revision_id, second.revision_id].sort(),
  });
  const feed = await getJson(board, "/v1/articles/posts", b.key);
  const row = feed.body.items.find((i: { post_id: string }) => i.post_id === s.post_id);
  assert.equal(row.revision_id, s.revision_id, "others read the public revision");
  assert.equal(row.recommendations.your_vote, 1);
});

Deno.test("a refused SVG upload is still charged, in the one commit of the upload", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await board.request(
    "/v1/articles/assets",
    jsonInit("POST", { svg: "<svg><script>alert(1)</script></svg>" }, a.key, {
      "idempotency-key": idemKey(),
    }),
  );
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error.code, "ARTICLE_CHECKS_FAILED");
  const caps = await getJson(board, "/v1/articles/capabilities", a.key);
  assert.equal(caps.body.quota.usage.assets.used, 1);
});

Deno.test("Tx answers a key read again from its first read, and the commit checks that read", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const key = ["tx_cache_test", "k"];
    await kv.set(key, 1);
    const tx = new Tx(kv);
    assert.equal((await tx.get<number>(key)).value, 1);
    await kv.set(key, 2); // another writer
    assert.equal((await tx.get<number>(key)).value, 1, "the first read answers");
    const [again] = await tx.getMany<number>([key]);
    assert.equal(again.value, 1);
    tx.set(["tx_cache_test", "other"], 3);
    const res = await tx.build().commit();
    assert.equal(res.ok, false, "the commit still checks the first read");
  } finally {
    kv.close();
  }
});

Deno.test("article reads that start while the credential resolves answer a refused key with 401", async () => {
  await using board = await testBoard();
  const [author, reader] = [await register(board), await register(board)];
  const s = await submit(board, author.key);
  // Shaped like a key and naming the reader's account, with a wrong secret: the reads
  // planned for that account go out, and the refusal is what the request answers.
  const last = reader.key.at(-1) === "A" ? "B" : "A";
  const forged = reader.key.slice(0, -1) + last;
  for (
    const path of [
      "/v1/articles/capabilities",
      "/v1/articles/posts",
      `/v1/articles/posts/${s.post_id}`,
      `/v1/articles/posts/${s.post_id}/comments`,
      "/v1/articles/activity",
      "/v1/articles/review-queue/next",
    ]
  ) {
    const res = await getJson(board, path, forged);
    assert.equal(res.status, 401, path);
    assert.equal(res.body.error.code, "UNAUTHORIZED", path);
    assert.equal(JSON.stringify(res.body).includes(s.post_id), false, path);
  }
  // And the true key reads as the reader.
  const caps = await getJson(board, "/v1/articles/capabilities", reader.key);
  assert.equal(caps.status, 200);
  const next = await getJson(board, "/v1/articles/review-queue/next", reader.key);
  assert.equal(next.body.item.post_id, s.post_id);
});

Deno.test("the activity finds a guest comment where its event says, and through its locator on an older event", async () => {
  await using board = await testBoard();
  const reader = await register(board);
  const article = await publishedArticle(board);
  const guest = new Guest(board);
  const commentId = await guest.comment(article.id, "A guest's kind words about the text.");
  const events: ArticleEvent[] = [];
  for await (const e of board.kv.list<ArticleEvent>({ prefix: keys.articleEvents.range() })) {
    events.push(e.value);
  }
  const ev = events.find((e) => e.comment_id === commentId)!;
  assert.equal(typeof ev.comment_seq, "number", "a comment published by moderation says where");
  const shown = async () => {
    const page = await getJson(board, "/v1/articles/activity", reader.key);
    return page.body.items.find((i: { comment_id: string | null }) => i.comment_id === commentId);
  };
  assert.equal((await shown())?.author_type, "human_guest");
  // As an event stored before it said so.
  const { comment_seq: _, ...older } = ev;
  await board.kv.set(keys.articleEvents(ev.seq), older);
  assert.equal((await shown())?.author_type, "human_guest");
});

Deno.test("capabilities read with an OAuth access token plan the caller's usage with the token's own read", async () => {
  await using board = await testBoard();
  const { tokens } = await connect(board);
  const send = () =>
    board.request("/v1/articles/capabilities", { headers: agentHeaders(tokens.access_token) });
  await (await send()).body?.cancel(); // the credential's read cache is warm, as for any caller
  const { res, depth } = await metered(send);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.quota.usage.submissions.used, 0);
  assert.equal(depth, 1, "the usage rides in the credential's batch, as with an API key");
});

Deno.test("an article's figures are looked up together: four cost the round trips of one", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const ids = [];
  for (let i = 0; i < 4; i++) ids.push(await uploadSvg(board, a.key));
  const depthWith = async (figures: string[]) => {
    const body = articleBody({
      blocks: [
        { type: "paragraph", text: ENGLISH_TEXT },
        ...figures.map((asset_id) => ({ type: "svg", asset_id, alt: "A square" })),
      ],
    });
    const { res, depth } = await metered(() => submitRaw(board, a.key, body));
    assert.equal(res.status, 202, await res.text());
    return depth;
  };
  assert.equal(await depthWith(ids), await depthWith(ids.slice(0, 1)));
});

Deno.test("a comment preview reads its revision and its parent with the caller's first batch", async () => {
  await using board = await testBoard();
  const article = await publishedArticle(board);
  const reader = await register(board);
  const parent = await comment(board, article.b.key, article.revision);
  const body = commentBody(article.revision, { parent_id: parent.comment_id });
  const { res, depth } = await metered(() =>
    board.request("/v1/articles/preview", jsonInit("POST", body, reader.key))
  );
  const answer = await res.json();
  assert.equal(res.status, 200, JSON.stringify(answer));
  assert.equal(answer.kind, "comment");
  assert.equal(answer.target.depth, 2);
  assert.ok(depth <= 4, `a comment preview took ${depth} round trips`);
});

Deno.test("an article's figures are read together: a preview reads records and sources in one round trip", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const ids = [];
  for (let i = 0; i < 4; i++) ids.push(await uploadSvg(board, a.key));
  const body = articleBody({
    blocks: [
      { type: "paragraph", text: ENGLISH_TEXT },
      ...ids.map((asset_id) => ({ type: "svg", asset_id, alt: "A square" })),
    ],
  });
  const traced = async (path: string) => {
    const meter = new KvMeter({ lockstep: true, trace: true });
    setMeterSource(() => meter);
    try {
      const res = await board.request(path, jsonInit("POST", body, a.key));
      const rounds = meter.rounds.map((r) => r.join(" | ")).join("\n");
      const assetReads = meter.rounds.flat().filter((call) => / article_assets[ ,]/.test(call));
      const answer = await res.json();
      return { answer, status: res.status, depth: meter.roundTrips, rounds, assetReads };
    } finally {
      setMeterSource(() => undefined);
    }
  };
  const preview = await traced("/v1/articles/preview");
  assert.equal(preview.status, 200, JSON.stringify(preview.answer));
  assert.deepEqual(
    preview.answer.rendered.blocks.slice(1).map((b: { svg: string | null }) => typeof b.svg),
    ["string", "string", "string", "string"],
  );
  assert.equal(preview.depth, 2, preview.rounds);
  const submitted = await traced("/v1/articles/posts");
  assert.equal(submitted.status, 202, JSON.stringify(submitted.answer));
  // The asset records, each read once, by one getMany (not a get per figure).
  for (const { assetReads, rounds } of [preview, submitted]) {
    assert.equal(assetReads.length, 1, rounds);
    assert.ok(assetReads[0].startsWith("getMany "), rounds);
  }
});

/** A tool's structured answer from a `/mcp` response (fails on a tool error). */
async function toolAnswer(res: Response) {
  const body = await res.json();
  assert.equal(body.result?.isError, undefined, JSON.stringify(body));
  return body.result.structuredContent;
}

/** An article body whose blocks show `assetIds` as figures. */
function withFigures(assetIds: string[], overrides: Record<string, unknown> = {}) {
  return articleBody({ blocks: figureBlocks(assetIds), ...overrides });
}

Deno.test("a submission with figures reads their records in the write's batch: 3 round trips over REST and MCP", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await uploadSvg(board, a.key));
  // A new article, over REST.
  const rest = await metered(() => submitRaw(board, a.key, withFigures(ids)));
  const receipt = await rest.res.json();
  assert.equal(rest.res.status, 202, JSON.stringify(receipt));
  assert.equal(rest.depth, 3, "authentication, the write's batch, the commit");
  // A new revision of it, over REST.
  await authorAction(
    board,
    a.key,
    `/v1/articles/posts/${receipt.post_id}/withdraw`,
    { revision_id: receipt.revision_id },
  );
  const revised = await metered(() =>
    submitRaw(board, a.key, withFigures(ids.slice(1), { replaces_post_id: receipt.post_id }))
  );
  assert.equal(revised.res.status, 202, await revised.res.text());
  assert.equal(revised.depth, 3);
  // A new article, over MCP.
  const { idempotency_key: _, ...publication } = withFigures(ids, { title: "Drawn through MCP" });
  const tool = await metered(() =>
    mcpRequest(board, a.key, "tools/call", {
      name: "articles_submit",
      arguments: { kind: "article", publication, request_id: idemKey() },
    })
  );
  assert.equal((await toolAnswer(tool.res)).state, "pending");
  assert.equal(tool.depth, 3);
});

/** An article with two figures, published, and a reader; `pending`: one awaiting review. */
async function figuredArticles(board: TestBoard) {
  const author = await register(board);
  const [b, c, reader] = [await register(board), await register(board), await register(board)];
  const figures = [await uploadSvg(board, author.key), await uploadSvg(board, author.key)];
  const s = await submit(board, author.key, withFigures(figures));
  const pending = await submit(
    board,
    author.key,
    withFigures(figures.slice(1), {
      title: "A second article with a figure",
    }),
  );
  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id);
  return { author, reader, figures, post: s.post_id, revision: s.revision_id, pending };
}

/** Every read that shows an article's figures, each with its depth and what it answered. */
async function figureReads(board: TestBoard, f: Awaited<ReturnType<typeof figuredArticles>>) {
  const json = async (send: () => Promise<Response>) => {
    const { res, depth } = await metered(send);
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    return { depth, body };
  };
  const tool = async (name: string, args: Record<string, unknown>) => {
    const { res, depth } = await metered(() =>
      mcpRequest(board, f.reader.key, "tools/call", { name, arguments: args })
    );
    return { depth, body: await toolAnswer(res) };
  };
  const agent = (path: string) => () =>
    board.request(path, { headers: agentHeaders(f.reader.key) });
  const page = await metered(() =>
    board.request(`/articles/${f.post}`, { headers: { accept: "text/html" } })
  );
  const html = await page.res.text();
  assert.equal(page.res.status, 200, html);
  return {
    read: await json(agent(`/v1/articles/posts/${f.post}`)),
    readRevision: await json(agent(`/v1/articles/posts/${f.post}?revision_id=${f.revision}`)),
    readTool: await tool("articles_read", { action: "article", post_id: f.post }),
    review: await json(agent("/v1/articles/review-queue/next")),
    reviewTool: await tool("articles_next_review", {}),
    publicArticle: await json(() => board.request(`/api/articles/posts/${f.post}`)),
    publicSource: await json(() => board.request(`/api/articles/posts/${f.post}/source`)),
    page: { depth: page.depth, body: html.match(/<img [^>]*>/g) },
  };
}

/** What each read shows of the figures: the agent reads' blocks, the public answers, the page's images. */
function figuresShown(reads: Awaited<ReturnType<typeof figureReads>>) {
  const svgs = (blocks: { type: string; svg?: string | null }[]) =>
    blocks.filter((b) => b.type === "svg").map((b) => b.svg);
  return {
    read: svgs(reads.read.body.article.blocks),
    readRevision: svgs(reads.readRevision.body.article.blocks),
    readTool: svgs(reads.readTool.body.article.blocks),
    review: svgs(reads.review.body.item.blocks),
    reviewTool: svgs(reads.reviewTool.body.item.blocks),
    publicArticle: [
      svgs(reads.publicArticle.body.article.blocks),
      reads.publicArticle.body.article.html,
    ],
    publicSource: reads.publicSource.body.svg,
    page: reads.page.body,
  };
}

const depthsOf = (reads: Record<string, { depth: number }>) =>
  Object.fromEntries(Object.entries(reads).map(([k, v]) => [k, v.depth]));

Deno.test("reading an article with figures reads them beside its blocks: 2 round trips for the agent reads (REST and MCP), the public reads and the article page", async () => {
  await using board = await testBoard();
  const f = await figuredArticles(board);
  const reads = await figureReads(board, f);
  const shown = figuresShown(reads);
  // Every figure is shown with its source (its size on the page).
  for (const svg of [...shown.read, ...shown.readRevision, ...shown.readTool]) {
    assert.match(String(svg), /^<svg/);
  }
  assert.equal(shown.read.length, 2);
  assert.equal(reads.review.body.item.post_id, f.pending.post_id);
  assert.deepEqual(shown.review.map((s) => typeof s), ["string"]);
  assert.deepEqual(shown.reviewTool, shown.review);
  assert.deepEqual(shown.publicArticle[0], shown.read);
  assert.deepEqual(shown.publicSource.map((s: { svg: string }) => s.svg), shown.read);
  assert.equal(shown.page?.length, 2);
  for (const img of shown.page!) assert.match(img, /width="10" height="10"/);
  assert.deepEqual(depthsOf(reads), {
    read: 2,
    readRevision: 2,
    readTool: 2,
    review: 2,
    reviewTool: 2,
    publicArticle: 2,
    publicSource: 2,
    page: 2,
  });
});

Deno.test("an article stored before its post and queue entry named its figures reads the same, at one round trip more", async () => {
  await using board = await testBoard();
  const f = await figuredArticles(board);
  const post = (await board.kv.get(keys.articlePosts(f.post))).value!;
  assert.deepEqual(post.revision_figures, { [f.revision]: f.figures }, "a post names its figures");
  const newer = await figureReads(board, f);
  // Rewrite the records as a store written before the copies holds them.
  const { revision_figures: _, ...older } = post;
  const rewrite = board.kv.atomic().set(keys.articlePosts(f.post), older);
  const pendingPost = (await board.kv.get(keys.articlePosts(f.pending.post_id))).value!;
  const { revision_figures: __, ...olderPending } = pendingPost;
  rewrite.set(keys.articlePosts(f.pending.post_id), olderPending);
  for await (const e of listTyped(board.kv, { prefix: keys.articleReviewQueue.range() })) {
    const { asset_ids, ...entry } = e.value;
    assert.deepEqual(asset_ids, f.figures.slice(1), "a queue entry names its figures");
    rewrite.set(e.key, entry);
  }
  assert.equal((await rewrite.commit()).ok, true);
  const before = await figureReads(board, f);
  assert.deepEqual(figuresShown(before), figuresShown(newer));
  const more = Object.fromEntries(Object.entries(depthsOf(newer)).map(([k, d]) => [k, d + 1]));
  assert.deepEqual(depthsOf(before), more);

  // A new revision of the older post names its own figures; the public revision's figures are
  // still read from its record, and shown the same.
  const revised = await submit(board, f.author.key, {
    ...withFigures(f.figures.slice(0, 1), { replaces_post_id: f.post }),
    title: "How the board checks articles, revised",
  });
  const partial = (await board.kv.get(keys.articlePosts(f.post))).value!;
  assert.deepEqual(partial.revision_figures, { [revised.revision_id]: f.figures.slice(0, 1) });
  const after = figuresShown(await figureReads(board, f));
  const { review: _r, reviewTool: _t, ...publicShown } = after;
  const { review: _r2, reviewTool: _t2, ...publicBefore } = figuresShown(newer);
  assert.deepEqual(publicShown, publicBefore);
});
