/**
 * An article's revisions listed by its id (domain/articles/revision_ids.ts, docs/read_plans.md
 * "Articles"): a new revision's id starts with its article's id, so a withdrawal and the
 * moderators' decisions read the revisions beside their first batch; an article whose revisions
 * were stored before (ids of their own) still works, at one round trip more.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { KvMeter, setMeterSource } from "../kv/meter.ts";
import { Tx } from "../kv/tx.ts";
import { idemKey, jsonInit, register, type TestBoard, testBoard } from "./helpers.ts";
import { articleBody, comment, commentBody, submit, submitRaw, vote } from "./article_helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";
import { publishedArticle } from "./website_helpers.ts";

/** Sends one request under a lockstep meter: its status, JSON body and KV round trips. */
async function measured(send: () => Promise<Response>) {
  const meter = new KvMeter({ lockstep: true });
  setMeterSource(() => meter);
  try {
    const res = await send();
    return { status: res.status, body: await res.json(), depth: meter.roundTrips };
  } finally {
    setMeterSource(() => undefined);
  }
}

/**
 * Rewrites an article as a store written before the shared prefix holds it: each revision under
 * an id of its own (a random UUID), with every record that names it (its blocks, the article,
 * the feed entries, the review-queue and due entries, the votes and the comments).
 */
async function withOlderRevisionIds(
  board: TestBoard,
  postId: string,
): Promise<Map<string, string>> {
  const kv = board.kv;
  const post = (await kv.get(keys.articlePosts(postId))).value!;
  const renamed = new Map(post.revision_ids.map((id) => [id, crypto.randomUUID()]));
  const to = (id: string | null) => (id === null ? null : renamed.get(id) ?? id);
  const op = kv.atomic();
  for (const [from, id] of renamed) {
    const rev = (await kv.get(keys.articleRevisions(from))).value!;
    op.delete(keys.articleRevisions(from)).set(keys.articleRevisions(id), { ...rev, id });
    for await (const e of kv.list<string>({ prefix: keys.articleRevisionParts.range(from) })) {
      op.delete(e.key).set(keys.articleRevisionParts(id, e.key[2] as number), e.value);
    }
    for await (const e of kv.list({ prefix: keys.articleVotes.range(from) })) {
      op.delete(e.key).set([...keys.articleVotes.range(id), ...e.key.slice(2)], e.value);
    }
    if (rev.state === "pending" && rev.queue_reviews !== null) {
      op.delete(keys.articleReviewQueue(rev.queue_reviews, rev.submitted_at, from))
        .set(keys.articleReviewQueue(rev.queue_reviews, rev.submitted_at, id), {
          post_id: postId,
          author_id: rev.author_id,
        });
    }
    if (rev.state === "pending" && rev.due_at !== null) {
      op.delete(keys.articleDue(rev.due_at, from))
        .set(keys.articleDue(rev.due_at, id), { post_id: postId });
    }
  }
  for await (const e of kv.list({ prefix: keys.articleComments.range(postId) })) {
    const c = e.value as { revision_id: string };
    op.set(e.key, { ...c, revision_id: to(c.revision_id) });
  }
  const live = [post.public_revision_id, post.candidate_revision_id, post.latest_revision_id];
  op.set(keys.articlePosts(postId), {
    ...post,
    revision_ids: post.revision_ids.map((id) => to(id)!),
    public_revision_id: to(post.public_revision_id),
    candidate_revision_id: to(post.candidate_revision_id),
    latest_revision_id: to(post.latest_revision_id)!,
    latest_comment: post.latest_comment
      ? { ...post.latest_comment, revision_id: to(post.latest_comment.revision_id)! }
      : null,
  });
  op.set(keys.articlePostIdBySeq(post.list_seq), {
    post_id: postId,
    revision_ids: [...new Set(live.filter((id): id is string => !!id).map((id) => to(id)!))]
      .sort(),
  });
  if (post.public_seq !== null && post.public_revision_id) {
    op.set(keys.articlePublicPostIdBySeq(post.public_seq), {
      post_id: postId,
      revision_id: to(post.public_revision_id)!,
    });
  }
  assert.equal((await op.commit()).ok, true);
  return renamed;
}

const withdraw = (board: TestBoard, key: string, postId: string) =>
  measured(() =>
    board.request(
      `/v1/articles/posts/${postId}/withdraw`,
      jsonInit("POST", {}, key, { "idempotency-key": idemKey() }),
    )
  );

Deno.test("a new revision's id starts with its article's id, and stays unique", async () => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const first = await submit(board, author.key);
  await vote(board, b.key, first.post_id, first.revision_id);
  await vote(board, c.key, first.post_id, first.revision_id);
  const replacing = await measured(() =>
    submitRaw(
      board,
      author.key,
      articleBody({ title: "A second revision", replaces_post_id: first.post_id }),
    )
  );
  assert.equal(replacing.status, 202, JSON.stringify(replacing.body));
  assert.equal(replacing.depth, 3, "the credential, one batch with the listing, the commit");
  const second = replacing.body as { revision_id: string };
  for (const id of [first.revision_id, second.revision_id]) {
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal(id.slice(0, 24), first.post_id.slice(0, 24));
  }
  assert.notEqual(first.revision_id, first.post_id);
  assert.notEqual(second.revision_id, first.revision_id);
});

Deno.test("a withdrawal reads the article's revisions with its first batch; one stored before, after it", async () => {
  await using board = await testBoard();
  const [a, b] = [await register(board), await register(board)];
  const fresh = await submit(board, a.key);
  const older = await submit(board, b.key, { title: "An article stored before" });
  const renamed = await withOlderRevisionIds(board, older.post_id);

  const now = await withdraw(board, a.key, fresh.post_id);
  assert.equal(now.status, 200, JSON.stringify(now.body));
  assert.deepEqual(now.body.withdrawn_revision_ids, [fresh.revision_id]);
  assert.equal(now.depth, 3, "the credential, one batch with the listing, the commit");

  const before = await withdraw(board, b.key, older.post_id);
  assert.equal(before.status, 200, JSON.stringify(before.body));
  assert.deepEqual(before.body.withdrawn_revision_ids, [renamed.get(older.revision_id)]);
  assert.equal(before.depth, 4, "the revisions the article names are read after it");
  // The author's pending count came down with both withdrawals.
  for (const who of [a, b]) {
    const count = (await board.kv.get(keys.articleAuthors(who.id))).value;
    assert.equal(count?.pending ?? 0, 0);
  }
});

Deno.test("an article decision reads every revision with the article; one stored before, after it", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const fresh = await publishedArticle(board);
  const older = await publishedArticle(board, { title: "A published article stored before" });
  const renamed = await withOlderRevisionIds(board, older.id);
  const decide = (id: string, action: string) =>
    measured(() =>
      modRequest(board, "POST", `/mod/articles/${id}/decision`, {
        action,
        reason: "Budget check.",
      }, idemKey())
    );

  const now = await decide(fresh.id, "reject");
  assert.equal(now.status, 200, JSON.stringify(now.body));
  assert.equal(now.body.revision_id, fresh.revision);
  assert.equal(now.depth, 2, "one batch with the key's window and the listing, the commit");
  const before = await decide(older.id, "reject");
  assert.equal(before.status, 200, JSON.stringify(before.body));
  assert.equal(before.body.revision_id, renamed.get(older.revision));
  assert.equal(before.depth, 3, "the revisions the article names are read after it");

  // Rejecting a pending revision moves it out of pending: the author's count, named by the
  // article, is read after it and comes down in the same commit.
  const author = await register(board);
  const pending = await submit(board, author.key, { title: "A pending article to reject" });
  assert.equal((await board.kv.get(keys.articleAuthors(author.id))).value?.pending, 1);
  const out = await decide(pending.post_id, "reject");
  assert.equal(out.status, 200, JSON.stringify(out.body));
  assert.equal(out.body.revision_id, pending.revision_id);
  assert.equal(out.depth, 3, "the author's count after the article");
  assert.equal((await board.kv.get(keys.articleAuthors(author.id))).value?.pending, 0);

  // Restoring finds the rejected revision among those listed (or read) and publishes it again.
  for (const [id, rev] of [[fresh.id, fresh.revision], [older.id, renamed.get(older.revision)]]) {
    const restored = await decide(id!, "restore");
    assert.equal(restored.status, 200, JSON.stringify(restored.body));
    assert.equal(restored.body.revision_id, rev);
    assert.equal(restored.body.article_state, "published");
  }
});

Deno.test("a comment decision reads the article's revisions with the comment; one stored before, after it", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const reader = await register(board);
  const fresh = await publishedArticle(board);
  const older = await publishedArticle(board, { title: "A published article stored before" });
  const onFresh = await comment(board, reader.key, fresh.revision);
  const onOlder = await comment(board, reader.key, older.revision);
  // A newer comment on each, so the rejected one is not the article's latest.
  await comment(board, reader.key, fresh.revision);
  await comment(board, reader.key, older.revision);
  await withOlderRevisionIds(board, older.id);
  const decide = (id: string) =>
    measured(() =>
      modRequest(board, "POST", `/mod/comments/${id}/decision`, {
        action: "reject",
        reason: "Budget check.",
      }, idemKey())
    );

  const now = await decide(onFresh.comment_id);
  assert.equal(now.status, 200, JSON.stringify(now.body));
  assert.equal(now.body.status, "rejected");
  assert.equal(
    now.depth,
    3,
    "the locator with the key's window, one batch with the listing, the commit",
  );
  const before = await decide(onOlder.comment_id);
  assert.equal(before.status, 200, JSON.stringify(before.body));
  assert.equal(before.body.status, "rejected");
  assert.equal(before.depth, 4, "the revisions the article names are read after it");
  for (const id of [fresh.id, older.id]) {
    const post = (await board.kv.get(keys.articlePosts(id))).value!;
    assert.equal(post.comment_count, 1, "the rejected comment left the count");
    const rev = (await board.kv.get(keys.articleRevisions(post.public_revision_id!))).value!;
    assert.equal(rev.comment_count, 1);
  }
});

Deno.test("Tx answers a listed key from the listing, and the commit checks it as listed", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const key = ["tx_list_test", "a"];
    await kv.set(key, 1);
    const tx = new Tx(kv);
    await tx.prefetchList({ prefix: ["tx_list_test"] }, 10);
    await kv.set(key, 2); // another writer, after the listing
    assert.equal((await tx.get<number>(key)).value, 1, "the listing answers, not a new read");
    tx.set(["tx_list_test", "b"], 3);
    const res = await tx.build().commit();
    assert.equal(res.ok, false, "the commit checks the entry as listed");
  } finally {
    kv.close();
  }
});

Deno.test("a comment and a reply are 3 round trips; a parent's locator written before, and older revision ids, cost more", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const reader = await register(board);
  const fresh = await publishedArticle(board);
  const older = await publishedArticle(board, { title: "A published article stored before" });
  const post = (body: Record<string, unknown>) =>
    measured(() => submitRaw(board, reader.key, body));

  const top = await post(commentBody(fresh.revision));
  assert.equal(top.status, 202, JSON.stringify(top.body));
  assert.equal(top.depth, 3, "the credential, one batch with the listings, the commit");
  const reply = await post(commentBody(fresh.revision, { parent_id: top.body.comment_id }));
  assert.equal(reply.status, 202, JSON.stringify(reply.body));
  assert.equal(reply.body.depth, 2);
  assert.equal(reply.depth, 3, "the parent's facts come with its locator");

  // A locator written before the copies: the reply reads the parent comment after it.
  const locKey = keys.articleCommentLocators(reply.body.comment_id);
  const { depth: _d, status: _s, ...bare } = (await board.kv.get(locKey)).value!;
  await board.kv.set(locKey, bare);
  const deeper = await post(commentBody(fresh.revision, { parent_id: reply.body.comment_id }));
  assert.equal(deeper.status, 202, JSON.stringify(deeper.body));
  assert.equal(deeper.body.depth, 3);
  assert.equal(deeper.depth, 4);

  // A decision rewrites the copy: a reply to a rejected comment is refused.
  const rejected = await modRequest(
    board,
    "POST",
    `/mod/comments/${top.body.comment_id}/decision`,
    {
      action: "reject",
      reason: "Off topic.",
    },
    idemKey(),
  );
  assert.equal(rejected.status, 200, await rejected.text());
  assert.equal(
    (await board.kv.get(keys.articleCommentLocators(top.body.comment_id))).value?.status,
    "rejected",
  );
  const refused = await post(commentBody(fresh.revision, { parent_id: top.body.comment_id }));
  assert.equal(refused.status, 404, JSON.stringify(refused.body));

  // An article whose revisions have ids of their own: read by name after the revision.
  const renamed = await withOlderRevisionIds(board, older.id);
  const onOlder = await post(commentBody(renamed.get(older.revision)!));
  assert.equal(onOlder.status, 202, JSON.stringify(onOlder.body));
  assert.equal(onOlder.body.post_id, older.id);
  assert.equal(onOlder.depth, 4, "the revision names its article, read after it");
});
