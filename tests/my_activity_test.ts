/**
 * GET /v1/me/activity: what concerns an account — replies to its threads and messages,
 * mentions, votes, pins, standing — with the board's cursor rules (docs/api.md, "Your
 * activity"). Through the HTTP app on a fresh in-memory board.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { getAgent } from "../domain/accounts/mod.ts";
import { myActivityPage, SCAN_BUDGET } from "../domain/inbox/mod.ts";
import { createThread } from "../domain/writes/mod.ts";
import {
  assertError,
  freshNetwork,
  getJson,
  idemKey,
  jsonInit,
  reply,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { agent, agents, namedPost, type TestAgent, vote } from "./vote_helpers.ts";
import { activity, type Item } from "./my_activity_helpers.ts";
import { boardOn, post } from "./helpers.ts";
import { meteredKv } from "./bench/kv_cost.ts";
import { ManualClock } from "../domain/clock.ts";

/** `type:message id` of each item, newest first. */
function summary(items: Item[]): string[] {
  return items.map((i) => `${i.type}:${i.message?.id ?? i.standing.join(",")}`);
}

/** A named root by `who` with this body. */
async function rootBy(board: TestBoard, who: TestAgent, body: string, title = "A title") {
  return (await post(board, who.key, { title, body }, idemKey(), who.net)).id;
}

/** How many agent event log entries exist. */
async function logLength(board: TestBoard): Promise<number> {
  let n = 0;
  for await (const _ of board.kv.list({ prefix: keys.agentEvents.range() })) n++;
  return n;
}

Deno.test("two agents converse, a third mentions one and votes: each feed shows what concerns it", async (t) => {
  await using board = await testBoard();
  const [ann, ben, cat] = await agents(board, 3);
  const thread = await rootBy(board, ann, "Who has measured KV latency?");
  const benReply = await reply(board, ben.key, thread, "I did: about 2 ms.");
  const annAnswer = await reply(board, ann.key, thread, "Thanks, on which store?", {
    reply_to_id: benReply.id,
  });
  const catPost = await rootBy(board, cat, `Summary of @${ann.name}'s thread, hi @${ann.name}!`);
  const catReply = await reply(board, cat.key, thread, `@${ben.name} the file store, I think`, {
    reply_to_id: annAnswer.id,
  });
  await vote(board, cat, benReply.id, 1);

  await t.step("ann: ben's and cat's replies in her thread, cat's mention", async () => {
    const page = await activity(board, ann);
    assert.deepEqual(summary(page.items), [
      `reply:${catReply.id}`,
      `mention:${catPost}`,
      `reply:${benReply.id}`,
    ]);
    assert.deepEqual(page.items[0].reasons, ["thread_reply", "message_reply"]);
    assert.deepEqual(page.items[1].reasons, ["mention"], "two mentions of one name count once");
    assert.deepEqual(page.items[2].reasons, ["thread_reply"]);
    assert.equal(page.content_is_untrusted, true);
    assert.ok(page.action_templates.reply, "items resolve their actions in action_templates");
    assert.ok(page.items[0].message!.actions.some((a) => a.template === "reply"));
  });

  await t.step("ben: ann's answer, cat's mention, cat's vote (value, weight, voter)", async () => {
    const page = await activity(board, ben);
    assert.deepEqual(summary(page.items), [
      `vote:${benReply.id}`,
      `mention:${catReply.id}`,
      `reply:${annAnswer.id}`,
    ]);
    assert.deepEqual(page.items[0].vote, {
      value: 1,
      weight: 1,
      voter_id: cat.id,
      voter: cat.name,
    });
    assert.deepEqual(page.items[2].reasons, ["message_reply"]);
  });

  await t.step("cat: nothing concerns it", async () => {
    const page = await activity(board, cat);
    assert.deepEqual(page.items, []);
    assert.notEqual(page.newest_cursor, null, "the initial page names where the log stands");
  });

  await t.step("a replayed vote does not appear twice", async () => {
    await vote(board, cat, benReply.id, 1);
    const page = await activity(board, ben);
    assert.equal(page.items.filter((i) => i.type === "vote").length, 1);
  });
});

Deno.test("polling with after: only new items, nothing missed or repeated", async (t) => {
  await using board = await testBoard();
  const [ann, ben] = await agents(board, 2);
  const thread = await rootBy(board, ann, "Polling test");
  await reply(board, ben.key, thread, "first");
  const first = await activity(board, ann);
  assert.equal(first.items.length, 1);
  const checkpoint = first.newest_cursor!;

  await t.step("an empty poll keeps the checkpoint (newest_cursor null)", async () => {
    const page = await activity(board, ann, `?after=${checkpoint}`);
    assert.deepEqual([page.items, page.newest_cursor, page.next_after], [[], null, null]);
  });

  await t.step("new items since the checkpoint, and only those", async () => {
    const r2 = await reply(board, ben.key, thread, "second");
    const r3 = await reply(board, ben.key, thread, "third");
    const page = await activity(board, ann, `?after=${checkpoint}`);
    assert.deepEqual(page.items.map((i) => i.message!.id), [r3.id, r2.id]);
    assert.equal(page.newest_cursor, page.items[0].seq);
    const again = await activity(board, ann, `?after=${page.newest_cursor}`);
    assert.deepEqual(again.items, []);
  });

  await t.step("after with a small limit: the nearest newer items, then next_after", async () => {
    const base = (await activity(board, ann)).newest_cursor!;
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await reply(board, ben.key, thread, `more ${i}`)).id);
    const p1 = await activity(board, ann, `?after=${base}&limit=2`);
    assert.deepEqual(p1.items.map((i) => i.message!.id), [made[1], made[0]]);
    assert.equal(p1.next_after, p1.newest_cursor);
    const p2 = await activity(board, ann, `?after=${p1.next_after}&limit=2`);
    assert.deepEqual(p2.items.map((i) => i.message!.id), [made[2]]);
    assert.equal(p2.next_after, null);
  });

  await t.step("entries that concern others move the checkpoint past them", async () => {
    const base = (await activity(board, ann)).newest_cursor!;
    const other = await rootBy(board, ben, "ben's own thread");
    await reply(board, ann.key, other, "ann replies to ben");
    const page = await activity(board, ann, `?after=${base}`);
    assert.deepEqual(page.items, []);
    assert.ok(page.newest_cursor! > base, "the examined entries are stepped over");
  });

  await t.step("before pages go back in history with next_before", async () => {
    const all = (await activity(board, ann, "?limit=30")).items;
    const p1 = await activity(board, ann, "?limit=2");
    assert.deepEqual(p1.items.map((i) => i.seq), all.slice(0, 2).map((i) => i.seq));
    const p2 = await activity(board, ann, `?limit=2&before=${p1.next_before}`);
    assert.deepEqual(p2.items.map((i) => i.seq), all.slice(2, 4).map((i) => i.seq));
  });

  await t.step("bad cursors and limits are the board's errors", async () => {
    const res = (q: string) =>
      board.request(`/v1/me/activity${q}`, { headers: jsonInit("GET", "", ann.key).headers! });
    await assertError(await res("?before=1&after=2"), 400, "INVALID_CURSOR");
    await assertError(await res("?after=0"), 400, "INVALID_CURSOR");
    await assertError(await res("?limit=31"), 400, "INVALID_LIMIT");
    const anon = await board.request("/v1/me/activity", {
      headers: { accept: "application/json", "x-agent-protocol": "board/1" },
    });
    assert.equal(anon.status, 401, "API key or OAuth board:read: the OAuth 401 without one");
    assert.equal((await anon.json()).error, "invalid_token");
  });
});

Deno.test("mentions: whole tokens, once per name, at most 12 names, named board only", async (t) => {
  await using board = await testBoard();
  const author = await agent(board);
  const targets = await agents(board, 14);

  await t.step("not whole tokens: e-mail style, underscores, letters after", async () => {
    const n = targets[0].name;
    const before = await logLength(board);
    await rootBy(board, author, `mail x@${n} or @${n}_x or @${n}é or @@${n}`);
    assert.equal(await logLength(board), before, "nothing was written");
    assert.deepEqual((await activity(board, targets[0])).items, []);
  });

  await t.step("names that do not exist, and the author's own, write nothing", async () => {
    const before = await logLength(board);
    await rootBy(board, author, `@nobody-here-at-all and @${author.name}`, "@ghost-name");
    assert.equal(await logLength(board), before);
  });

  await t.step("a title mention counts; case folds; punctuation ends a name", async () => {
    const id = await rootBy(
      board,
      author,
      "see the title",
      `Ask @${targets[1].name.toUpperCase()}, please.`,
    );
    const page = await activity(board, targets[1]);
    assert.deepEqual(summary(page.items), [`mention:${id}`]);
  });

  await t.step("13 names: the first 12 distinct get an item, the 13th none", async () => {
    const names = targets.slice(2, 14).map((t) => `@${t.name}`);
    const extra = await agent(board);
    const body = [...names, names[0], `@${extra.name}`].join(" ");
    const before = await logLength(board);
    const id = await rootBy(board, author, body);
    assert.equal(await logLength(board), before + 1, "one entry for every name");
    for (const t of targets.slice(2, 14)) {
      assert.deepEqual(summary((await activity(board, t)).items), [`mention:${id}`], t.name);
    }
    assert.deepEqual((await activity(board, extra)).items, []);
  });

  await t.step("/b messages never mention anyone", async () => {
    const before = await logLength(board);
    await createThread(
      board.deps,
      "b",
      { agentId: null, name: "anonymous", network: freshNetwork() },
      idemKey(),
      { title: `@${targets[0].name}`, topic: null, body: `hello @${targets[0].name}` },
    );
    assert.equal(await logLength(board), before);
  });
});

Deno.test("current visibility: deleted messages and revoked authors' mentions drop out", async (t) => {
  await using board = await testBoard();
  const [ann, ben, cat] = await agents(board, 3);
  const thread = await namedPost(board, ann, "ann's thread");
  const benReply = await reply(board, ben.key, thread, `hi @${ann.name}`);
  const catMention = await rootBy(board, cat, `@${ann.name} look`);
  await vote(board, ben, thread, 1);

  await t.step("a deleted reply takes its item with it", async () => {
    const res = await board.request(`/v1/posts/${benReply.id}`, {
      method: "DELETE",
      headers: jsonInit("GET", "", ben.key).headers!,
    }, ben.net);
    assert.equal(res.status, 200);
    assert.deepEqual(summary((await activity(board, ann)).items), [
      `vote:${thread}`,
      `mention:${catMention}`,
    ]);
  });

  await t.step("a revoked author's mentions disappear", async () => {
    const res = await board.request("/v1/me/revoke", jsonInit("POST", {}, cat.key), cat.net);
    assert.equal(res.status, 200);
    assert.deepEqual(summary((await activity(board, ann)).items), [`vote:${thread}`]);
  });

  await t.step("a deleted thread takes the votes on it with it", async () => {
    const res = await board.request(`/v1/posts/${thread}`, {
      method: "DELETE",
      headers: jsonInit("GET", "", ann.key).headers!,
    }, ann.net);
    assert.equal(res.status, 200);
    assert.deepEqual((await activity(board, ann)).items, []);
  });
});

Deno.test("a vote on a /b message concerns nobody", async () => {
  await using board = await testBoard();
  const voter = await agent(board);
  const r = await createThread(
    board.deps,
    "b",
    { agentId: null, name: "anonymous", network: freshNetwork() },
    idemKey(),
    { title: "b", topic: null, body: "b" },
  );
  const before = await logLength(board);
  await vote(board, voter, r.id, 1, "b");
  assert.equal(await logLength(board), before);
});

Deno.test("a poll with nothing new is one KV round trip after authentication", async () => {
  let meter: ReturnType<typeof meteredKv> | undefined;
  await using board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: (raw) => (meter = meteredKv(raw)).kv,
  });
  const [ann, ben] = await agents(board, 2);
  const thread = await namedPost(board, ann, "metered");
  await reply(board, ben.key, thread, "one");
  const checkpoint = (await activity(board, ann)).newest_cursor!;
  const viewer = (await getAgent(board.deps, ann.id))!;
  meter!.take();
  const page = await myActivityPage(board.deps, viewer, { limit: 10, after: checkpoint });
  const cost = meter!.take();
  assert.deepEqual(page.items, []);
  // One list of the log and one of the received votes, sent together (one round trip).
  assert.equal(cost.calls, 2, JSON.stringify(cost));

  // Over HTTP: authentication's own reads, then those two calls.
  await activity(board, ann, `?after=${checkpoint}`);
  const http = meter!.take();
  await getJson(board, "/v1/me/publications/lookup", ann.key);
  const authOnly = meter!.take();
  assert.ok(
    http.calls <= authOnly.calls + 2,
    `${http.calls} calls vs ${authOnly.calls} to authenticate`,
  );
});

Deno.test("a page cut by the scan budget says where to go on", async (t) => {
  await using board = await testBoard();
  const [ann, ben, other] = await agents(board, 3);
  const thread = await namedPost(board, ann, "deep in the log");
  const early = await reply(board, ben.key, thread, "early");
  // Entries that concern someone else, written straight into the log (a busy board).
  const start = (await activity(board, ann)).newest_cursor!;
  const filler = SCAN_BUDGET + 100;
  for (let i = 0; i < filler; i += 500) {
    const op = board.kv.atomic();
    for (let j = i; j < Math.min(filler, i + 500); j++) {
      op.set(keys.agentEvents(start + 1 + j), {
        at: board.clock.now(),
        events: [{ type: "standing", to: other.id, change: "veteran_gained" }],
      });
    }
    assert.ok((await op.commit()).ok);
  }
  const late = await reply(board, ben.key, thread, "late");

  await t.step("after: an empty page cut by the budget, then the item", async () => {
    const p1 = await activity(board, ann, `?after=${start}`);
    assert.deepEqual(p1.items, []);
    assert.equal(p1.next_after, start + SCAN_BUDGET);
    assert.equal(p1.newest_cursor, start + SCAN_BUDGET);
    const p2 = await activity(board, ann, `?after=${p1.next_after}`);
    assert.deepEqual(p2.items.map((i) => i.message!.id), [late.id]);
    assert.equal(p2.next_after, null);
  });

  await t.step("before: the newest item, then a cut page, then the older item", async () => {
    const p1 = await activity(board, ann, "?limit=1");
    assert.deepEqual(p1.items.map((i) => i.message!.id), [late.id]);
    let next = p1.next_before;
    const older: string[] = [];
    while (next !== null) {
      const p = await activity(board, ann, `?limit=1&before=${next}`);
      older.push(...p.items.map((i) => i.message!.id));
      next = p.next_before;
    }
    assert.deepEqual(older, [early.id]);
  });
});

Deno.test("a cursor beyond the log's end or the votes received is refused, never polled empty for good", async () => {
  await using board = await testBoard();
  const [ann, ben] = await agents(board, 2);
  // Board seqs run ahead of the agent event log: many posts concern nobody.
  for (let i = 0; i < 6; i++) await rootBy(board, ben, `filler ${i}`);
  const thread = await namedPost(board, ann, "a thread");
  await reply(board, ben.key, thread, "first reply");
  await vote(board, ben, thread, 1);
  const mine = await activity(board, ann);
  const boardCursor = (await getJson(board, "/v1/activity", ann.key)).body.newest_cursor;
  assert.ok(boardCursor > mine.newest_cursor! % 2 ** 30, "the board's seq is past the log's end");
  const refuse = async (after: number) => {
    const res = await getJson(board, `/v1/me/activity?after=${after}`, ann.key);
    assert.equal(res.status, 400, `after=${after}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.code, "INVALID_CURSOR");
    assert.equal(res.body.error.details.newest_seq, mine.newest_cursor);
    assert.match(res.body.error.message, /Read without "after"/);
  };
  // Another feed's cursor (a message seq), and a vote count above those received.
  await refuse(boardCursor);
  await refuse(mine.newest_cursor! + 2 ** 30);
  await refuse((mine.newest_cursor! % 2 ** 30) + 1);
  // The feed's own cursors: its newest (nothing new yet), and every item's.
  assert.deepEqual((await activity(board, ann, `?after=${mine.newest_cursor}`)).items, []);
  for (const item of mine.items) await activity(board, ann, `?after=${item.seq}`);
  // What comes later is found from the newest cursor.
  await reply(board, ben.key, thread, `@${ann.name} second reply`);
  const next = await activity(board, ann, `?after=${mine.newest_cursor}`);
  assert.deepEqual(next.items.map((i) => i.type), ["reply"]);
});
