/**
 * What the website's read plans rely on (docs/read_plans.md): a guest comment
 * is one commit (nothing charged when it is refused; two posts of one session never both pass
 * on the same reads), the feed's index may hold entries written before it named the revision,
 * and the right moderator key writes nothing.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { findGuestSession, postGuestComment, readGuestCookie } from "../domain/articles/mod.ts";
import { BoardError } from "../domain/errors.ts";
import { assertStatus, testBoard } from "./helpers.ts";
import { commentTree, Guest, publishedArticle } from "./website_helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";

Deno.test("two posts of one session at once: one is stored, the other finds the session moved", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  const value = guest.cookie!.split("=")[1];
  const session = await findGuestSession(board.deps, value);
  const cookie = await readGuestCookie(board.deps, value);
  assert.ok(session && cookie);
  const req = (text: string) => ({
    post_id: a.id,
    parent_id: null,
    text,
    name: "",
    cookie,
    network: guest.network,
  });
  const outcomes = await Promise.allSettled([
    postGuestComment(board.deps, req("The first of two posts sent at once.")),
    postGuestComment(board.deps, req("The second of two posts sent at once.")),
  ]);
  const stored = outcomes.filter((o) => o.status === "fulfilled");
  const refused = outcomes.flatMap((o) => o.status === "rejected" ? [o.reason] : []);
  assert.equal(stored.length, 1);
  assert.equal(refused.length, 1);
  assert.ok(refused[0] instanceof BoardError);
  assert.equal(refused[0].code, "FORBIDDEN");
  assert.equal(refused[0].details?.session, "ended");
  // One charge: the session's hour counter and the network's record count one comment.
  const hour = board.clock.now() - (board.clock.now() % 3600);
  const counted = await board.kv.get(keys.guestCommentCounts("session", session.id, "1h", hour));
  assert.equal(counted.value, 1);
  const network = await board.kv.get(keys.guestNetworkCommentCounts(guest.network));
  assert.deepEqual(network.value?.["1h"], [hour, 1]);
});

Deno.test("a refused guest comment charges nothing", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  // A reply to a comment that does not exist: refused, with the form kept.
  const r = await guest.post(`/articles/${a.id}/comments`, {
    text: "A reply to nothing at all.",
    parent_id: crypto.randomUUID(),
  });
  assert.equal(r.res.status, 400);
  const network = await board.kv.get(keys.guestNetworkCommentCounts(guest.network));
  assert.equal(network.value, null);
  assert.deepEqual(
    await Array.fromAsync(board.kv.list({ prefix: keys.guestCommentPrints.range() })),
    [],
  );
});

Deno.test("an automatically published comment is never stored pending", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  const id = await guest.comment(a.id, "Kind words, stored published at once.");
  assert.deepEqual(
    await Array.fromAsync(board.kv.list({ prefix: keys.articlePendingComments.range() })),
    [],
  );
  const { html } = await new Guest(board).get(`/articles/${a.id}`);
  assert.ok(commentTree(html).has(id));
});

Deno.test("the feed reads index entries that name only the article", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board, { title: "Written before the index named revisions" });
  const entries = await Array.fromAsync(
    board.kv.list({ prefix: keys.articlePublicPostIdBySeq.range() }),
  );
  assert.equal(entries.length, 1);
  assert.deepEqual(entries[0].value, { post_id: a.id, revision_id: a.revision });
  // The older shape: the post id only.
  await board.kv.set(entries[0].key, a.id);
  for (const path of ["/articles", "/", "/articles.atom"]) {
    const res = await board.request(path, { headers: { accept: "text/html" } });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /Written before the index named revisions/);
  }
  const feed = await board.request("/api/articles/feed", {
    headers: { accept: "application/json" },
  });
  assert.equal((await feed.json()).items[0].id, a.id);
});

Deno.test("the right moderator key writes nothing", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  await assertStatus(await modRequest(board, "GET", "/mod/comments/pending"), 200);
  const windows = await Array.fromAsync(
    board.kv.list({ prefix: keys.rateWindows.range("moderator_key_failures") }),
  );
  assert.deepEqual(windows, []);
});
