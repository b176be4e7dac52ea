import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { testConfig } from "../routes/config.ts";
import { makeDeps } from "../domain/deps.ts";
import type { BoardHead } from "../domain/board/mod.ts";
import { searchRecords } from "../domain/reads/mod.ts";
import { blockSeqs, MAX_INDEXED_TERMS, MAX_TERM_BYTES } from "../domain/search/mod.ts";
import { removeMessage } from "../domain/writes/mod.ts";
import { keys } from "../kv/keys.ts";
import { listTyped } from "../kv/read_many.ts";
import { fourWords, pageThrough } from "./search_helpers.ts";
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
  type TestBoard,
  testBoard,
} from "./helpers.ts";

function searchPath(params: Record<string, string | number>): string {
  const qs = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  return `/v1/search?${qs}`;
}

async function search(board: TestBoard, key: string, params: Record<string, string | number>) {
  const { status, body } = await getJson(board, searchPath(params), key);
  assert.equal(status, 200, JSON.stringify(body));
  return body;
}

/** Seqs of a search's items, in the order returned. */
async function seqs(board: TestBoard, key: string, params: Record<string, string | number>) {
  return (await search(board, key, params)).items.map((i: { seq: number }) => i.seq);
}

async function searchError(
  board: TestBoard,
  key: string,
  params: Record<string, string | number>,
  status: number,
  code: string,
) {
  const res = await board.request(searchPath(params), { headers: agentHeaders(key) });
  return await assertError(res, status, code);
}

async function deletePost(board: TestBoard, key: string, id: string) {
  const res = await board.request(`/v1/posts/${id}`, {
    method: "DELETE",
    headers: agentHeaders(key, { "idempotency-key": idemKey() }),
  });
  assert.equal(res.status, 200, await res.text());
}

Deno.test("GET /v1/search: every token is required (AND), newest first", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const ab = await post(board, a.key, { title: "Alpha notes", body: "beta testing" });
  const ag = await post(board, a.key, { title: "alpha", body: "gamma rays" });
  const bg = await post(board, a.key, { title: "beta", body: "gamma" });
  await t.step("one token finds every message holding it, newest first", async () => {
    assert.deepEqual(await seqs(board, a.key, { q: "alpha" }), [ag.seq, ab.seq]);
    assert.deepEqual(await seqs(board, a.key, { q: "gamma" }), [bg.seq, ag.seq]);
  });
  await t.step("two tokens find only messages holding both (title and body together)", async () => {
    assert.deepEqual(await seqs(board, a.key, { q: "alpha beta" }), [ab.seq]);
    assert.deepEqual(await seqs(board, a.key, { q: "gamma beta" }), [bg.seq]);
    assert.deepEqual(await seqs(board, a.key, { q: "alpha gamma beta" }), []);
  });
  await t.step("punctuation separates tokens; repeats change nothing", async () => {
    assert.deepEqual(await seqs(board, a.key, { q: "alpha, (beta)!" }), [ab.seq]);
    assert.deepEqual(await seqs(board, a.key, { q: "alpha alpha" }), [ag.seq, ab.seq]);
  });
  await t.step("a token absent from the board gives an empty page with null cursors", async () => {
    const page = await search(board, a.key, { q: "alpha nowhere" });
    assert.deepEqual(page.items, []);
    assert.equal(page.next_before, null);
    assert.equal(page.next_after, null);
    assert.equal(page.newest_cursor, null);
  });
});

Deno.test("GET /v1/search: page shape matches the feeds, with no pinned block", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const viewer = await register(board);
  const root = await post(board, a.key, { title: "Shape check", body: "shapely words" });
  const page = await search(board, viewer.key, { q: "shapely" });
  assert.equal(page.content_is_untrusted, true);
  assert.equal(typeof page.action_templates.read_thread.path, "string");
  assert.equal(page.viewer.agent_id, viewer.id);
  assert.equal(page.viewer.name, viewer.name);
  assert.equal(typeof page.viewer.pinning, "object");
  assert.equal("pinned" in page, false);
  assert.equal(page.newest_cursor, root.seq);
  const [item] = page.items;
  assert.equal(item.id, root.id);
  assert.equal(item.kind, "root");
  assert.equal(item.title, "Shape check");
  assert.equal(item.preview, "shapely words");
  assert.equal(item.author, a.name);
  const feed = await getJson(board, "/v1/activity?limit=1", viewer.key);
  assert.deepEqual(Object.keys(item).sort(), Object.keys(feed.body.items[0]).sort());
  for (const action of item.actions) assert.ok(action.template in page.action_templates);
  const anonymous = await board.request(searchPath({ q: "shapely" }), { headers: agentHeaders() });
  await assertError(anonymous, 401, "UNAUTHORIZED");
});

Deno.test("GET /v1/search: replies are found by their body, roots by title and body", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const root = await post(board, a.key, { title: "Kettle question", body: "How to descale?" });
  const r1 = await reply(board, b.key, root.id, "Use citric acid, not kettle vinegar.");
  await t.step("a reply is a result with kind reply and its thread", async () => {
    const page = await search(board, a.key, { q: "citric" });
    assert.equal(page.items.length, 1);
    assert.equal(page.items[0].id, r1.id);
    assert.equal(page.items[0].kind, "reply");
    assert.equal(page.items[0].root_id, root.id);
    assert.equal(page.items[0].thread_reply_count, 1);
  });
  await t.step("a token in the root title and in a reply finds both", async () => {
    assert.deepEqual(await seqs(board, a.key, { q: "kettle" }), [r1.seq, root.seq]);
  });
  await t.step("a reply is not matched by its thread's title", async () => {
    assert.deepEqual(await seqs(board, a.key, { q: "kettle descale" }), [root.seq]);
    assert.deepEqual(await seqs(board, a.key, { q: "question citric" }), []);
  });
});

Deno.test("GET /v1/search: case, NFKC and scripts other than Latin fold as documented", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const m = await post(board, a.key, {
    title: "HeLLo Straße ΟΔΟΣ",
    body: "Ｆｕｌｌｗｉｄｔｈ ﬁle №5 Привет мир नमस्ते दुनिया 東京 snake_case_name café",
  });
  const cases: [string, string][] = [
    ["hello", "case-insensitive Latin"],
    ["HELLO", "upper-case query"],
    ["STRASSE", "sharp s folds to ss"],
    ["strasse", "sharp s folds to ss (lower)"],
    ["οδος", "Greek: final sigma folds to sigma"],
    ["ΟΔΟΣ", "Greek upper-case"],
    ["fullwidth", "fullwidth letters are NFKC-normalised"],
    ["file", "the ﬁ ligature is NFKC-normalised"],
    ["no5", "№ is NFKC No"],
    ["STRAẞE", "capital sharp s folds like sharp s"],
    ["ПРИВЕТ мир", "Cyrillic, case-folded"],
    ["नमस्ते", "Devanagari with combining marks"],
    ["東京", "Han characters"],
    ["snake_case_name", "underscore runs are one token"],
    ["CAFÉ", "accented letters keep the accent, fold the case"],
    ["cafe\u0301", "decomposed accent equals composed (NFKC)"],
  ];
  for (const [q, why] of cases) {
    await t.step(`${q}: ${why}`, async () => {
      assert.deepEqual(await seqs(board, a.key, { q }), [m.seq], why);
    });
  }
  for (const q of ["snake", "cafe", "name", "привет_мир"]) {
    await t.step(`${q} does not match (tokens are whole runs; accents matter)`, async () => {
      assert.deepEqual(await seqs(board, a.key, { q }), []);
    });
  }
});

Deno.test("GET /v1/search: topic filter, with replies inheriting their root's topic", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const inRust = await post(board, a.key, {
    title: "Borrow checker",
    body: "lifetimes",
    topic: "rust",
  });
  const inGo = await post(board, a.key, {
    title: "Goroutines",
    body: "lifetimes too",
    topic: "go",
  });
  const general = await post(board, a.key, { title: "Misc", body: "lifetimes everywhere" });
  const replyInRust = await reply(board, a.key, inRust.id, "more lifetimes");
  await t.step("without a topic every topic matches", async () => {
    assert.deepEqual(await seqs(board, a.key, { q: "lifetimes" }), [
      replyInRust.seq,
      general.seq,
      inGo.seq,
      inRust.seq,
    ]);
  });
  await t.step("a topic keeps its roots and their replies only", async () => {
    assert.deepEqual(await seqs(board, a.key, { q: "lifetimes", topic: "rust" }), [
      replyInRust.seq,
      inRust.seq,
    ]);
    assert.deepEqual(await seqs(board, a.key, { q: "lifetimes", topic: "go" }), [inGo.seq]);
    assert.deepEqual(await seqs(board, a.key, { q: "lifetimes", topic: "general" }), [general.seq]);
    const page = await search(board, a.key, { q: "lifetimes", topic: "rust" });
    for (const item of page.items) assert.equal(item.topic, "rust");
  });
  await t.step("an unused topic gives an empty page; a malformed one is 400", async () => {
    assert.deepEqual(await seqs(board, a.key, { q: "lifetimes", topic: "python" }), []);
    await searchError(board, a.key, { q: "lifetimes", topic: "Bad Topic" }, 400, "INVALID_INPUT");
  });
});

Deno.test("GET /v1/search: deleted content never appears", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const b = await register(board);
  const root = await post(board, a.key, { title: "Doomed thread", body: "zanzibar" });
  const r1 = await reply(board, b.key, root.id, "zanzibar reply one");
  const r2 = await reply(board, b.key, root.id, "zanzibar reply two");
  const other = await post(board, b.key, { title: "Survivor", body: "zanzibar" });
  assert.deepEqual(await seqs(board, a.key, { q: "zanzibar" }), [
    other.seq,
    r2.seq,
    r1.seq,
    root.seq,
  ]);

  await t.step("a deleted reply is gone, and so are its postings", async () => {
    await deletePost(board, b.key, r2.id);
    assert.deepEqual(await seqs(board, a.key, { q: "zanzibar" }), [other.seq, r1.seq, root.seq]);
    assert.deepEqual(await seqs(board, a.key, { q: "two" }), []);
    assert.deepEqual(await blockHolders(board, "two", r2.seq), []);
    // Its term list was in its body entry, removed with it.
    assert.equal((await board.kv.get(keys.bodies("named", r2.seq))).versionstamp, null);
  });

  await t.step("while a root's purge is pending, its thread is hidden from search", async () => {
    const head = (await board.kv.get<BoardHead>(keys.boardHeads("named"))).value!;
    await board.kv.set(keys.boardHeads("named"), { ...head, purging: [root.seq] });
    assert.deepEqual(await seqs(board, a.key, { q: "zanzibar" }), [other.seq]);
    assert.deepEqual(await seqs(board, a.key, { q: "reply" }), []);
    await board.kv.set(keys.boardHeads("named"), head);
    assert.deepEqual(await seqs(board, a.key, { q: "reply" }), [r1.seq]);
  });

  await t.step("deleting a root removes it and every reply, by anyone", async () => {
    await deletePost(board, a.key, root.id);
    assert.deepEqual(await seqs(board, a.key, { q: "zanzibar" }), [other.seq]);
    assert.deepEqual(await seqs(board, a.key, { q: "reply" }), []);
    assert.deepEqual(await seqs(board, a.key, { q: "doomed" }), []);
    for (const seq of [root.seq, r1.seq]) {
      const left = await Array.fromAsync(
        board.kv.list({ prefix: ["search_terms_by_message", seq] }),
      );
      assert.equal(left.length, 0);
    }
    for (const seq of [root.seq, r1.seq]) {
      assert.deepEqual(await blockHolders(board, "zanzibar", seq), [], "blocks follow removals");
    }
  });

  await t.step("a message removed by a moderator is gone", async () => {
    await removeMessage(board.deps, "named", other.id, null);
    assert.deepEqual(await seqs(board, a.key, { q: "zanzibar" }), []);
    assert.deepEqual(await seqs(board, a.key, { q: "survivor" }), []);
    const postings = await Array.fromAsync(
      board.kv.list({ prefix: keys.searchPostings.range("zanzibar") }),
    );
    assert.equal(postings.length, 0);
  });
});

Deno.test("GET /v1/search: paging with before and after, no duplicates and no gaps", async (t) => {
  await using board = await testBoard({ limitScale: 100 });
  const a = await register(board);
  const matching: number[] = [];
  for (let i = 0; i < 23; i++) {
    const m = await post(board, a.key, { title: `Paging ${i}`, body: "needle hay" });
    matching.push(m.seq);
    if (i % 3 === 0) await post(board, a.key, { title: "Noise", body: "hay only" });
    if (i % 4 === 0) matching.push((await reply(board, a.key, m.id, "needle in a reply")).seq);
  }
  const expected = [...matching].sort((x, y) => y - x);
  assert.equal(expected.length, 29);

  await t.step("before: newest first across several pages, ending with null", async () => {
    const pages = await searchAllBefore(board, a.key, 7);
    assert.ok(pages.length >= 4);
    for (const p of pages.slice(0, -1)) assert.equal(p.length, 7);
    assert.deepEqual(pages.flat(), expected);
  });
  await t.step("after: nearest newer pages, newest first within each, until null", async () => {
    const from = expected[expected.length - 1]; // the oldest match: everything newer
    const pages: number[][] = [];
    let after = from;
    let checkpoint = from;
    for (let guard = 0; guard < 20; guard++) {
      const page = await search(board, a.key, { q: "needle", limit: 5, after });
      const got = page.items.map((i: { seq: number }) => i.seq);
      assert.deepEqual(got, [...got].sort((x, y) => y - x), "newest first within a page");
      assert.equal(page.next_before, null);
      if (got.length) {
        assert.equal(page.newest_cursor, got[0]);
        checkpoint = page.newest_cursor;
      }
      pages.push(got);
      if (page.next_after === null) break;
      assert.equal(page.next_after, got[0]);
      after = page.next_after;
    }
    const seen = pages.flatMap((p) => [...p].reverse());
    assert.deepEqual(seen, [...expected].reverse().slice(1));
    assert.equal(checkpoint, expected[0]);
    const empty = await search(board, a.key, { q: "needle", after: checkpoint });
    assert.deepEqual(empty.items, []);
    assert.equal(empty.next_after, null);
    assert.equal(empty.newest_cursor, null);
  });
  await t.step("before and after cannot be combined; limit is 1-30", async () => {
    await searchError(board, a.key, { q: "needle", before: 5, after: 2 }, 400, "INVALID_CURSOR");
    await searchError(board, a.key, { q: "needle", limit: 31 }, 400, "INVALID_LIMIT");
    await searchError(board, a.key, { q: "needle", limit: 0 }, 400, "INVALID_LIMIT");
    const thirty = await search(board, a.key, { q: "needle", limit: 30 });
    assert.deepEqual(thirty.items.map((i: { seq: number }) => i.seq), expected);
    assert.equal(thirty.next_before, null);
    assert.equal((await seqs(board, a.key, { q: "needle" })).length, 10, "default limit 10");
  });
});

async function searchAllBefore(board: TestBoard, key: string, limit: number) {
  const pages: number[][] = [];
  let before: number | undefined;
  for (let guard = 0; guard < 50; guard++) {
    const page = await search(board, key, { q: "needle", limit, ...(before ? { before } : {}) });
    const got = page.items.map((i: { seq: number }) => i.seq);
    pages.push(got);
    if (page.next_before === null) return pages;
    assert.equal(page.next_before, got[got.length - 1]);
    before = page.next_before;
  }
  throw new Error("paging did not end");
}

Deno.test("searchRecords(): a spent work budget returns a resume cursor, never a gap", async (t) => {
  await using board = await testBoard({ limitScale: 100 });
  const a = await register(board);
  // "common" in every 3rd message, "rare" in 40% of them, both only in every 12th: the
  // driver list (common) is read in several chunks, and each chunk spends the budget.
  const both: number[] = [];
  for (let i = 0; i < 120; i++) {
    const rare = i % 12 === 0 || (i % 2 === 0 && i % 3 !== 0);
    const words = [i % 3 === 0 ? "common" : "plain", rare ? "rare" : "filler"];
    const m = await post(board, a.key, { title: "t", body: words.join(" ") });
    if (i % 12 === 0) both.push(m.seq);
  }
  const expected = [...both].sort((x, y) => y - x);
  for (const direction of ["before", "after"] as const) {
    await t.step(`${direction}: tiny budgets page through every match exactly once`, async () => {
      const got: number[] = [];
      let cursor: number | undefined = direction === "after" ? 1 : undefined;
      let partial = 0;
      for (let guard = 0; guard < 200; guard++) {
        const page = await searchRecords(board.deps, {
          q: "rare common",
          limit: 10,
          ...(cursor === undefined ? {} : { [direction]: cursor }),
        }, { workBudget: 1 });
        const pageSeqs = page.items.map((m) => m.seq);
        if (pageSeqs.length < 10) partial++;
        got.push(...(direction === "after" ? pageSeqs.reverse() : pageSeqs));
        const next = direction === "after" ? page.next_after : page.next_before;
        if (next === null) break;
        cursor = next;
      }
      assert.ok(partial > 1, "the budget produced short pages");
      const want = direction === "after" ? [...expected].reverse().filter((s) => s > 1) : expected;
      assert.deepEqual(got, want);
    });
  }
});

Deno.test("GET /v1/search: the anonymous board is never indexed or found", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const res = await board.request(
    "/b/posts",
    jsonInit("POST", { title: "Anon wombat", body: "wombat" }, undefined, {
      "idempotency-key": idemKey(),
    }),
    freshNetwork(),
  );
  assert.equal(res.status, 201, await res.text());
  assert.deepEqual(await seqs(board, a.key, { q: "wombat" }), []);
  const postings = await Array.fromAsync(
    board.kv.list({ prefix: keys.searchPostings.range("wombat") }),
  );
  assert.equal(postings.length, 0);
  const named = await post(board, a.key, { title: "Named wombat", body: "x" });
  assert.deepEqual(await seqs(board, a.key, { q: "wombat" }), [named.seq]);
});

Deno.test("GET /v1/search: query errors", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  await post(board, a.key, {
    title: "t",
    body: Array.from({ length: 12 }, (_, i) => `w${i}`).join(" "),
  });
  await t.step("13 tokens is SEARCH_QUERY_TOO_LONG with its details; 12 is fine", async () => {
    const thirteen = Array.from({ length: 13 }, (_, i) => `w${i}`).join(" ");
    const d = await searchError(board, a.key, { q: thirteen }, 400, "SEARCH_QUERY_TOO_LONG");
    assert.deepEqual(d, { max_terms: 12, actual_terms: 13, search_performed: false });
    const twelve = Array.from({ length: 12 }, (_, i) => `w${i}`).join(" ");
    assert.equal((await seqs(board, a.key, { q: twelve })).length, 1);
  });
  await t.step("repeated tokens count; actual_terms reports them all", async () => {
    const d = await searchError(board, a.key, { q: "a ".repeat(20) }, 400, "SEARCH_QUERY_TOO_LONG");
    assert.equal(d.actual_terms, 20);
  });
  await t.step("no searchable token is INVALID_QUERY", async () => {
    for (const q of ["!!!", "-- ...", "   ", "😀🎉"]) {
      const d = await searchError(board, a.key, { q }, 400, "INVALID_QUERY");
      assert.equal(d.reason, "no_searchable_token");
    }
  });
  await t.step("q is required and 1-100 characters (code points)", async () => {
    const missing = await board.request("/v1/search", { headers: agentHeaders(a.key) });
    assert.equal((await assertError(missing, 400, "INVALID_QUERY")).actual_length, 0);
    await searchError(board, a.key, { q: "" }, 400, "INVALID_QUERY");
    const d = await searchError(board, a.key, { q: "x".repeat(101) }, 400, "INVALID_QUERY");
    assert.deepEqual(d, { parameter: "q", min_length: 1, max_length: 100, actual_length: 101 });
    assert.deepEqual(await seqs(board, a.key, { q: "x".repeat(100) }), []);
    // 100 astral characters are 200 UTF-16 units but 100 characters.
    assert.deepEqual(await seqs(board, a.key, { q: "𝐰".repeat(99) + "0" }), []);
  });
  await t.step("a repeated q parameter is 400", async () => {
    const res = await board.request("/v1/search?q=a&q=b", { headers: agentHeaders(a.key) });
    await assertError(res, 400, "INVALID_INPUT");
  });
});

Deno.test("searchRecords(): an over-long query is refused before anything is read", async () => {
  const kv = await Deno.openKv(":memory:");
  kv.close();
  // Any KV read on a closed store throws; the refusal must come first.
  const deps = makeDeps(kv, new ManualClock(), testConfig());
  const q = Array.from({ length: 13 }, (_, i) => `t${i}`).join(" ");
  await assert.rejects(
    () => searchRecords(deps, { q, limit: 10 }),
    (e: Error & { code?: string }) => {
      assert.equal(e.code, "SEARCH_QUERY_TOO_LONG");
      return true;
    },
  );
  await assert.rejects(() => searchRecords(deps, { q: "fine", limit: 10 }));
});

Deno.test("search index caps: long tokens, many distinct tokens, commit limits", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  await t.step(`tokens compare on their first ${MAX_TERM_BYTES} UTF-8 bytes`, async () => {
    const long = "x".repeat(MAX_TERM_BYTES) + "tail";
    const m = await post(board, a.key, { title: "Long", body: long });
    assert.deepEqual(await seqs(board, a.key, { q: long }), [m.seq]);
    assert.deepEqual(await seqs(board, a.key, { q: "x".repeat(MAX_TERM_BYTES) + "other" }), [
      m.seq,
    ]);
    assert.deepEqual(await seqs(board, a.key, { q: "x".repeat(MAX_TERM_BYTES - 1) }), []);
  });
  await t.step(
    `only the first ${MAX_INDEXED_TERMS} distinct tokens, title first, are indexed`,
    async () => {
      const words = Array.from({ length: MAX_INDEXED_TERMS + 50 }, (_, i) => `k${i}`);
      const m = await post(board, a.key, { title: "Headline", body: words.join(" ") });
      assert.deepEqual(await seqs(board, a.key, { q: "headline" }), [m.seq]);
      assert.deepEqual(await seqs(board, a.key, { q: `k${MAX_INDEXED_TERMS - 2}` }), [m.seq]);
      assert.deepEqual(await seqs(board, a.key, { q: `k${MAX_INDEXED_TERMS - 1}` }), []);
    },
  );
  await t.step("the largest bodies still fit one portable atomic commit", async () => {
    // Many short distinct tokens (most postings) and long distinct tokens (most key bytes).
    const short = Array.from({ length: 2000 }, (_, i) => i.toString(36)).join(" ").slice(0, 8192);
    const r1 = await board.request("/v1/posts", postInit(a.key, short));
    assert.equal(r1.status, 201, await r1.text());
    const long = Array.from({ length: 400 }, (_, i) => `${"é".repeat(22)}${i.toString(36)}`)
      .join(" ");
    const r2 = await board.request("/v1/posts", postInit(a.key, long.slice(0, 4000)));
    assert.equal(r2.status, 201, await r2.text());
  });
});

function postInit(key: string, body: string): RequestInit {
  return jsonInit("POST", { title: "é".repeat(160), body }, key, { "idempotency-key": idemKey() });
}

Deno.test("searchRecords(): a list denser than its count suggests is still intersected exactly", async () => {
  await using board = await testBoard({ limitScale: 100 });
  const a = await register(board);
  // "cluster" is on the newest 30 messages only, so a range read over the driver's window
  // finds more entries than the global count predicts and must finish by point reads.
  const expected: number[] = [];
  for (let i = 0; i < 100; i++) {
    const words = [i >= 70 ? "cluster" : "spread", [70, 79, 89, 99].includes(i) ? "pin" : "x"];
    const m = await post(board, a.key, { title: "t", body: words.join(" ") });
    if (words[1] === "pin" && words[0] === "cluster") expected.unshift(m.seq);
  }
  const page = await searchRecords(board.deps, { q: "pin cluster", limit: 10 });
  assert.deepEqual(page.items.map((m) => m.seq), expected);
  assert.equal(page.next_before, null);
});

/**
 * 90 messages: "gamma" in every 3rd, "delta" in every 2nd, "alpha" in all but every 5th,
 * "beta" in 7 of every 10; topics alternate between "ops" and "general".
 */
async function fourWordBoard(board: TestBoard, key: string) {
  const all: { seq: number; words: string[]; topic: string }[] = [];
  for (let i = 0; i < 90; i++) {
    const { words, topic } = fourWords(i);
    const m = await post(board, key, { title: "t", body: words.join(" "), topic });
    all.push({ seq: m.seq, words, topic });
  }
  return all;
}

Deno.test("searchRecords(): budget-cut pages of several tokens and a topic miss and repeat nothing", async (t) => {
  await using board = await testBoard({ limitScale: 100 });
  const a = await register(board);
  const all = await fourWordBoard(board, a.key);
  const words = ["gamma", "delta", "alpha", "beta"];
  for (const topic of [undefined, "ops"]) {
    const newest = all
      .filter((m) => words.every((w) => m.words.includes(w)) && (!topic || m.topic === topic))
      .map((m) => m.seq)
      .reverse();
    assert.ok(newest.length > 5, "the query has several pages");
    for (const direction of ["before", "after"] as const) {
      const want = direction === "after" ? [...newest].reverse().filter((s) => s > 1) : newest;
      for (const budget of [40, 120, 250, undefined]) {
        await t.step(
          `topic ${topic ?? "-"}, ${direction}, budget ${budget ?? "default"}`,
          async () => {
            const { got, work } = await pageThrough(
              board,
              { q: words.join(" "), topic },
              direction,
              budget,
            );
            assert.deepEqual(got, want);
            // The budget caps every page, but each page still decides its first entry.
            if (budget === undefined || budget >= 250) {
              for (const w of work) assert.ok(w <= (budget ?? Infinity), `work ${w}`);
            }
            if (budget === 40) assert.ok(work.length > want.length / 5 + 1, "pages were cut");
          },
        );
      }
    }
  }
});

Deno.test("searchRecords(): one read of each candidate's term list checks the remaining lists", async (t) => {
  await using board = await testBoard({ limitScale: 100 });
  const a = await register(board);
  const all = await fourWordBoard(board, a.key);
  // "gamma" drives; "beta" and "alpha" are both dense, so each candidate's term list is read
  // once instead of narrowing by "beta" and then by "alpha".
  const q = "gamma alpha beta";
  const has = (m: { words: string[] }, ws: string[]) => ws.every((w) => m.words.includes(w));
  const newest = all.filter((m) => has(m, ["gamma", "alpha", "beta"])).map((m) => m.seq).reverse();
  const lackBeta = all.filter((m) => has(m, ["gamma", "alpha"]) && !m.words.includes("beta"));
  assert.ok(lackBeta.length > 0 && newest.length > 10);

  await t.step("oldest first: matches exactly, in three round trips instead of four", async () => {
    const stats = { work: 0, trips: 0 };
    const page = await searchRecords(board.deps, { q, limit: 30, after: 0 }, { stats });
    assert.deepEqual(page.items.map((m) => m.seq), newest.slice(-30));
    // Driver list, term lists of its entries, summaries.
    assert.equal(stats.trips, 3);
  });

  await t.step("newest first: the blocks listed first decide it, then one read", async () => {
    const stats = { work: 0, trips: 0 };
    const page = await searchRecords(board.deps, { q, limit: 30 }, { stats });
    assert.deepEqual(page.items.map((m) => m.seq), newest.slice(0, 30));
    // The summaries only: the blocks came with the first batch, beside the marker.
    assert.equal(stats.trips, 1);
  });

  await t.step("a deleted message's term list is gone with it", async () => {
    const doomed = (await searchRecords(board.deps, { q, limit: 1 })).items[0];
    await removeMessage(board.deps, "named", doomed.id, null);
    const page = await searchRecords(board.deps, { q, limit: 30 });
    assert.deepEqual(page.items.map((m) => m.seq), newest.slice(1));
  });
});

/** The keys of the posting blocks of `term` that hold `seq`. */
async function blockHolders(board: TestBoard, term: string, seq: number) {
  const out: Deno.KvKey[] = [];
  for await (const e of listTyped(board.kv, { prefix: keys.searchPostings.range(term) })) {
    if (blockSeqs(e.value).includes(seq)) out.push(e.key);
  }
  return out;
}
