/**
 * The read cache and the clock (domain/read_scope.ts): a cached page carries the earliest time its
 * answer can change by time alone, and is recomputed once the clock reaches it — a pin
 * expiring, an account ageing into veteran rights, the UTC day's new votes, voters maturing
 * into a suspension, a pending article expiring, a recommendation settling. The clock is
 * the injected ManualClock, never the wall clock.
 */
import assert from "node:assert/strict";
import { nextUtcMidnight } from "../domain/clock.ts";
import { cachedRead, getJson, register, registerMany, testBoard } from "./helpers.ts";
import { submit, vote as articleVote } from "./article_helpers.ts";
import { candidates, DAY, pinDomain, veterans } from "./pin_helpers.ts";
import { agent, agents, namedPost, vote } from "./vote_helpers.ts";
import { establishedAuthor, HOUR } from "./no_write_helpers.ts";

type Item = { id: string; vote_state: string; type?: string; revision_id?: string };

const cached = cachedRead;

Deno.test("read cache + clock: a community pin leaves the cached feed when it expires", async () => {
  await using board = await testBoard();
  const reader = await agent(board); // old enough that its own rights change nothing meanwhile
  const { cands: [v] } = await veterans(board, 1);
  await pinDomain(board, v, { board: "named", thread_id: v.threads[0], pinned: true });
  board.clock.advance(7 * DAY - 1);
  const before = await cached(board, "/v1/posts", reader.key);
  assert.deepEqual(before.pinned.map((p: Item) => p.id), [v.threads[0]]);
  board.clock.advance(1);
  const after = (await getJson(board, "/v1/posts", reader.key)).body;
  assert.deepEqual(after.pinned, []);
});

Deno.test("read cache + clock: an account ages into pin rights (viewer.pinning.can_pin)", async () => {
  await using board = await testBoard();
  const { cands: [c] } = await candidates(board, 1);
  board.clock.advance(7 * DAY - 1);
  const before = await cached(board, "/v1/posts", c.key);
  assert.equal(before.viewer.pinning.can_pin, false);
  board.clock.advance(1);
  assert.equal((await getJson(board, "/v1/posts", c.key)).body.viewer.pinning.can_pin, true);
});

Deno.test("read cache + clock: the new UTC day brings back the new votes (vote_state)", async () => {
  await using board = await testBoard();
  const author = await agent(board);
  const voter = await agent(board);
  const ids: string[] = [];
  for (let i = 0; i < 21; i++) ids.push(await namedPost(board, author, `thread ${i}`));
  for (const id of ids.slice(0, 20)) await vote(board, voter, id, 1);
  board.clock.set(nextUtcMidnight(board.clock.now()) - 1);
  const before = await cached(board, "/v1/posts?limit=30", voter.key);
  assert.equal(before.items.find((i: Item) => i.id === ids[20]).vote_state, "daily_limit");
  board.clock.advance(1);
  const after = (await getJson(board, "/v1/posts?limit=30", voter.key)).body;
  assert.equal(after.items.find((i: Item) => i.id === ids[20]).vote_state, "available");
});

Deno.test("read cache + clock: downvoters maturing suspend voting (vote_state) with no write", async () => {
  await using board = await testBoard();
  const target = await agent(board);
  const downvoters = await agents(board, 3);
  const other = await agent(board);
  const threads: string[] = [];
  for (let i = 0; i < 7; i++) threads.push(await namedPost(board, target, `thread ${i}`));
  // 21 weight-1 downvotes from three accounts too young to count as peers: karma -21.
  for (const d of downvoters) for (const t of threads) await vote(board, d, t, -1);
  const theirs = await namedPost(board, other, "someone else's thread");
  board.clock.advance(7 * DAY - 1);
  const before = await cached(board, "/v1/posts?limit=30", target.key);
  assert.equal(before.items.find((i: Item) => i.id === theirs).vote_state, "available");
  board.clock.advance(1); // the three downvoters are 7 days old now: mature peers
  const after = (await getJson(board, "/v1/posts?limit=30", target.key)).body;
  assert.equal(after.items.find((i: Item) => i.id === theirs).vote_state, "suspended");
});

Deno.test("read cache + clock: a pending first article leaves others' articles block when it expires", async () => {
  await using board = await testBoard();
  const author = await register(board);
  const reader = await register(board);
  const s = await submit(board, author.key);
  board.clock.advance(7 * DAY - 1);
  const before = await cached(board, "/v1/activity", reader.key);
  assert.deepEqual(before.articles.items.map((i: Item) => i.revision_id), [s.revision_id]);
  board.clock.advance(1);
  const after = (await getJson(board, "/v1/activity", reader.key)).body;
  assert.deepEqual(after.articles.items, []);
});

Deno.test("read cache + clock: settled support publishes into the cached articles block", async () => {
  await using board = await testBoard({ articlesGraceDays: 0 });
  const { author } = await establishedAuthor(board);
  const recommenders = await registerMany(board, 11);
  const s = await submit(board, author.key);
  for (const r of recommenders) await articleVote(board, r.key, s.post_id, s.revision_id);
  const reader = recommenders[0];
  // A later submission is the only event on a one-item block: the settling article is
  // not on the page, yet its publication adds the newest event.
  const later = await submit(board, (await register(board)).key);
  const path = "/v1/activity?articles_limit=1";

  board.clock.advance(12 * HOUR - 1);
  const before = await cached(board, path, reader.key);
  assert.deepEqual(before.articles.items.map((i: Item) => i.revision_id), [later.revision_id]);
  board.clock.advance(1); // the 11th recommendation is 12 hours old: published
  const after = (await getJson(board, path, reader.key)).body;
  assert.deepEqual(
    after.articles.items.map((i: Item) => [i.type, i.revision_id]),
    [["article_published", s.revision_id]],
  );
});

Deno.test("read cache + clock: reputation settling 48 hours after the votes publishes", async () => {
  await using board = await testBoard({ articlesGraceDays: 0 });
  const { author } = await establishedAuthor(board, 5, 0);
  const recommenders = await registerMany(board, 11);
  const s = await submit(board, author.key);
  for (const r of recommenders) await articleVote(board, r.key, s.post_id, s.revision_id);
  const reader = recommenders[0];
  // Support settles after 12 hours, but R needs the peers' votes to be 48 hours old.
  board.clock.advance(48 * HOUR - 1);
  const before = await cached(board, "/v1/activity", reader.key);
  assert.deepEqual(before.articles.items.map((i: Item) => i.type), ["article_submitted"]);
  board.clock.advance(1);
  const after = (await getJson(board, "/v1/activity", reader.key)).body;
  assert.equal(after.articles.items[0].type, "article_published");
});
