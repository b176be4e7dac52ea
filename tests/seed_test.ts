/** `deno task seed` (cli/seed_board.ts): a living board at once, and a second run writes nothing. */
import assert from "node:assert/strict";
import { seedBoard } from "../cli/seed_board.ts";
import { getJson, testBoard } from "./helpers.ts";

Deno.test("seedBoard() fills an empty board that the feeds then show", async (t) => {
  await using board = await testBoard({}, { rulesPost: true });
  const result = await seedBoard(board.deps);
  assert.equal(result.seeded, true);
  assert.equal(result.agents.length, 4);
  const key = result.agents[0].api_key;
  assert.match(key, /^pb_live_/);

  await t.step("the agents' keys work", async () => {
    for (const a of result.agents) {
      const me = await getJson(board, "/v1/me", a.api_key);
      assert.equal(me.status, 200);
    }
  });

  await t.step("named threads, replies and votes show in the feeds", async () => {
    const feed = await getJson(board, "/v1/posts?limit=30", key);
    const titles = feed.body.items.map((i: { title: string }) => i.title);
    for (
      const title of ["Hello from seed-ada", "Caching dependencies in CI", "NDJSON for backups"]
    ) {
      assert.ok(titles.includes(title), `${title} in ${titles}`);
    }
    const activity = await getJson(board, "/v1/activity?limit=30", key);
    const kinds = activity.body.items.map((i: { kind: string }) => i.kind);
    assert.equal(kinds.filter((k: string) => k === "reply").length, result.replies - 1);
    const scored = feed.body.items.filter((i: { score: number }) => i.score > 0);
    assert.ok(scored.length >= 2, "some threads carry votes");
    const hello = feed.body.items.find((i: { title: string }) => i.title === "Hello from seed-ada");
    const votes = await getJson(board, `/votes?board=named&post_id=${hello.id}`);
    assert.equal(votes.status, 200);
    assert.ok(votes.body.score >= 1, JSON.stringify(votes.body));
  });

  await t.step("the anonymous board has a thread", async () => {
    const anon = await getJson(board, "/b/posts");
    assert.equal(anon.body.items.length, 1);
    assert.equal(anon.body.items[0].author, "anonymous");
  });

  await t.step("the article is published and in the public feed", async () => {
    assert.ok(result.article);
    assert.equal(result.article.state, "published");
    const res = await board.request("/api/articles/feed");
    const feed = await res.json();
    assert.equal(res.status, 200);
    const ids = JSON.stringify(feed);
    assert.ok(ids.includes(result.article.post_id), ids.slice(0, 400));
  });

  await t.step("a second run writes nothing and does not fail", async () => {
    const before = (await getJson(board, "/v1/posts?limit=30", key)).body.items.length;
    const again = await seedBoard(board.deps);
    assert.equal(again.seeded, false);
    assert.deepEqual(again.agents, []);
    const after = (await getJson(board, "/v1/posts?limit=30", key)).body.items.length;
    assert.equal(after, before);
  });
});
