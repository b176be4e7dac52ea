/**
 * Comment pages are filled to `limit` on both comment routes: hidden comments (held guest
 * comments here) never use up slots, a short page is the end, and no cursor points at one.
 */
import assert from "node:assert/strict";
import { findComment } from "../domain/articles/mod.ts";
import { getJson, register, testBoard } from "./helpers.ts";
import { comment, publicGet, submit, vote } from "./article_helpers.ts";
import { Guest } from "./website_helpers.ts";

type Page = {
  items: { comment_id?: string; id?: string }[];
  next_before: number | null;
  next_after: number | null;
  newest_cursor: number | null;
};

Deno.test("comment pages fill past held comments; cursors are visible seqs", async (t) => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const s = await submit(board, author.key);
  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id);
  const c1 = await comment(board, b.key, s.revision_id);
  const c2 = await comment(board, c.key, s.revision_id);
  const hidden: number[] = [];
  for (let i = 0; i < 5; i++) {
    // A link holds a guest comment for a moderator; each comes from its own browser.
    const g = await new Guest(board).postComment(
      s.post_id,
      `Held guest comment ${i}, with a link: https://example.org/${i}`,
      { name: `Guest ${i}` },
    );
    assert.equal(g.status, "pending");
    hidden.push((await findComment(board.deps.kv, g.comment_id))!.seq);
  }
  const c3 = await comment(board, b.key, s.revision_id);
  const ids = [c3, c2, c1].map((x) => x.comment_id);

  const routes = {
    agent: (q: string) =>
      getJson(board, `/v1/articles/posts/${s.post_id}/comments?${q}`, b.key).then((r) =>
        r.body as Page
      ),
    public: (q: string) =>
      publicGet(board, `/api/articles/posts/${s.post_id}/comments?${q}`).then((r) =>
        r.body as Page
      ),
  };
  const idOf = (i: Page["items"][0]) => i.comment_id ?? i.id;
  // Items carry no seq: the stored records tell each comment's.
  const seqOf = new Map<string, number>();
  for (const id of ids) seqOf.set(id, (await findComment(board.deps.kv, id))!.seq);
  const seq = (i: Page["items"][0]) => seqOf.get(idOf(i)!)!;
  for (const [name, read] of Object.entries(routes)) {
    await t.step(`${name}: newest first, filled past the held comments`, async () => {
      const first = await read("limit=2");
      assert.deepEqual(first.items.map(idOf), ids.slice(0, 2));
      assert.equal(first.next_before, seq(first.items[1]));
      const second = await read(`limit=2&before=${first.next_before}`);
      assert.deepEqual(second.items.map(idOf), ids.slice(2));
      assert.equal(second.next_before, null, "a short page is the end");
    });
    await t.step(`${name}: a page starting among held comments is not empty`, async () => {
      const page = await read(`limit=1&before=${Math.max(...hidden)}`);
      assert.deepEqual(page.items.map(idOf), [ids[1]]);
      assert.equal(page.next_before, seq(page.items[0]));
    });
    await t.step(`${name}: after= reads the nearest newer visible comments`, async () => {
      const start = seqOf.get(ids[2]!)!; // c1
      const page = await read(`limit=1&after=${start}`);
      assert.deepEqual(page.items.map(idOf), [ids[1]]);
      assert.equal(page.next_after, seq(page.items[0]));
      const next = await read(`limit=5&after=${page.next_after}`);
      assert.deepEqual(next.items.map(idOf), [ids[0]], "skips the held comments");
      assert.equal(next.next_after, null);
      assert.equal(next.newest_cursor, seq(next.items[0]));
    });
    await t.step(`${name}: no cursor names a held comment`, async () => {
      for (const q of ["limit=1", "limit=2", `limit=1&before=${Math.max(...hidden) + 1}`]) {
        const page = await read(q);
        for (const cursor of [page.next_before, page.next_after, page.newest_cursor]) {
          assert.ok(cursor === null || !hidden.includes(cursor), `${q}: ${cursor}`);
        }
      }
    });
  }
});
