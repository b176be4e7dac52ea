import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { purgeReplies, resumePurges } from "../domain/writes/mod.ts";
import {
  agentHeaders,
  assertError,
  freshNetwork,
  getJson,
  idemKey,
  jsonInit,
  post,
  register,
  reply,
  testBoard,
} from "./helpers.ts";

type Board = Awaited<ReturnType<typeof testBoard>>;
function send(board: Board, key: string, body: unknown, idem = idemKey(), path = "/v1/posts") {
  return board.request(
    path,
    jsonInit("POST", body, key, { "idempotency-key": idem }),
    freshNetwork(),
  );
}

Deno.test("POST /v1/posts validates title, topic and body at their boundaries", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  await t.step("title 160 code points (astral) passes, 161 fails", async () => {
    const res = await send(board, a.key, { title: "😀".repeat(160), body: "x" });
    assert.equal(res.status, 201);
    await res.body?.cancel();
    await assertError(
      await send(board, a.key, { title: "😀".repeat(161), body: "x" }),
      400,
      "INVALID_INPUT",
    );
  });
  await t.step("empty title, missing title, non-string title are 400", async () => {
    for (const body of [{ title: "", body: "x" }, { body: "x" }, { title: 5, body: "x" }]) {
      await assertError(await send(board, a.key, body), 400, "INVALID_INPUT");
    }
  });
  await t.step("a title is one line of visible text without bidirectional controls", async () => {
    const refused: [string, RegExp][] = [
      ["line one\r\nline two", /U\+000D, a control character/],
      ["tab\there", /U\+0009/],
      ["bell\u0007", /U\+0007/],
      ["abc\u202Edcba", /U\+202E, a bidirectional control/],
      ["isolated \u2067text", /U\+2067/],
      ["   ", /no visible character/],
      ["\u200B", /no visible character/],
      ["x\u2028y", /U\+2028, a control character or line separator/],
      ["a\u2029b", /U\+2029/],
      // Blank by other means: variation selectors, Hangul fillers, the combining grapheme
      // joiner, a lone combining mark, the blank braille pattern.
      ["\uFE0F\uFE0E", /no visible character/],
      ["\u3164", /no visible character/],
      ["\u115F\u1160", /no visible character/],
      ["\uFFA0", /no visible character/],
      ["\u034F\u034F", /no visible character/],
      ["\u17B4", /no visible character/],
      ["\u0301", /no visible character/],
      ["\u2800", /no visible character/],
    ];
    for (const [title, message] of refused) {
      const res = await send(board, a.key, { title, body: "x" });
      const details = await assertError(res.clone(), 400, "INVALID_INPUT");
      assert.equal(details.field, "title", JSON.stringify(title));
      assert.match((await res.json()).error.message, message);
    }
    // Right-to-left scripts, marks and emoji sequences (joined by U+200D) are titles like any.
    for (
      const title of [
        "שלום עולם",
        "مرحبا بالعالم",
        "a\u200Fb",
        "👨‍👩‍👧 family notes",
        "नमस्ते दुनिया",
        "Cafe\u0301 notes",
        "❤️ keycap 1️⃣",
        "한국어 제목",
      ]
    ) {
      const res = await send(board, a.key, { title, body: "x" });
      assert.equal(res.status, 201, title);
      await res.body?.cancel();
    }
  });
  await t.step(
    "a body or reply of only whitespace or invisible characters is refused",
    async () => {
      const root = await (await send(board, a.key, { title: "A thread", body: "x" })).json();
      for (const body of [" ", "\n\t ", "\u200B", "\u3164", "\uFE0F"]) {
        for (const path of ["/v1/posts", `/v1/posts/${root.id}/replies`, "/b/posts"]) {
          const fields = path === "/v1/posts" || path === "/b/posts"
            ? { title: "t", body }
            : { body };
          const res = await send(board, path === "/b/posts" ? "" : a.key, fields, idemKey(), path);
          const details = await assertError(res.clone(), 400, "INVALID_INPUT");
          assert.deepEqual(
            details,
            { field: "body", reason: "blank" },
            JSON.stringify([body, path]),
          );
        }
      }
      // Indented text, a lone emoji or a mark on a letter is text.
      for (const body of ["  indented", "👍", "e\u0301"]) {
        const res = await send(board, a.key, { title: "t", body });
        assert.equal(res.status, 201, JSON.stringify(body));
        await res.body?.cancel();
      }
    },
  );
  await t.step("topic pattern and length", async () => {
    for (const topic of ["Has-Caps", "-lead", "sp ace", "a".repeat(41), "", "ü"]) {
      await assertError(
        await send(board, a.key, { title: "t", body: "x", topic }),
        400,
        "INVALID_INPUT",
      );
    }
    const res = await send(board, a.key, { title: "t", body: "x", topic: "a".repeat(40) });
    assert.equal(res.status, 201);
    await res.body?.cancel();
  });
  await t.step(
    "body of exactly 8192 UTF-8 bytes (multi-byte) passes; 8193 is 413 with actual_bytes",
    async () => {
      const ok = "é".repeat(4096); // 8192 bytes
      const res = await send(board, a.key, { title: "t", body: ok });
      assert.equal(res.status, 201);
      await res.body?.cancel();
      const d = await assertError(
        await send(board, a.key, { title: "t", body: ok + "a" }),
        413,
        "PAYLOAD_TOO_LARGE",
      );
      assert.equal(d.scope, "post_text");
      assert.equal(d.actual_bytes, 8193);
      assert.equal(d.limit_bytes, 8192);
    },
  );
  await t.step("4-byte characters: 2048 pass, 2049 fail", async () => {
    const res = await send(board, a.key, { title: "t", body: "𝄞".repeat(2048) });
    assert.equal(res.status, 201);
    await res.body?.cancel();
    const d = await assertError(
      await send(board, a.key, { title: "t", body: "𝄞".repeat(2049) }),
      413,
      "PAYLOAD_TOO_LARGE",
    );
    assert.equal(d.actual_bytes, 8196);
  });
  await t.step("empty body and unknown fields are 400", async () => {
    await assertError(await send(board, a.key, { title: "t", body: "" }), 400, "INVALID_INPUT");
    await assertError(
      await send(board, a.key, { title: "t", body: "x", pinned: true }),
      400,
      "INVALID_INPUT",
    );
  });
  await t.step("a post containing a board API key is refused", async () => {
    const d = await assertError(
      await send(board, a.key, { title: "oops", body: `my key ${a.key}` }),
      400,
      "CREDENTIAL_IN_CONTENT",
    );
    assert.equal(d.field, "body");
  });
  await t.step("text with a lone surrogate is refused, never stored", async () => {
    const raw = '{"title":"t","body":"bad \\ud800 text"}';
    await assertError(await send(board, a.key, raw), 400, "INVALID_INPUT");
  });
});

Deno.test("POST /v1/posts: receipts, default topic and Idempotency-Key rules", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  await t.step("missing key is 400 IDEMPOTENCY_KEY_REQUIRED; malformed keys are 400", async () => {
    const res = await board.request(
      "/v1/posts",
      jsonInit("POST", { title: "t", body: "b" }, a.key),
    );
    await assertError(res, 400, "IDEMPOTENCY_KEY_REQUIRED");
    for (
      const bad of [
        "short-key-15chr",
        "a".repeat(129),
        "has space in the key",
        "semi;colon;in;key;x",
      ]
    ) {
      await assertError(
        await send(board, a.key, { title: "t", body: "b" }, bad),
        400,
        "INVALID_INPUT",
      );
    }
    const ok16 = await send(board, a.key, { title: "t", body: "b" }, "a".repeat(16));
    assert.equal(ok16.status, 201);
    await ok16.body?.cancel();
    const ok128 = await send(board, a.key, { title: "t", body: "b" }, "B".repeat(128));
    assert.equal(ok128.status, 201);
    await ok128.body?.cancel();
  });
  const key = idemKey();
  let first: Record<string, unknown> = {};
  await t.step("201 receipt has id, seq, thread_id null, url", async () => {
    const res = await send(board, a.key, { title: "Hello", body: "World" }, key);
    assert.equal(res.status, 201);
    first = await res.json();
    assert.deepEqual(Object.keys(first).sort(), ["id", "seq", "thread_id", "url"]);
    assert.equal(first.thread_id, null);
    assert.equal(first.url, `http://board.test/v1/posts/${first.id}`);
    assert.ok((first.seq as number) >= 1);
  });
  await t.step("same key + same payload replays with 200 and replayed: true", async () => {
    const res = await send(board, a.key, { title: "Hello", body: "World" }, key);
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.id, first.id);
    assert.equal(body.seq, first.seq);
    assert.equal(body.replayed, true);
    const feed = await getJson(board, "/v1/posts", a.key);
    assert.equal(feed.body.items.filter((i: { title: string }) => i.title === "Hello").length, 1);
  });
  await t.step(
    "same key + different payload is 409 IDEMPOTENCY_CONFLICT linking the lookup route",
    async () => {
      const d = await assertError(
        await send(board, a.key, { title: "Hello", body: "Changed" }, key),
        409,
        "IDEMPOTENCY_CONFLICT",
      );
      assert.match(d.lookup, /\/v1\/me\/publications\/lookup$/);
      assert.equal(d.lookup_header, "Idempotency-Key");
      assert.equal(d.header, "Idempotency-Key", "the same shape as every other conflict");
    },
  );
  await t.step("the same key used by another agent is independent", async () => {
    const b = await register(board);
    const res = await send(board, b.key, { title: "Hello", body: "World" }, key);
    assert.equal(res.status, 201);
    await res.body?.cancel();
  });
  await t.step("topic defaults to general", async () => {
    const feed = await getJson(board, "/v1/posts?topic=general", a.key);
    assert.ok(feed.body.items.some((i: { id: string }) => i.id === first.id));
    assert.equal(feed.body.items[0].topic, "general");
  });
});

Deno.test("GET /v1/me/publications/lookup finds own retained writes by header key", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const key = idemKey();
  const p = await post(board, a.key, {}, key);
  const lookup = (k: string, idem: string) =>
    getJsonWith(board, "/v1/me/publications/lookup", k, { "idempotency-key": idem });
  const found = await lookup(a.key, key);
  assert.equal(found.body.found, true);
  assert.equal(found.body.publication.id, p.id);
  assert.equal(found.body.publication.seq, p.seq);
  assert.equal(found.body.publication.url, p.url);
  assert.equal(typeof found.body.publication.created_at, "number");
  assert.equal((await lookup(b.key, key)).body.found, false, "scoped to the caller");
  assert.equal((await lookup(a.key, idemKey())).body.found, false);
  const viaQuery = await getJsonWith(
    board,
    `/v1/me/publications/lookup?idempotency_key=${key}`,
    a.key,
    {},
  );
  assert.equal(viaQuery.status, 400, "the key goes in the header, not the URL");
  assert.equal(viaQuery.body.error.code, "IDEMPOTENCY_KEY_REQUIRED");
  assert.match(viaQuery.body.error.message, /lookup needs .*the key the original write/);
  assert.doesNotMatch(viaQuery.body.error.message, /Writes need/);
  const before = await board.kv.get(keys.boardHeads("named"));
  await lookup(a.key, key);
  assert.equal((await board.kv.get(keys.boardHeads("named"))).versionstamp, before.versionstamp);
  const del = await board.request(`/v1/posts/${p.id}`, {
    method: "DELETE",
    headers: agentHeaders(a.key),
  });
  await del.body?.cancel();
  assert.equal((await lookup(a.key, key)).body.found, false, "deleted posts are not retained");
});

async function getJsonWith(board: Board, path: string, key: string, extra: Record<string, string>) {
  const res = await board.request(path, { headers: agentHeaders(key, extra) });
  return { status: res.status, body: await res.json() };
}

Deno.test("replies attach to the root; reply_to_id must be in the same discussion", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const root = await post(board, a.key);
  const other = await post(board, a.key);
  const r1 = await reply(board, b.key, root.id, "first");
  await t.step("reply receipt names its thread", () => {
    assert.equal(r1.thread_id, root.id);
    assert.equal(r1.url, `http://board.test/v1/posts/${root.id}#${r1.id}`);
  });
  await t.step("reply_to_id of a message in the thread is accepted", async () => {
    const r2 = await reply(board, a.key, root.id, "second", { reply_to_id: r1.id });
    const thread = await getJson(board, `/v1/posts/${root.id}`, a.key);
    const item = thread.body.replies.items.find((i: { id: string }) => i.id === r2.id);
    assert.equal(item.reply_to_id, r1.id);
    assert.equal(item.thread_id, root.id);
    assert.equal(thread.body.post.reply_count, 2);
  });
  await t.step("reply_to_id from another thread is 400", async () => {
    const r3 = await reply(board, a.key, other.id, "elsewhere");
    const res = await send(
      board,
      b.key,
      { body: "x", reply_to_id: r3.id },
      idemKey(),
      `/v1/posts/${root.id}/replies`,
    );
    const details = await assertError(res, 400, "INVALID_INPUT");
    // The error names the thread the message is in, where the caller can answer it.
    assert.deepEqual(details, { field: "reply_to_id", root_id: other.id });
  });
  await t.step("replying to a reply id (not a root) is 404", async () => {
    const res = await send(board, b.key, { body: "x" }, idemKey(), `/v1/posts/${r1.id}/replies`);
    await assertError(res, 404, "NOT_FOUND");
  });
  await t.step("replying to an unknown thread is 404", async () => {
    const res = await send(
      board,
      b.key,
      { body: "x" },
      idemKey(),
      `/v1/posts/${crypto.randomUUID()}/replies`,
    );
    await assertError(res, 404, "NOT_FOUND");
  });
  await t.step("reply bodies have the same 8192-byte limit", async () => {
    const res = await send(
      board,
      b.key,
      { body: "é".repeat(4097) },
      idemKey(),
      `/v1/posts/${root.id}/replies`,
    );
    await assertError(res, 413, "PAYLOAD_TOO_LARGE");
  });
  await t.step("reply idempotency replays", async () => {
    const key = idemKey();
    const path = `/v1/posts/${root.id}/replies`;
    const x = await send(board, b.key, { body: "same" }, key, path);
    assert.equal(x.status, 201);
    const first = await x.json();
    const y = await send(board, b.key, { body: "same" }, key, path);
    assert.equal(y.status, 200);
    assert.equal((await y.json()).id, first.id);
  });
});

Deno.test("DELETE /v1/posts/{id}: owner only; a root takes every reply with it", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const root = await post(board, a.key, { title: "doomed" });
  const mine = await reply(board, a.key, root.id, "author reply");
  const theirs = await reply(board, b.key, root.id, "other agent reply");
  await t.step("another agent cannot delete", async () => {
    const res = await board.request(`/v1/posts/${root.id}`, {
      method: "DELETE",
      headers: agentHeaders(b.key),
    });
    await assertError(res, 403, "FORBIDDEN");
  });
  await t.step("deleting a reply lowers the root's reply_count", async () => {
    const res = await board.request(`/v1/posts/${theirs.id}`, {
      method: "DELETE",
      headers: agentHeaders(b.key),
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const thread = await getJson(board, `/v1/posts/${root.id}`, a.key);
    assert.equal(thread.body.post.reply_count, 1);
  });
  const theirs2 = await reply(board, b.key, root.id, "another reply by b");
  await t.step("deleting the root removes all replies, also other agents'", async () => {
    const res = await board.request(`/v1/posts/${root.id}`, {
      method: "DELETE",
      headers: agentHeaders(a.key),
    });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.deleted, true);
    assert.equal(body.replies_removed, 2);
    // A reader following the thread is told it was deleted, not that it never existed.
    const gone = await assertError(
      await board.request(`/v1/posts/${root.id}`, { headers: agentHeaders(a.key) }),
      404,
      "NOT_FOUND",
    );
    assert.deepEqual([gone.target, gone.deleted, gone.kind], ["thread", true, "root"]);
    const reply = await assertError(
      await board.request(`/v1/messages/${mine.id}`, { headers: agentHeaders(b.key) }),
      404,
      "NOT_FOUND",
    );
    assert.deepEqual([reply.deleted, reply.with_thread], [true, true]);
    const act = await getJson(board, "/v1/activity", a.key);
    const ids = act.body.items.map((i: { id: string }) => i.id);
    for (const id of [root.id, mine.id, theirs2.id]) assert.ok(!ids.includes(id));
    for await (const e of board.kv.list({ prefix: ["replies_by_root"] })) {
      assert.fail(`left over ${e.key}`);
    }
    for await (const e of board.kv.list({ prefix: ["purges"] })) assert.fail(`purge left ${e.key}`);
  });
  await t.step("deleting again is 404", async () => {
    const res = await board.request(`/v1/posts/${root.id}`, {
      method: "DELETE",
      headers: agentHeaders(a.key),
    });
    await assertError(res, 404, "NOT_FOUND");
  });
  await t.step("retained counter went back to zero", async () => {
    const n = (await board.kv.get(keys.counters("posts"))).value;
    assert.equal(n, 0);
  });
});

Deno.test("a root deletion hides the thread at once and its purge resumes after a crash", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const root = await post(board, a.key);
  const replies = [];
  for (let i = 0; i < 5; i++) replies.push(await reply(board, a.key, root.id, `r${i}`));
  // Simulate a crash right after the hiding commit: mark the purge by hand, as removeMessage's
  // first commit does, but do not purge.
  const head = (await board.kv.get<{ seq: number; purging: number[] }>(keys.boardHeads("named")))
    .value!;
  const rootRec = (await board.kv.get<{ seq: number }>(keys.messages("named", root.seq))).value!;
  await board.kv.atomic()
    .set(keys.boardHeads("named"), { ...head, purging: [rootRec.seq] })
    .set(keys.purges("named", root.seq), { root_id: root.id, started_at: 0 })
    .delete(keys.messages("named", root.seq))
    .delete(keys.roots("named", root.seq))
    .commit();
  // Hidden everywhere before any purge ran.
  const act = await getJson(board, "/v1/activity", a.key);
  assert.equal(act.body.items.length, 0);
  await assertError(
    await board.request(`/v1/posts/${root.id}`, { headers: agentHeaders(a.key) }),
    404,
    "NOT_FOUND",
  );
  // Partially purge (as if the crash happened midway), then resume.
  await purgeRepliesPartially(board, root.seq, 2);
  assert.equal(await resumePurges(board.deps), 1);
  for await (const e of board.kv.list({ prefix: keys.repliesByRoot.range("named", root.seq) })) {
    assert.fail(`reply left ${e.key}`);
  }
  const headAfter = (await board.kv.get<{ purging: number[] }>(keys.boardHeads("named"))).value!;
  assert.deepEqual(headAfter.purging, []);
  assert.equal(await resumePurges(board.deps), 0);
});

async function purgeRepliesPartially(board: Board, rootSeq: number, n: number) {
  let i = 0;
  for await (const e of board.kv.list({ prefix: keys.repliesByRoot.range("named", rootSeq) })) {
    if (i++ >= n) break;
    const seq = e.key[3] as number;
    await board.kv.atomic().delete(e.key).delete(keys.messages("named", seq)).commit();
  }
  void purgeReplies;
}

Deno.test("concurrency: 50 parallel writes with one Idempotency-Key make exactly one post", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const key = idemKey();
  const results = await Promise.all(
    Array.from({ length: 50 }, () => send(board, a.key, { title: "once", body: "only once" }, key)),
  );
  const bodies = await Promise.all(results.map((r) => r.json()));
  const statuses = results.map((r) => r.status);
  assert.equal(statuses.filter((s) => s === 201).length, 1);
  assert.equal(statuses.filter((s) => s === 200).length, 49);
  assert.equal(new Set(bodies.map((b) => b.id)).size, 1);
  const feed = await getJson(board, "/v1/posts?limit=30", a.key);
  assert.equal(feed.body.items.length, 1);
  const me = await getJson(board, "/v1/me", a.key);
  assert.equal(me.body.posting_quota.used, 1);
});

Deno.test("concurrency: 200 parallel posts from different agents get 200 distinct, gap-free seqs", async () => {
  // 200 registrations in one minute exceed the 120 validated per minute per instance.
  await using board = await testBoard({ limitScale: 2 });
  const agents = [];
  for (let i = 0; i < 200; i++) agents.push(await register(board));
  const receipts = await Promise.all(
    agents.map((a, i) => post(board, a.key, { title: `t${i}`, body: `b${i}` })),
  );
  const seqs = receipts.map((r) => r.seq).sort((x, y) => x - y);
  assert.equal(new Set(seqs).size, 200);
  assert.deepEqual(seqs, Array.from({ length: 200 }, (_, i) => i + 1));
  let count = 0;
  for await (const _ of board.kv.list({ prefix: keys.roots.range("named") })) count++;
  assert.equal(count, 200);
});

Deno.test("a write at retained post capacity is 503 CAPACITY; deleting frees room", async () => {
  await using board = await testBoard({ maxPosts: 2 });
  const a = await register(board);
  const p1 = await post(board, a.key);
  await post(board, a.key);
  const d = await assertError(await send(board, a.key, { title: "t", body: "b" }), 503, "CAPACITY");
  assert.equal(d.limit, 2);
  assert.equal(d.retained, 2);
  const del = await board.request(`/v1/posts/${p1.id}`, {
    method: "DELETE",
    headers: agentHeaders(a.key),
  });
  await del.body?.cancel();
  await post(board, a.key);
});
