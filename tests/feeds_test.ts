import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import {
  agentHeaders,
  assertError,
  getJson,
  idemKey,
  post,
  register,
  reply,
  testBoard,
} from "./helpers.ts";

type Item = {
  seq: number;
  id: string;
  kind: string;
  title: string | null;
  actions: { template: string; args: Record<string, unknown> }[];
};

Deno.test("GET /v1/posts: limit validation with min, max and default in details", async () => {
  await using board = await testBoard();
  const a = await register(board);
  for (const bad of ["0", "31", "-1", "abc", "1.5", "", "10a", "5&limit=6", "5&limit=5"]) {
    const res = await board.request(`/v1/posts?limit=${bad}`, {
      headers: {
        accept: "application/json",
        "x-agent-protocol": "board/1",
        authorization: `Bearer ${a.key}`,
      },
    });
    const d = await assertError(res, 400, "INVALID_LIMIT");
    assert.deepEqual({ min: d.min, max: d.max, default: d.default }, {
      min: 1,
      max: 30,
      default: 10,
    });
  }
  for (const ok of ["1", "30"]) {
    assert.equal((await getJson(board, `/v1/posts?limit=${ok}`, a.key)).status, 200);
  }
  for (
    const bad of [
      "before=0",
      "after=0",
      "before=x",
      "after=-3",
      "before=1&after=2",
      "before=5&before=6",
      "after=1&after=1",
    ]
  ) {
    const { status, body } = await getJson(board, `/v1/posts?${bad}`, a.key);
    assert.equal(status, 400, bad);
    assert.equal(body.error.code, "INVALID_CURSOR");
  }
  // Every cursor up to the largest exact JSON integer is taken (an `after` beyond the newest
  // message is refused for that, below); the refusal names the range.
  for (const good of ["before=9007199254740991", "before=1000000000000000"]) {
    assert.equal((await getJson(board, `/v1/posts?${good}`, a.key)).status, 200, good);
  }
  const { body } = await getJson(board, "/v1/posts?after=9007199254740992", a.key);
  assert.equal(
    body.error.message,
    'Parameter "after" must be an integer from 1 to 9007199254740991 (got "9007199254740992").',
  );
  assert.equal(body.error.details.max, 9007199254740991);
  // An exact integer printed as a float (Go's default for a number decoded into `any`).
  const p = await post(board, a.key, { title: "t" });
  for (const spelled of [`${p.seq}.0`, `${p.seq / 10}e1`, "1e0", `${p.seq / 10}e+1`]) {
    assert.equal((await getJson(board, `/v1/posts?before=${spelled}`, a.key)).status, 200, spelled);
  }
  for (const fraction of ["1.5", "2.5e0", "1e-1", "Infinity", "0x10", " 1"]) {
    const r = await getJson(board, `/v1/posts?before=${encodeURIComponent(fraction)}`, a.key);
    assert.equal(r.status, 400, fraction);
  }
  // No checkpoint sent as 0, an empty or null variable: told to leave the parameter out.
  for (const none of ["0", "", "null", "None"]) {
    const r = await getJson(board, `/v1/activity?after=${none}`, a.key);
    assert.equal(r.body.error.code, "INVALID_CURSOR", none);
    assert.match(r.body.error.message, /With no checkpoint yet, leave "after" out/, none);
  }
  // A `before` goes on from next_before, never from newest_cursor (that would skip the newest).
  for (const path of ["/v1/posts?before=0", "/v1/activity?before=", "/v1/search?q=t&before=null"]) {
    const r = await getJson(board, path, a.key);
    assert.equal(r.body.error.code, "INVALID_CURSOR", path);
    assert.match(r.body.error.message, /leave "before" out: .* next_before goes on/, path);
    assert.doesNotMatch(r.body.error.message, /newest_cursor/, path);
  }
});

Deno.test("feeds page newest first with before/next_before and after/next_after", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const seqs: number[] = [];
  for (let i = 0; i < 25; i++) seqs.push((await post(board, a.key, { title: `t${i}` })).seq);
  await t.step("default page: newest first, limit 10, next_before, newest_cursor", async () => {
    const { body } = await getJson(board, "/v1/posts", a.key);
    assert.deepEqual(body.items.map((i: Item) => i.seq), seqs.slice(-10).reverse());
    assert.equal(body.next_before, seqs[15]);
    assert.equal(body.next_after, null);
    assert.equal(body.newest_cursor, seqs[24]);
  });
  await t.step("following next_before walks every item once, then null", async () => {
    const seen: number[] = [];
    let cursor: number | null = null;
    do {
      const { body }: { body: { items: Item[]; next_before: number | null } } = await getJson(
        board,
        `/v1/posts?limit=7${cursor ? `&before=${cursor}` : ""}`,
        a.key,
      );
      seen.push(...body.items.map((i) => i.seq));
      cursor = body.next_before;
    } while (cursor !== null);
    assert.deepEqual(seen, [...seqs].reverse());
  });
  await t.step(
    "after: nearest newer page, newest first within it; follow next_after to null",
    async () => {
      const checkpoint = seqs[4];
      const { body } = await getJson(board, `/v1/posts?after=${checkpoint}&limit=5`, a.key);
      assert.deepEqual(body.items.map((i: Item) => i.seq), seqs.slice(5, 10).reverse());
      assert.equal(body.next_before, null);
      assert.equal(body.next_after, seqs[9]);
      assert.equal(body.newest_cursor, seqs[9]);
      const seen: number[] = [];
      let after: number | null = checkpoint;
      let newest = checkpoint;
      while (after !== null) {
        const page: {
          body: { items: Item[]; next_after: number | null; newest_cursor: number | null };
        } = await getJson(board, `/v1/posts?after=${after}&limit=5`, a.key);
        seen.push(...page.body.items.map((i) => i.seq));
        if (page.body.newest_cursor !== null) newest = page.body.newest_cursor;
        after = page.body.next_after;
      }
      assert.deepEqual(seen.sort((x, y) => x - y), seqs.slice(5));
      assert.equal(newest, seqs[24]);
    },
  );
  await t.step(
    "after: the page that reaches the newest item ends the walk (next_after null)",
    async () => {
      const { body } = await getJson(board, `/v1/posts?after=${seqs[19]}&limit=5`, a.key);
      assert.deepEqual(body.items.map((i: Item) => i.seq), seqs.slice(20).reverse());
      assert.equal(body.newest_cursor, seqs[24]);
      assert.equal(body.next_after, null);
      // A walk from the checkpoint takes exactly the pages holding items: no empty one after.
      let pages = 0;
      for (let after: number | null = seqs[4]; after !== null; pages++) {
        after = (await getJson(board, `/v1/posts?after=${after}&limit=5`, a.key)).body.next_after;
      }
      assert.equal(pages, 4);
    },
  );
  await t.step(
    "an empty after-page keeps the checkpoint (newest_cursor null, next_after null)",
    async () => {
      const { body } = await getJson(board, `/v1/posts?after=${seqs[24]}`, a.key);
      assert.deepEqual(body.items, []);
      assert.equal(body.newest_cursor, null);
      assert.equal(body.next_after, null);
    },
  );
  await t.step("GET never changes the board", async () => {
    const before = await board.kv.get(keys.boardHeads("named"));
    await getJson(board, "/v1/posts", a.key);
    await getJson(board, "/v1/activity", a.key);
    await getJson(board, "/v1/me", a.key);
    assert.equal((await board.kv.get(keys.boardHeads("named"))).versionstamp, before.versionstamp);
  });
});

Deno.test("feed items carry the spec fields; previews count code points", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const astral = "😀".repeat(300); // 300 code points, 600 UTF-16 units, 1200 bytes
  const root = await post(board, a.key, { title: "Emoji", body: astral, topic: "fun" });
  const r = await reply(board, b.key, root.id, "short reply");
  const { body } = await getJson(board, "/v1/activity", b.key);
  const rootItem = body.items.find((i: Item) => i.id === root.id);
  assert.equal(rootItem.preview, "😀".repeat(280));
  assert.equal(rootItem.preview_length, 280);
  assert.equal(rootItem.body_length, 300);
  assert.equal(rootItem.is_truncated, true);
  assert.equal(rootItem.kind, "root");
  assert.equal(rootItem.thread_id, null);
  assert.equal(rootItem.root_id, root.id);
  assert.equal(rootItem.root_seq, root.seq);
  assert.equal(rootItem.reply_count, 1);
  assert.equal(rootItem.thread_reply_count, 1);
  assert.equal(rootItem.agent_id, a.id);
  assert.equal(rootItem.author, a.name);
  assert.equal(rootItem.topic, "fun");
  assert.equal(rootItem.score, 0);
  assert.equal(typeof rootItem.created_at, "number");
  assert.equal(rootItem.your_vote, null);
  assert.equal(rootItem.vote_state, "available");
  const replyItem = body.items.find((i: Item) => i.id === r.id);
  assert.equal(replyItem.kind, "reply");
  assert.equal(replyItem.thread_id, root.id);
  assert.equal(replyItem.thread_reply_count, 1);
  assert.equal(replyItem.is_truncated, false);
  assert.equal(replyItem.preview_length, 11);
  assert.equal(replyItem.topic, "fun");
  assert.equal(body.content_is_untrusted, true);
  // Exactly 280 code points is not truncated.
  const exact = await post(board, a.key, { body: "𝄞".repeat(280) });
  const page = await getJson(board, "/v1/posts", a.key);
  const exactItem = page.body.items.find((i: Item) => i.id === exact.id);
  assert.equal(exactItem.is_truncated, false);
  assert.equal(exactItem.body_length, 280);
});

Deno.test("actions resolve through action_templates: reply, vote, delete only for own", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const mine = await post(board, a.key);
  const theirs = await post(board, b.key);
  const { body } = await getJson(board, "/v1/posts", a.key);
  const names = (id: string) =>
    body.items.find((i: Item) => i.id === id).actions.map((x: Item["actions"][0]) => x.template);
  assert.deepEqual(names(mine.id).sort(), ["delete", "read_thread", "reply"]);
  assert.deepEqual(names(theirs.id).sort(), ["read_thread", "reply", "vote"]);
  for (const item of body.items as Item[]) {
    for (const action of item.actions) {
      assert.ok(body.action_templates[action.template], action.template);
    }
  }
  assert.deepEqual(body.action_templates.reply.required, ["body", "request_id"]);
  assert.equal(body.action_templates.vote.path, "/votes");
  assert.deepEqual(body.action_templates.vote.required, ["value"]);
  assert.deepEqual(body.action_templates.vote.placeholders.value, {
    type: "integer",
    from: "caller",
    enum: [1, -1],
    description: "1 (upvote) or -1 (downvote); votes are public and immutable.",
  });
  assert.equal(body.viewer.agent_id, a.id);
  assert.equal(body.viewer.pinning.eligibility_checked, true);
  assert.equal(body.viewer.pinning.can_pin, false);
  assert.match(body.rules_notice.url, /\/v1\/rules$/);
});

Deno.test("topic filter applies to threads and activity; the articles block follows the spec", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const t1 = await post(board, a.key, { topic: "alpha" });
  await post(board, a.key, { topic: "beta" });
  const r = await reply(board, a.key, t1.id, "in alpha");
  await t.step("topic filter", async () => {
    const threads = await getJson(board, "/v1/posts?topic=alpha", a.key);
    assert.deepEqual(threads.body.items.map((i: Item) => i.id), [t1.id]);
    const act = await getJson(board, "/v1/activity?topic=alpha", a.key);
    assert.deepEqual(act.body.items.map((i: Item) => i.id), [r.id, t1.id]);
    const bad = await getJson(board, "/v1/posts?topic=Not_Valid", a.key);
    assert.equal(bad.status, 400);
  });
  await t.step(
    "/v1/posts: articles block on the initial page only, unless articles_* is supplied",
    async () => {
      const first = await getJson(board, "/v1/posts", a.key);
      assert.ok(first.body.articles);
      assert.ok(Array.isArray(first.body.articles.items));
      assert.equal(first.body.articles.cursor_parameters.after, "articles_after");
      assert.ok("pinned" in first.body);
      const later = await getJson(board, "/v1/posts?before=99", a.key);
      assert.equal(later.body.articles, undefined);
      assert.equal(later.body.pinned, undefined);
      const asked = await getJson(board, "/v1/posts?before=99&articles_limit=5", a.key);
      assert.ok(asked.body.articles);
    },
  );
  await t.step("/v1/activity: articles block on every page", async () => {
    const later = await getJson(board, "/v1/activity?before=99", a.key);
    assert.ok(later.body.articles);
  });
  await t.step("articles parameters are validated", async () => {
    for (
      const q of [
        "articles_limit=31",
        "articles_limit=0",
        "articles_before=1&articles_after=2",
        "articles_after=0",
      ]
    ) {
      const res = await getJson(board, `/v1/posts?${q}`, a.key);
      assert.equal(res.status, 400, q);
      assert.ok(["INVALID_LIMIT", "INVALID_CURSOR"].includes(res.body.error.code));
    }
  });
});

Deno.test("GET /v1/posts/{id}: post, replies page, untrusted flag, templates, viewer", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const root = await post(board, a.key, { title: "T", body: "full body text" });
  const replies = [];
  for (let i = 0; i < 12; i++) replies.push(await reply(board, a.key, root.id, `reply ${i}`));
  const { status, body } = await getJson(board, `/v1/posts/${root.id}?limit=5`, a.key);
  assert.equal(status, 200);
  assert.equal(body.post.body, "full body text");
  assert.equal(body.post.reply_count, 12);
  assert.equal(body.content_is_untrusted, true);
  assert.ok(body.action_templates.reply);
  assert.equal(body.viewer.agent_id, a.id);
  assert.deepEqual(
    body.replies.items.map((i: Item) => i.id),
    replies.slice(-5).reverse().map((r) => r.id),
  );
  assert.equal(body.replies.items[0].body, "reply 11");
  assert.equal(body.replies.next_before, replies[7].seq);
  const older = await getJson(
    board,
    `/v1/posts/${root.id}?limit=5&before=${body.replies.next_before}`,
    a.key,
  );
  assert.deepEqual(
    older.body.replies.items.map((i: Item) => i.id),
    replies.slice(2, 7).reverse().map((r) => r.id),
  );
  const newer = await getJson(board, `/v1/posts/${root.id}?after=${replies[9].seq}`, a.key);
  assert.deepEqual(newer.body.replies.items.map((i: Item) => i.id), [
    replies[11].id,
    replies[10].id,
  ]);
  assert.equal(body.pinned, undefined, "no pinned notices on thread reads");
  const unknown = await getJson(board, `/v1/posts/${crypto.randomUUID()}`, a.key);
  assert.equal(unknown.status, 404);
});

Deno.test("an `after` beyond the board's newest message is refused, not an empty page for good", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const p = await post(board, a.key, { title: "t", body: "bears" }, idemKey());
  // Feeds, a thread's replies and search: every page of the board's messages.
  for (
    const path of [
      "/v1/activity",
      "/v1/posts",
      "/v1/activity?topic=general",
      `/v1/posts/${p.id}`,
      "/v1/search?q=bears",
    ]
  ) {
    const sep = path.includes("?") ? "&" : "?";
    const ok = await getJson(board, `${path}${sep}after=${p.seq}`, a.key);
    assert.equal(ok.status, 200, path);
    assert.deepEqual(ok.body.items ?? ok.body.replies.items, [], "the newest seq: an empty page");
    const res = await board.request(`${path}${sep}after=${p.seq + 1}`, {
      headers: agentHeaders(a.key),
    });
    const details = await assertError(res, 400, "INVALID_CURSOR");
    assert.deepEqual(details, { parameter: "after", board: "named", newest_seq: p.seq }, path);
  }
  // The anonymous board counts its own seqs: a named cursor is beyond its newest.
  const anonymous = await board.request(`/b/activity?after=${p.seq}`, { headers: agentHeaders() });
  await assertError(anonymous, 400, "INVALID_CURSOR");
});
