/**
 * Article states and transitions with the injected clock: submission and idempotency,
 * grace publication, recommendations, expiry, withdrawal, replacement revisions,
 * moderation and appeals.
 */
import assert from "node:assert/strict";
import { listOpenAppeals, moderateArticle } from "../domain/articles/mod.ts";
import { runSweeps } from "../domain/upkeep/mod.ts";
import { keys } from "../kv/keys.ts";
import {
  agentHeaders,
  assertError,
  freshNetwork,
  getJson,
  jsonInit,
  post,
  register,
  registerMany,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import {
  articleBody,
  authorAction,
  commentBody,
  ENGLISH_TEXT,
  publicGet,
  submit,
  submitRaw,
  vote,
  voteRaw,
} from "./article_helpers.ts";

const DAY = 86400;

Deno.test("submission: 202 with ids and state; idempotent on idempotency_key", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const body = articleBody();
  const res = await submitRaw(board, a.key, body);
  const first = await res.json();
  assert.equal(res.status, 202);
  assert.equal(first.kind, "article");
  assert.equal(first.state, "pending");
  assert.equal(first.revision_number, 1);
  assert.match(first.post_id, /^[0-9a-f-]{36}$/);
  assert.match(first.revision_id, /^[0-9a-f-]{36}$/);
  assert.equal(first.expires_at, first.submitted_at + 7 * DAY);
  assert.equal(first.publication.mode, "grace");

  const again = await submitRaw(board, a.key, body);
  const replay = await again.json();
  assert.equal(again.status, 200);
  assert.equal(replay.replayed, true);
  assert.equal(replay.post_id, first.post_id);
  assert.equal(replay.revision_id, first.revision_id);

  const changed = await submitRaw(board, a.key, { ...body, title: "Another title here" });
  // The key was sent in the body alone: the conflict names that field (no lookup: the lookup
  // route cannot find articles); sent as the header, it names the header.
  const conflict = await assertError(changed.clone(), 409, "IDEMPOTENCY_CONFLICT");
  assert.deepEqual(conflict, { field: "idempotency_key" });
  assert.match((await changed.json()).error.message, /"idempotency_key" was already used/);
  const { idempotency_key: key, ...unkeyed } = {
    ...body,
    title: "Another title here",
  } as Record<string, unknown>;
  const headed = await board.request(
    "/v1/articles/posts",
    jsonInit("POST", unkeyed, a.key, { "idempotency-key": String(key) }),
    freshNetwork(),
  );
  assert.deepEqual(await assertError(headed, 409, "IDEMPOTENCY_CONFLICT"), {
    header: "Idempotency-Key",
  });

  const feed = await getJson(board, "/v1/articles/posts", a.key);
  assert.equal(feed.body.items.length, 1, "the replay stored nothing new");
});

Deno.test("grace: a recommendation from an account revoked before publication does not count", async () => {
  await using board = await testBoard();
  const [author, b, c, d] = await registerMany(board, 4);
  const s = await submit(board, author.key);
  assert.equal((await vote(board, b.key, s.post_id, s.revision_id)).revision.state, "pending");
  const revoked = await board.request("/v1/me/revoke", {
    method: "POST",
    headers: agentHeaders(b.key),
  });
  assert.equal(revoked.status, 200);
  await revoked.body?.cancel();
  let v = await vote(board, c.key, s.post_id, s.revision_id);
  assert.equal(v.revision.state, "pending", "b is no longer active: one active recommendation");
  assert.equal((await publicGet(board, `/api/articles/posts/${s.post_id}`)).status, 404);
  v = await vote(board, d.key, s.post_id, s.revision_id);
  assert.equal(v.revision.state, "published", "two active accounts recommend it");
});

Deno.test("grace: 2 positive recommendations from different other accounts publish", async () => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const s = await submit(board, author.key);

  await assertError(await voteRaw(board, author.key, s.post_id, s.revision_id), 403, "SELF_VOTE");
  // The article's id sent as the revision: the 404 names the revisions it takes votes on.
  const misplaced = await assertError(
    await voteRaw(board, b.key, s.post_id, s.post_id),
    404,
    "NOT_FOUND",
  );
  assert.deepEqual(misplaced, {
    target: "article revision",
    id: s.post_id,
    current_public_revision_id: null,
    active_candidate_revision_id: s.revision_id,
  });
  let v = await vote(board, b.key, s.post_id, s.revision_id);
  assert.equal(v.revision.state, "pending");
  // An exact repeat is a free replay; the opposite value conflicts.
  v = await vote(board, b.key, s.post_id, s.revision_id);
  assert.equal(v.replayed, true);
  assert.equal(v.revision.up, 1);
  await assertError(
    await voteRaw(board, b.key, s.post_id, s.revision_id, -1),
    409,
    "VOTE_CONFLICT",
  );
  assert.equal((await publicGet(board, `/api/articles/posts/${s.post_id}`)).status, 404);

  v = await vote(board, c.key, s.post_id, s.revision_id);
  assert.equal(v.revision.state, "published");
  const pub = await publicGet(board, `/api/articles/posts/${s.post_id}`);
  assert.equal(pub.status, 200);
  assert.equal(pub.body.article.revision_id, s.revision_id);
  assert.equal(pub.body.publication.mode, "grace");
  const feed = await publicGet(board, "/api/articles/feed");
  assert.deepEqual(feed.body.items.map((i: { id: string }) => i.id), [s.post_id]);
  assert.equal(feed.body.summary.published_posts, 1);
});

Deno.test("article votes: an article id that names no article is told, not the revision sent", async () => {
  await using board = await testBoard();
  const [author, b] = [await register(board), await register(board)];
  const s = await submit(board, author.key);
  // The revision exists (another article's, here the only one): the id that names nothing is
  // the article's, and the 404 says so instead of "no article revision".
  for (const postId of [crypto.randomUUID(), s.revision_id]) {
    const res = await voteRaw(board, b.key, postId, s.revision_id);
    const body = await res.clone().json();
    const details = await assertError(res, 404, "NOT_FOUND");
    assert.deepEqual(details, { target: "article", id: postId }, JSON.stringify(body));
    assert.match(body.error.message, new RegExp(`No article was found with id "${postId}"`));
  }
});

Deno.test("grace: a downvote does not count as a recommendation", async () => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const s = await submit(board, author.key);
  await vote(board, b.key, s.post_id, s.revision_id, 1);
  const v = await vote(board, c.key, s.post_id, s.revision_id, -1);
  assert.equal(v.revision.state, "pending");
  assert.deepEqual([v.revision.up, v.revision.down], [1, 1]);
});

Deno.test("recommendations share the 20 new votes a day with board votes", async () => {
  await using board = await testBoard();
  const voter = await register(board);
  const authors = await Promise.all(Array.from({ length: 7 }, () => register(board)));
  const thread = await post(board, authors[0].key, { title: "A board thread", body: "Hello" });
  const boardVote = await board.request(
    "/votes",
    jsonInit("POST", { board: "named", post_id: thread.id, value: 1 }, voter.key),
  );
  assert.equal(boardVote.status, 200, await boardVote.text());
  const subs = [];
  for (let i = 0; i < 20; i++) subs.push(await submit(board, authors[i % 7].key));
  for (let i = 0; i < 19; i++) await vote(board, voter.key, subs[i].post_id, subs[i].revision_id);
  const res = await voteRaw(board, voter.key, subs[19].post_id, subs[19].revision_id);
  const d = await assertError(res, 429, "DAILY_LIMIT");
  assert.equal(d.limit, 20);
  const me = await getJson(board, "/v1/me", voter.key);
  assert.equal(me.body.voting.used, 20);
  board.clock.advance(DAY);
  await vote(board, voter.key, subs[19].post_id, subs[19].revision_id);
});

Deno.test("a suspended voter cannot recommend (403 VOTING_SUSPENDED)", async () => {
  await using board = await testBoard();
  const author = await register(board);
  const voter = await register(board);
  const s = await submit(board, author.key);
  await board.kv.set(keys.votingStandings(voter.id), {
    karma: -25,
    suspension: { since: board.clock.now(), karma_at_start: -25, points: 0, deletion_credit: 0 },
    suspensions: 1,
    recovered_at: null,
  });
  await assertError(
    await voteRaw(board, voter.key, s.post_id, s.revision_id),
    403,
    "VOTING_SUSPENDED",
  );
});

Deno.test("expiry: a pending submission expires 7 days after it was submitted", async () => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const s = await submit(board, author.key);
  await vote(board, b.key, s.post_id, s.revision_id);
  board.clock.advance(7 * DAY - 1);
  let seen = await getJson(board, `/v1/articles/posts/${s.post_id}`, c.key);
  assert.equal(seen.body.article.state, "pending");
  let feed = await publicGet(board, "/api/articles/feed");
  assert.equal(feed.body.summary.awaiting_review_posts, 1);

  board.clock.advance(1);
  // Read without any write in between: the clock alone decides.
  const own = await getJson(board, `/v1/articles/posts/${s.post_id}`, author.key);
  assert.equal(own.body.article.state, "expired");
  seen = await getJson(board, `/v1/articles/posts/${s.post_id}`, c.key);
  assert.equal(seen.status, 404, "others no longer see an expired first article");
  await assertError(await voteRaw(board, c.key, s.post_id, s.revision_id), 404, "NOT_FOUND");
  feed = await publicGet(board, "/api/articles/feed");
  assert.equal(feed.body.summary.awaiting_review_posts, 0);
  const stored = async () =>
    (await board.kv.get<{ state: string }>(keys.articleRevisions(s.revision_id))).value?.state;
  assert.equal(await stored(), "pending", "reads project the expiry and write nothing");
  // An appeal's refusal tells the state every read shows, not the stored one.
  const appeal = await authorAction(board, author.key, `/v1/articles/posts/${s.post_id}/appeal`, {
    revision_id: s.revision_id,
    reason: "Please look again",
  });
  assert.equal((await assertError(appeal, 409, "CONFLICT")).state, "expired");
  await runSweeps(board.deps);
  assert.equal(await stored(), "expired", "the sweep records the due transition");
  feed = await publicGet(board, "/api/articles/feed");
  assert.equal(feed.body.summary.awaiting_review_posts, 0);
});

Deno.test("withdraw: a pending revision, and a published article", async () => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const s1 = await submit(board, author.key);
  await assertError(
    await authorAction(board, b.key, `/v1/articles/posts/${s1.post_id}/withdraw`),
    403,
    "FORBIDDEN",
  );
  const w = await authorAction(board, author.key, `/v1/articles/posts/${s1.post_id}/withdraw`);
  const wb = await w.json();
  assert.equal(w.status, 200, JSON.stringify(wb));
  assert.deepEqual(wb.withdrawn_revision_ids, [s1.revision_id]);
  assert.equal(wb.article_state, "withdrawn");
  assert.equal((await getJson(board, `/v1/articles/posts/${s1.post_id}`, b.key)).status, 404);
  await assertError(
    await authorAction(board, author.key, `/v1/articles/posts/${s1.post_id}/withdraw`),
    409,
    "CONFLICT",
  );

  const s2 = await submit(board, author.key);
  await vote(board, b.key, s2.post_id, s2.revision_id);
  await vote(board, c.key, s2.post_id, s2.revision_id);
  assert.equal((await publicGet(board, `/api/articles/posts/${s2.post_id}`)).status, 200);
  const res = await authorAction(board, author.key, `/v1/articles/posts/${s2.post_id}/withdraw`, {
    revision_id: s2.revision_id,
  });
  assert.equal(res.status, 200);
  assert.equal((await publicGet(board, `/api/articles/posts/${s2.post_id}`)).status, 404);
  const feed = await publicGet(board, "/api/articles/feed");
  assert.equal(feed.body.items.length, 0);
  assert.equal(feed.body.summary.published_posts, 0);
  const own = await getJson(board, `/v1/articles/posts/${s2.post_id}`, author.key);
  assert.equal(own.body.article.state, "withdrawn");
});

Deno.test("withdraw: the answer's article_state is the state the article then reads as", async () => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const s1 = await submit(board, author.key);
  await vote(board, b.key, s1.post_id, s1.revision_id);
  await vote(board, c.key, s1.post_id, s1.revision_id);
  // A newer revision, rejected by moderators: the latest revision is neither public nor pending.
  const s2 = await submit(board, author.key, { replaces_post_id: s1.post_id });
  await moderateArticle(board.deps, s1.post_id, "reject", "Not this version.");
  const res = await authorAction(board, author.key, `/v1/articles/posts/${s1.post_id}/withdraw`);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual(body.withdrawn_revision_ids, [s1.revision_id]);
  const own = await getJson(board, `/v1/articles/posts/${s1.post_id}`, author.key);
  assert.equal(own.body.article.revision_id, s2.revision_id);
  assert.equal(own.body.article.article_state, "rejected");
  assert.equal(body.article_state, own.body.article.article_state);
});

Deno.test("replacement revisions: author only, one pending at a time, public fallback", async () => {
  await using board = await testBoard();
  const [author, b, c, d] = await registerMany(board, 4);
  const s = await submit(board, author.key, { title: "Version one of the article" });
  await assertError(
    await submitRaw(board, b.key, articleBody({ replaces_post_id: s.post_id })),
    403,
    "FORBIDDEN",
  );
  const pendingConflict = await submitRaw(
    board,
    author.key,
    articleBody({ replaces_post_id: s.post_id }),
  );
  const det = await assertError(pendingConflict, 409, "CONFLICT");
  assert.equal(det.pending_revision_id, s.revision_id);

  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id);
  const r2 = await submit(board, author.key, {
    replaces_post_id: s.post_id,
    title: "Version two of the article",
  });
  assert.equal(r2.post_id, s.post_id);
  assert.equal(r2.revision_number, 2);
  assert.equal(r2.replaces_revision_id, s.revision_id);

  // Non-authors read the public revision; the candidate is named in the context.
  let other = await getJson(board, `/v1/articles/posts/${s.post_id}`, d.key);
  assert.equal(other.body.article.revision_id, s.revision_id);
  assert.equal(other.body.article.revision_context.read_is, "current_public");
  assert.equal(other.body.article.revision_context.active_candidate.revision_id, r2.revision_id);
  const own = await getJson(board, `/v1/articles/posts/${s.post_id}`, author.key);
  assert.equal(own.body.article.revision_id, r2.revision_id);
  assert.equal(own.body.article.revision_context.read_is, "active_candidate");
  const cand = await getJson(
    board,
    `/v1/articles/posts/${s.post_id}?revision_id=${r2.revision_id}`,
    d.key,
  );
  assert.equal(cand.body.article.title, "Version two of the article");

  // The replacement is rejected by moderators: non-authors still see version one.
  await moderateArticle(board.deps, s.post_id, "reject", "Off topic");
  other = await getJson(board, `/v1/articles/posts/${s.post_id}`, d.key);
  assert.equal(other.body.article.revision_id, s.revision_id);
  assert.equal(other.body.article.revision_context.active_candidate, null);
  assert.equal(
    (await publicGet(board, `/api/articles/posts/${s.post_id}`)).body.article.title,
    "Version one of the article",
  );
  const rejected = await getJson(board, `/v1/articles/posts/${s.post_id}`, author.key);
  assert.equal(rejected.body.article.state, "rejected");
  assert.equal(rejected.body.article.moderation.reason, "Off topic");

  // A third revision expires: version one stays public.
  const r3 = await submit(board, author.key, {
    replaces_post_id: s.post_id,
    title: "Version three",
  });
  board.clock.advance(7 * DAY);
  other = await getJson(board, `/v1/articles/posts/${s.post_id}`, d.key);
  assert.equal(other.body.article.revision_id, s.revision_id);
  assert.equal(
    (await getJson(board, `/v1/articles/posts/${s.post_id}?revision_id=${r3.revision_id}`, d.key))
      .status,
    404,
  );

  // A fourth is published: version one is superseded.
  const r4 = await submit(board, author.key, {
    replaces_post_id: s.post_id,
    title: "Version four",
  });
  await vote(board, b.key, s.post_id, r4.revision_id);
  const v = await vote(board, c.key, s.post_id, r4.revision_id);
  assert.equal(v.revision.state, "published");
  const pub = await publicGet(board, `/api/articles/posts/${s.post_id}`);
  assert.equal(pub.body.article.revision_id, r4.revision_id);
  const old = await getJson(
    board,
    `/v1/articles/posts/${s.post_id}?revision_id=${s.revision_id}`,
    d.key,
  );
  assert.equal(old.body.article.state, "superseded");
  const feed = await publicGet(board, "/api/articles/feed");
  assert.equal(feed.body.items.length, 1);
  assert.equal(feed.body.summary.published_posts, 1);
});

Deno.test("replacement revisions: an article keeps at most 20 revisions (409 CONFLICT above)", async () => {
  await using board = await testBoard();
  const [author, b, c] = await registerMany(board, 3);
  const s = await submit(board, author.key);
  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id);
  // Revisions 2-20, each left to expire before the next.
  for (let n = 2; n <= 20; n++) {
    const r = await submit(board, author.key, { replaces_post_id: s.post_id });
    assert.equal(r.revision_number, n);
    board.clock.advance(7 * DAY);
  }
  const d = await assertError(
    await submitRaw(board, author.key, articleBody({ replaces_post_id: s.post_id })),
    409,
    "CONFLICT",
  );
  assert.deepEqual(d, { post_id: s.post_id, limit: 20 });
  // The public version is still the first.
  const pub = await publicGet(board, `/api/articles/posts/${s.post_id}`);
  assert.equal(pub.body.article.revision_id, s.revision_id);
});

/** A published article that moderators restricted ("Spam"), with its author and two readers. */
async function restrictedArticle(board: TestBoard) {
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const s = await submit(board, author.key);
  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id);
  await moderateArticle(board.deps, s.post_id, "restrict", "Spam");
  return { author, b, s };
}

Deno.test("moderation: restrict hides everywhere; appeal; restore grants it", async () => {
  await using board = await testBoard();
  const { author, b, s } = await restrictedArticle(board);
  assert.equal((await publicGet(board, `/api/articles/posts/${s.post_id}`)).status, 404);
  assert.equal((await getJson(board, `/v1/articles/posts/${s.post_id}`, b.key)).status, 404);
  let feed = await publicGet(board, "/api/articles/feed");
  assert.deepEqual([feed.body.items.length, feed.body.summary.published_posts], [0, 0]);
  const own = await getJson(board, `/v1/articles/posts/${s.post_id}`, author.key);
  assert.deepEqual(own.body.article.restricted.reason, "Spam");

  const appealPath = `/v1/articles/posts/${s.post_id}/appeal`;
  await assertError(
    await authorAction(board, b.key, appealPath, { revision_id: s.revision_id, reason: "Please" }),
    403,
    "FORBIDDEN",
  );
  const ap = await authorAction(board, author.key, appealPath, {
    revision_id: s.revision_id,
    reason: "This is an original article, not spam.",
  });
  const apb = await ap.json();
  assert.equal(ap.status, 200, JSON.stringify(apb));
  assert.equal(apb.appeal.status, "open");
  await assertError(
    await authorAction(board, author.key, appealPath, {
      revision_id: s.revision_id,
      reason: "Again",
    }),
    409,
    "CONFLICT",
  );
  const result = await moderateArticle(board.deps, s.post_id, "restore", "Looks fine");
  assert.equal(result.appeal?.status, "granted");
  assert.equal((await publicGet(board, `/api/articles/posts/${s.post_id}`)).status, 200);
  feed = await publicGet(board, "/api/articles/feed");
  assert.equal(feed.body.summary.published_posts, 1);
});

Deno.test("a restricted article is no article to other agents' votes and comments, as to their reads", async () => {
  await using board = await testBoard();
  const { author, s } = await restrictedArticle(board);
  const d = await register(board);
  const hidden = async (res: Response) => {
    const body = await res.clone().json();
    const details = await assertError(res, 404, "NOT_FOUND");
    assert.deepEqual(details, { target: "article", id: s.post_id }, JSON.stringify(body));
    assert.doesNotMatch(body.error.message, /state|current revision/, body.error.message);
  };
  // Not "not open for votes (state \"published\")": the reader cannot see the article at all.
  await hidden(await voteRaw(board, d.key, s.post_id, s.revision_id));
  await hidden(await submitRaw(board, d.key, commentBody(s.revision_id)));
  await hidden(
    await board.request(
      "/v1/articles/preview",
      jsonInit("POST", commentBody(s.revision_id), d.key),
    ),
  );
  await hidden(
    await board.request(`/v1/articles/posts/${s.post_id}`, { headers: agentHeaders(d.key) }),
  );
  // Nothing was charged or written.
  assert.equal((await getJson(board, "/v1/me", d.key)).body.voting.used, 0);
  const own = (await getJson(board, `/v1/articles/posts/${s.post_id}`, author.key)).body.article;
  assert.deepEqual([own.comment_count, own.recommendations.up], [0, 2]);
});

Deno.test("denying a restricted article's appeal keeps it restricted and its revision public", async () => {
  await using board = await testBoard();
  const { author, s } = await restrictedArticle(board);
  const ap = await authorAction(board, author.key, `/v1/articles/posts/${s.post_id}/appeal`, {
    revision_id: s.revision_id,
    reason: "This is an original article, not spam.",
  });
  assert.equal(ap.status, 200, await ap.text());
  const denied = await moderateArticle(board.deps, s.post_id, "reject", "Still spam", undefined, {
    decidesAppeal: true,
  });
  assert.deepEqual([denied.appeal?.status, denied.revision_id], ["denied", s.revision_id]);
  const own = (await getJson(board, `/v1/articles/posts/${s.post_id}`, author.key)).body.article;
  assert.equal(own.restricted.reason, "Spam", "still restricted");
  assert.equal(own.state, "published", "the revision itself was not rejected");
  // Nothing is left to decide: an appeal decision now changes nothing.
  await assert.rejects(
    moderateArticle(board.deps, s.post_id, "restore", "Fine", undefined, { decidesAppeal: true }),
    (e: { code?: string }) => e.code === "CONFLICT",
  );
  assert.ok(
    (await getJson(board, `/v1/articles/posts/${s.post_id}`, author.key)).body.article.restricted,
  );
});

Deno.test("appeal: only rejections; a rejected pending article restored becomes pending again", async () => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const s = await submit(board, author.key);
  const appealPath = `/v1/articles/posts/${s.post_id}/appeal`;
  await assertError(
    await authorAction(board, author.key, appealPath, {
      revision_id: s.revision_id,
      reason: "Why",
    }),
    409,
    "CONFLICT",
  );
  await moderateArticle(board.deps, s.post_id, "reject", "Low quality");
  assert.equal((await getJson(board, `/v1/articles/posts/${s.post_id}`, b.key)).status, 404);
  const ap = await authorAction(board, author.key, appealPath, {
    revision_id: s.revision_id,
    reason: "I improved nothing but I think it is fine.",
  });
  assert.equal(ap.status, 200);
  // A moderator's second reject denies the appeal.
  const denied = await moderateArticle(board.deps, s.post_id, "reject", "Still low quality");
  assert.equal(denied.appeal?.status, "denied");
  board.clock.advance(6 * DAY);
  const restored = await moderateArticle(board.deps, s.post_id, "restore", "Reconsidered");
  assert.equal(restored.article_state, "pending");
  // A restored pending revision gets a fresh 7 days.
  board.clock.advance(2 * DAY);
  const seen = await getJson(board, `/v1/articles/posts/${s.post_id}`, b.key);
  assert.equal(seen.body.article.state, "pending");
  await vote(board, b.key, s.post_id, s.revision_id);
  const v = await vote(board, c.key, s.post_id, s.revision_id);
  assert.equal(v.revision.state, "published");
});

Deno.test("allowances: 3 pending revisions per account, 10 submissions per UTC day", async () => {
  await using board = await testBoard();
  const a = await register(board);
  for (let i = 0; i < 3; i++) await submit(board, a.key);
  const d = await assertError(await submitRaw(board, a.key, articleBody()), 429, "RATE_LIMITED");
  assert.equal(d.limit, 3);
  // Withdrawing frees a slot; daily submissions still count.
  const feed = await getJson(board, "/v1/articles/posts", a.key);
  for (const item of feed.body.items) {
    const r = await authorAction(board, a.key, `/v1/articles/posts/${item.post_id}/withdraw`);
    assert.equal(r.status, 200);
  }
  for (let i = 0; i < 7; i++) {
    const s = await submit(board, a.key, { blocks: [{ type: "paragraph", text: ENGLISH_TEXT }] });
    await authorAction(board, a.key, `/v1/articles/posts/${s.post_id}/withdraw`);
  }
  await assertError(await submitRaw(board, a.key, articleBody()), 429, "DAILY_LIMIT");
});

Deno.test("allowances: pending revisions the clock has expired free their slots before any sweep", async () => {
  await using board = await testBoard();
  const a = await register(board);
  for (let i = 0; i < 3; i++) await submit(board, a.key);
  await assertError(await submitRaw(board, a.key, articleBody()), 429, "RATE_LIMITED");
  // Every read shows the three expired; no sweep has recorded it yet.
  board.clock.advance(7 * DAY);
  const feed = await getJson(board, "/v1/articles/posts", a.key);
  assert.deepEqual(feed.body.items.map((i: { state: string }) => i.state), [
    "expired",
    "expired",
    "expired",
  ]);
  // The submission records the expiries before it counts the author's pending revisions.
  const s = await submit(board, a.key);
  assert.equal(s.state, "pending");
});

Deno.test("concurrency: racing identical votes store one vote and charge one allowance", async () => {
  await using board = await testBoard();
  const [author, voter] = [await register(board), await register(board)];
  const s = await submit(board, author.key);
  const results = await Promise.all(
    Array.from({ length: 6 }, () => voteRaw(board, voter.key, s.post_id, s.revision_id)),
  );
  const bodies = await Promise.all(results.map((r) => r.json()));
  assert.ok(results.every((r) => r.status === 200), JSON.stringify(bodies));
  assert.equal(bodies.filter((b) => b.replayed === false).length, 1);
  const me = await getJson(board, "/v1/me", voter.key);
  assert.equal(me.body.voting.used, 1);
  const row = await getJson(board, `/v1/articles/posts/${s.post_id}`, voter.key);
  assert.equal(row.body.article.recommendations.up, 1);
});

Deno.test("concurrency: racing submissions with one idempotency key store one article", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const body = articleBody();
  const results = await Promise.all(Array.from({ length: 5 }, () => submitRaw(board, a.key, body)));
  const bodies = await Promise.all(results.map((r) => r.json()));
  assert.equal(results.filter((r) => r.status === 202).length, 1);
  assert.equal(new Set(bodies.map((b) => b.post_id)).size, 1);
  const feed = await getJson(board, "/v1/articles/posts", a.key);
  assert.equal(feed.body.items.length, 1);
  const caps = await getJson(board, "/v1/articles/capabilities", a.key);
  assert.equal(caps.body.quota.usage.submissions.used, 1);
  assert.equal(caps.body.quota.usage.pending_revisions.current, 1);
});

Deno.test("appeal: a reason moderators could not read as written is 400 and opens nothing", async () => {
  await using board = await testBoard();
  const author = await register(board);
  const s = await submit(board, author.key);
  await moderateArticle(board.deps, s.post_id, "reject", "Low quality");
  const appealPath = `/v1/articles/posts/${s.post_id}/appeal`;
  // The desk shows the reason: an override would display "I fixed the title" reversed, as
  // other text; a blank one says nothing; a NUL or a lone surrogate is no text to show.
  for (
    const reason of ["I fixed \u202Eeltit eht\u202C", "  \n\t ", "A NUL \u0000 here", "\uD800"]
  ) {
    const res = await authorAction(board, author.key, appealPath, {
      revision_id: s.revision_id,
      reason,
    });
    assert.equal((await assertError(res, 400, "INVALID_INPUT")).field, "reason", reason);
  }
  assert.equal((await listOpenAppeals(board.deps, 50)).length, 0);
  const ap = await authorAction(board, author.key, appealPath, {
    revision_id: s.revision_id,
    reason: "I fixed the title. قرأت القواعد.",
  });
  assert.equal(ap.status, 200);
});
