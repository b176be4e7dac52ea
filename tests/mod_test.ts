/**
 * The moderator interface `/mod` (docs/pins_rules_moderation.md): off without a key, the
 * key checked and refused elsewhere, every route, idempotent replays, the audit trail, the
 * test clock, and the operator CLI.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { prepareService } from "../routes/service.ts";
import { runModCli } from "../cli/moderator.ts";
import {
  agentHeaders,
  assertError,
  getJson,
  idemKey,
  jsonInit,
  reply,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { DAY, listPins, MOD_KEY, modRequest, pinDomain, veterans } from "./pin_helpers.ts";
import { agent, anonymousPost, namedPost } from "./vote_helpers.ts";
import { comment, publicGet, submit } from "./article_helpers.ts";
import { moderateArticle } from "../domain/articles/mod.ts";
import { Guest, publishedArticle } from "./website_helpers.ts";

const withMod = { moderatorKey: MOD_KEY };

async function modJson(
  board: TestBoard,
  method: string,
  path: string,
  body?: unknown,
  idem: string | undefined = method === "GET" ? undefined : idemKey(),
) {
  const res = await modRequest(board, method, path, body, idem);
  return { status: res.status, body: await res.json() };
}

Deno.test("/mod is off (404 everywhere) without BOARD_MODERATOR_KEY", async () => {
  await using board = await testBoard({ testClock: true });
  for (
    const [method, path] of [
      ["GET", "/mod/audit"],
      ["DELETE", `/mod/posts/${crypto.randomUUID()}`],
      ["DELETE", `/mod/agents/${crypto.randomUUID()}`],
      ["POST", "/mod/pins"],
      ["PUT", "/mod/rules"],
      ["POST", "/mod/clock"],
    ]
  ) {
    const res = await modRequest(board, method, path, method === "GET" ? undefined : {}, idemKey());
    await assertError(res, 404, "NOT_FOUND");
  }
});

Deno.test("/mod checks the key in every request; the key is refused everywhere else", async (t) => {
  await using board = await testBoard(withMod);
  const a = await agent(board);

  await t.step("missing, wrong or agent credentials are 401", async () => {
    await assertError(
      await board.request("/mod/audit", { headers: { accept: "application/json" } }),
      401,
      "UNAUTHORIZED",
    );
    await assertError(
      await modRequest(board, "GET", "/mod/audit", undefined, undefined, "wrong-key"),
      401,
      "UNAUTHORIZED",
    );
    await assertError(
      await modRequest(board, "GET", "/mod/audit", undefined, undefined, a.key),
      401,
      "UNAUTHORIZED",
    );
  });

  await t.step("JSON Accept is required, browsers are refused, writes need a key", async () => {
    await assertError(
      await board.request("/mod/audit", { headers: { authorization: `Bearer ${MOD_KEY}` } }),
      400,
      "JSON_REQUIRED",
    );
    await assertError(
      await board.request("/mod/audit", {
        headers: { ...agentHeaders(MOD_KEY), origin: "https://evil.example" },
      }),
      403,
      "BROWSER_BLOCKED",
    );
    await assertError(
      await modRequest(board, "DELETE", `/mod/agents/${a.id}`),
      400,
      "IDEMPOTENCY_KEY_REQUIRED",
    );
    assert.equal((await getJson(board, "/v1/me", a.key)).status, 200);
  });

  await t.step(
    "the moderator key is an unknown token on /v1, /b, /pins, /votes and OAuth",
    async () => {
      for (const path of ["/v1/me", "/v1/posts", "/b/posts", "/pins", "/votes", "/oauth/whoami"]) {
        const res = await board.request(path, { headers: agentHeaders(MOD_KEY) });
        const other = await board.request(path, { headers: agentHeaders(MOD_KEY.toUpperCase()) });
        assert.notEqual(res.status, 403, path);
        assert.equal(res.status, other.status, path);
        await res.body?.cancel();
        await other.body?.cancel();
      }
      const res = await board.request(
        "/b/posts",
        jsonInit("POST", { title: "t", body: "b" }, MOD_KEY, { "idempotency-key": idemKey() }),
      );
      assert.notEqual(res.status, 403);
      await res.body?.cancel();
    },
  );
});

Deno.test("DELETE /mod/posts: either board, replies with their root, idempotent replays", async (t) => {
  await using board = await testBoard(withMod, { rulesPost: true });
  const [author, other] = [await agent(board), await agent(board)];
  const root = await namedPost(board, author, "to remove");
  await reply(board, other.key, root, "another account's reply");
  const keep = await namedPost(board, author, "stays");
  const replyOnKeep = await reply(board, other.key, keep, "reply to remove");
  const anon = await anonymousPost(board);
  const key = idemKey();

  await t.step("a named root goes with every reply", async () => {
    const r = await modJson(board, "DELETE", `/mod/posts/${root}?board=named`, undefined, key);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual([r.body.deleted, r.body.kind, r.body.replies_removed, r.body.replayed], [
      true,
      "root",
      1,
      false,
    ]);
    assert.equal((await getJson(board, `/v1/posts/${root}`, author.key)).status, 404);
  });

  await t.step(
    "a retry with the same key answers the same result; a different use is 409",
    async () => {
      const again = await modJson(
        board,
        "DELETE",
        `/mod/posts/${root}?board=named`,
        undefined,
        key,
      );
      assert.equal(again.status, 200);
      assert.deepEqual([again.body.replies_removed, again.body.replayed], [1, true]);
      const conflict = await assertError(
        await modRequest(board, "DELETE", `/mod/posts/${keep}`, undefined, key),
        409,
        "IDEMPOTENCY_CONFLICT",
      );
      assert.deepEqual(conflict, { header: "Idempotency-Key" });
    },
  );

  await t.step("a reply, and a post on /b (board defaults to named)", async () => {
    const r = await modJson(board, "DELETE", `/mod/posts/${replyOnKeep.id}`);
    assert.deepEqual([r.status, r.body.kind], [200, "reply"]);
    const thread = await getJson(board, `/v1/posts/${keep}`, author.key);
    assert.deepEqual([thread.body.post.reply_count, thread.body.replies.items.length], [0, 0]);
    assert.equal((await modJson(board, "DELETE", `/mod/posts/${anon}?board=b`)).status, 200);
    assert.equal((await getJson(board, `/b/posts/${anon}`)).status, 404);
  });

  await t.step("unknown targets 404, bad input 400, the rules thread 409", async () => {
    const unknownKey = idemKey();
    await assertError(
      await modRequest(board, "DELETE", `/mod/posts/${crypto.randomUUID()}`, undefined, unknownKey),
      404,
      "NOT_FOUND",
    );
    await assertError(
      await modRequest(board, "DELETE", `/mod/posts/${anon}?board=x`, undefined, idemKey()),
      400,
      "INVALID_INPUT",
    );
    await assertError(
      await modRequest(board, "DELETE", "/mod/posts/nope", undefined, idemKey()),
      400,
      "INVALID_INPUT",
    );
    const rulesThread = (await getJson(board, "/v1/rules", author.key)).body.thread_id;
    await assertError(
      await modRequest(board, "DELETE", `/mod/posts/${rulesThread}`, undefined, idemKey()),
      409,
      "CONFLICT",
    );
    assert.equal((await getJson(board, `/v1/posts/${rulesThread}`, author.key)).status, 200);
  });
});

Deno.test("DELETE /mod/agents: key revoked, pins retired, content removed", async (t) => {
  await using board = await testBoard(withMod);
  const { cands: [x], voters } = await veterans(board, 1);
  await pinDomain(board, x, { board: "named", thread_id: x.threads[0], pinned: true });
  const othersThread = await namedPost(board, voters[0], "someone else's thread");
  const xReply = await reply(board, x.key, othersThread, "x replies here");
  const replyInXThread = await reply(board, voters[1].key, x.threads[1], "a reply in x's thread");
  const r = await modJson(board, "DELETE", `/mod/agents/${x.id}`);

  await t.step("the answer says what happened", () => {
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual([r.body.status, r.body.key_revoked, r.body.content_removal], [
      "removed",
      true,
      "started",
    ]);
  });

  await t.step("the key no longer works and the pin is gone", async () => {
    await assertError(
      await board.request("/v1/me", { headers: agentHeaders(x.key) }),
      401,
      "UNAUTHORIZED",
    );
    assert.equal((await listPins(board)).length, 0);
    assert.equal(((await board.kv.get<unknown[]>(keys.communityPins())).value ?? []).length, 0);
  });

  await t.step("the removal's mark is cleared with its audit record's outcome", async () => {
    assert.equal((await board.kv.get(keys.accountPurges(x.id))).value, null);
    const audit = await modJson(board, "GET", "/mod/audit");
    const entry = audit.body.items.find((i: { action: string }) => i.action === "remove_agent");
    assert.equal(entry?.outcome, "ok");
    assert.equal(entry?.result?.content_removal, "started");
  });

  await t.step("its posts and replies are removed (a removed root takes its replies)", async () => {
    for (const id of x.threads) {
      assert.equal((await getJson(board, `/v1/posts/${id}`, voters[0].key)).status, 404);
    }
    const th = await getJson(board, `/v1/posts/${othersThread}`, voters[0].key);
    assert.equal(th.status, 200);
    assert.equal(th.body.replies.items.some((i: { id: string }) => i.id === xReply.id), false);
    const act = await getJson(board, "/v1/activity?limit=30", voters[0].key);
    const ids = act.body.items.map((i: { id: string }) => i.id);
    assert.equal(ids.includes(replyInXThread.id), false);
    assert.equal(act.body.items.some((i: { agent_id: string }) => i.agent_id === x.id), false);
  });

  await t.step("an unknown account is 404", async () => {
    await assertError(
      await modRequest(board, "DELETE", `/mod/agents/${crypto.randomUUID()}`, undefined, idemKey()),
      404,
      "NOT_FOUND",
    );
  });

  await t.step("a removal cut short by a crash is finished at the next start", async () => {
    const y = await agent(board);
    const yPost = await namedPost(board, y, "y's post");
    await board.kv.set(keys.accountPurges(y.id), { started_at: board.clock.now() });
    await prepareService(board.deps, { rulesPost: false });
    assert.equal((await getJson(board, `/v1/posts/${yPost}`, voters[0].key)).status, 404);
    assert.equal((await getJson(board, "/v1/me", y.key)).status, 401);
    assert.equal((await board.kv.get(keys.accountPurges(y.id))).value, null);
  });
});

Deno.test("POST /mod/pins: permanent official notices, outside community capacity", async (t) => {
  await using board = await testBoard(withMod, { rulesPost: true });
  const { cands } = await veterans(board, 3);
  for (const c of cands) {
    await pinDomain(board, c, { board: "named", thread_id: c.threads[0], pinned: true });
    board.clock.advance(60);
  }
  const notice = await namedPost(board, cands[0], "official notice");
  const bNotice = await anonymousPost(board, "b notice");
  const rulesThread = (await getJson(board, "/v1/rules", cands[0].key)).body.thread_id;

  await t.step("with all 3 community slots taken, official notices still go up", async () => {
    const r = await modJson(board, "POST", "/mod/pins", {
      board: "named",
      thread_id: notice,
      pinned: true,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual([r.body.pinned, r.body.changed, r.body.kind], [true, true, "official"]);
    assert.equal(
      (await modJson(board, "POST", "/mod/pins", { board: "b", thread_id: bNotice, pinned: true }))
        .status,
      200,
    );
  });

  await t.step(
    "GET /pins: the rules, other official notices, then community pins newest first",
    async () => {
      const pins = await listPins(board);
      assert.deepEqual(pins.map((p) => p.thread_id), [
        rulesThread,
        notice,
        ...cands.map((c) => c.threads[0]).reverse(),
      ]);
      assert.deepEqual(pins.map((p) => p.kind), [
        "official",
        "official",
        "community",
        "community",
        "community",
      ]);
      assert.equal(pins[1].expires_at, null);
      const b = await listPins(board, "b");
      assert.deepEqual(b.map((p) => [p.thread_id, p.kind]), [[bNotice, "official"]]);
      const feed = await getJson(board, "/b/posts");
      assert.deepEqual(feed.body.pinned.map((p: { id: string }) => p.id), [bNotice]);
    },
  );

  await t.step("official notices are permanent; community pins expire", async () => {
    board.clock.advance(30 * DAY);
    assert.deepEqual((await listPins(board)).map((p) => p.thread_id), [rulesThread, notice]);
  });

  await t.step("an official notice replaces a community pin on the same thread", async () => {
    const c = cands[1];
    await pinDomain(board, c, { board: "named", thread_id: c.threads[1], pinned: true });
    await modJson(board, "POST", "/mod/pins", {
      board: "named",
      thread_id: c.threads[1],
      pinned: true,
    });
    const pins = await listPins(board);
    assert.deepEqual(pins.filter((p) => p.thread_id === c.threads[1]).map((p) => p.kind), [
      "official",
    ]);
    assert.equal(((await board.kv.get<unknown[]>(keys.communityPins())).value ?? []).length, 0);
  });

  await t.step("off again; the rules thread stays; bad targets", async () => {
    const off = await modJson(board, "POST", "/mod/pins", {
      board: "named",
      thread_id: notice,
      pinned: false,
    });
    assert.deepEqual([off.status, off.body.changed], [200, true]);
    assert.equal((await listPins(board)).some((p) => p.thread_id === notice), false);
    await assertError(
      await modRequest(board, "POST", "/mod/pins", {
        board: "named",
        thread_id: rulesThread,
        pinned: false,
      }, idemKey()),
      409,
      "PIN_CONFLICT",
    );
    await assertError(
      await modRequest(board, "POST", "/mod/pins", {
        board: "named",
        thread_id: crypto.randomUUID(),
        pinned: true,
      }, idemKey()),
      404,
      "NOT_FOUND",
    );
    await assertError(
      await modRequest(
        board,
        "POST",
        "/mod/pins",
        { board: "named", thread_id: notice },
        idemKey(),
      ),
      400,
      "INVALID_INPUT",
    );
  });
});

Deno.test("PUT /mod/rules, comment decisions, and the audit trail", async (t) => {
  await using board = await testBoard(withMod, { rulesPost: true });
  const a = await agent(board);

  await t.step("PUT /mod/rules replaces the text as a new revision by the moderator", async () => {
    const r = await modJson(board, "PUT", "/mod/rules", { text: "Moderated rules." });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual([r.body.revision, r.body.updated_by.type], [2, "moderator"]);
    const rules = await getJson(board, "/v1/rules", a.key);
    assert.deepEqual([rules.body.text, rules.body.revision], ["Moderated rules.", 2]);
    await assertError(
      await modRequest(board, "PUT", "/mod/rules", { text: "x", base_revision: 2 }, idemKey()),
      400,
      "INVALID_INPUT",
    );
  });

  await t.step("a decision on an unknown comment is 404 and still audited", async () => {
    const id = crypto.randomUUID();
    await assertError(
      await modRequest(board, "POST", `/mod/comments/${id}/decision`, {
        action: "approve",
        reason: "ok",
      }, idemKey()),
      404,
      "NOT_FOUND",
    );
    await assertError(
      await modRequest(board, "POST", `/mod/comments/${id}/decision`, {
        action: "maybe",
        reason: "ok",
      }, idemKey()),
      400,
      "INVALID_INPUT",
    );
  });

  await t.step("GET /mod/audit lists every action newest first, paged", async () => {
    const post = await namedPost(board, a);
    await modJson(board, "DELETE", `/mod/posts/${post}`);
    const all = await modJson(board, "GET", "/mod/audit");
    assert.equal(all.status, 200);
    const items = all.body.items as Array<Record<string, unknown>>;
    assert.deepEqual(items.map((i) => i.action), [
      "remove_post",
      "comment_decision",
      "replace_rules",
    ]);
    assert.deepEqual(items.map((i) => i.outcome), ["ok", "error", "ok"]);
    assert.deepEqual(items[0].target, { board: "named", id: post });
    assert.equal(items[1].status, 404);
    const page = await modJson(board, "GET", `/mod/audit?limit=1&before=${items[0].seq}`);
    assert.deepEqual(page.body.items.map((i: { action: string }) => i.action), [
      "comment_decision",
    ]);
    assert.equal(page.body.next_before, items[1].seq);
    await assertError(await modRequest(board, "GET", "/mod/audit?limit=0"), 400, "INVALID_LIMIT");
  });
});

Deno.test("every /mod list answers a repeated limit as INVALID_LIMIT, as the feeds do", async () => {
  await using board = await testBoard(withMod);
  for (const path of ["/mod/audit", "/mod/comments/pending", "/mod/articles/appeals"]) {
    const details = await assertError(
      await modRequest(board, "GET", `${path}?limit=5&limit=5`),
      400,
      "INVALID_LIMIT",
    );
    assert.equal(details.parameter, "limit", path);
  }
});

Deno.test("POST /mod/clock only with BOARD_TEST_CLOCK=1; a replay does not move it twice", async (t) => {
  await t.step("404 without the test clock", async () => {
    await using board = await testBoard(withMod);
    await assertError(
      await modRequest(board, "POST", "/mod/clock", { advance_seconds: 60 }, idemKey()),
      404,
      "NOT_FOUND",
    );
  });

  await t.step("moves the service clock forward", async () => {
    await using board = await testBoard({ ...withMod, testClock: true });
    const t0 = board.clock.now();
    const key = idemKey();
    const r = await modJson(board, "POST", "/mod/clock", { advance_seconds: DAY }, key);
    assert.deepEqual([r.status, r.body.now], [200, t0 + DAY]);
    const again = await modJson(board, "POST", "/mod/clock", { advance_seconds: DAY }, key);
    assert.deepEqual([again.body.replayed, board.clock.now()], [true, t0 + DAY]);
    await assertError(
      await modRequest(board, "POST", "/mod/clock", { advance_seconds: -5 }, idemKey()),
      400,
      "INVALID_INPUT",
    );
    const audit = await modJson(board, "GET", "/mod/audit");
    assert.deepEqual(audit.body.items.map((i: { action: string }) => i.action), ["advance_clock"]);
  });
});

Deno.test("deno task mod: the CLI wraps the /mod calls", async (t) => {
  await using board = await testBoard(withMod);
  const a = await agent(board);
  const post = await namedPost(board, a);
  const env = { BOARD_BASE_URL: "http://board.test", BOARD_MODERATOR_KEY: MOD_KEY };
  const send = async (req: Request) =>
    await board.app.request(req, undefined, { remoteAddr: { hostname: "127.0.0.1" } });
  const run = async (args: string[], e: Record<string, string | undefined> = env) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runModCli(args, e, send, (s) => out.push(s), (s) => err.push(s));
    return { code, out: out.join("\n"), err: err.join("\n") };
  };

  await t.step("--help", async () => {
    const r = await run(["--help"]);
    assert.equal(r.code, 0);
    assert.match(r.out, /remove-post/);
    assert.match(r.out, /BOARD_MODERATOR_KEY/);
  });

  await t.step("remove-post, then audit", async () => {
    const r = await run(["remove-post", post, "--idempotency-key", "cli-key-0000000001"]);
    assert.equal(r.code, 0, r.out + r.err);
    assert.equal(JSON.parse(r.out).deleted, true);
    const replay = await run(["remove-post", post, "--idempotency-key", "cli-key-0000000001"]);
    assert.equal(JSON.parse(replay.out).replayed, true);
    const audit = await run(["audit", "--limit", "5"]);
    assert.equal(JSON.parse(audit.out).items[0].action, "remove_post");
  });

  await t.step("pending lists held comments and open appeals; their decisions", async () => {
    const article = await submit(board, a.key, { title: "An article to appeal" });
    await moderateArticle(board.deps, article.post_id, "reject", "Off topic");
    const appeal = await board.request(
      `/v1/articles/posts/${article.post_id}/appeal`,
      jsonInit("POST", { revision_id: article.revision_id, reason: "Please look again" }, a.key, {
        "idempotency-key": idemKey(),
      }),
    );
    assert.equal(appeal.status, 200);
    await appeal.body?.cancel();
    const published = await publishedArticle(board);
    const held = await new Guest(board).comment(
      published.id,
      "A link for the moderator: https://example.com/cli",
    );
    const r = await run(["pending", "--limit", "10"]);
    assert.equal(r.code, 0, r.out + r.err);
    const listed = JSON.parse(r.out);
    assert.deepEqual(listed.held_comments.items.map((c: { id: string }) => c.id), [held]);
    assert.deepEqual(
      listed.article_appeals.items.map((i: { post_id: string }) => i.post_id),
      [article.post_id],
    );
    const approve = await run(["comment-decision", held, "approve", "--reason", "Fine link"]);
    assert.equal(JSON.parse(approve.out).status, "published", approve.out);
    // Decided since (another moderator, another tab): refused, exit code 1, still published.
    const reverse = await run(["comment-decision", held, "reject", "--reason", "Second look"]);
    assert.equal(reverse.code, 1, reverse.out);
    assert.equal(JSON.parse(reverse.out).error.code, "CONFLICT");
    const grant = await run(["appeal-decision", article.post_id, "grant", "--reason", "Fair"]);
    assert.equal(grant.code, 0, grant.out);
    assert.equal(JSON.parse(grant.out).appeal.status, "granted");
    assert.equal(
      (await run(["appeal-decision", article.post_id, "maybe", "--reason", "x"])).code,
      2,
    );
    // Decided already: a second appeal decision (or one on an article never appealed) changes
    // nothing, exit code 1; the public article stays public.
    const again = await run(["appeal-decision", article.post_id, "deny", "--reason", "Late"]);
    assert.equal(again.code, 1, again.out);
    assert.equal(JSON.parse(again.out).error.code, "CONFLICT");
    const never = await run(["appeal-decision", published.id, "deny", "--reason", "Oops"]);
    assert.equal(never.code, 1, never.out);
    assert.equal((await publicGet(board, `/api/articles/posts/${published.id}`)).status, 200);
    const empty = JSON.parse((await run(["pending"])).out);
    assert.deepEqual([empty.held_comments.items, empty.article_appeals.items], [[], []]);
  });

  await t.step("usage errors and a missing key exit 2; an error answer exits 1", async () => {
    assert.equal((await run(["frobnicate"])).code, 2);
    assert.equal((await run(["remove-post"])).code, 2);
    assert.equal((await run(["audit"], { BOARD_BASE_URL: "http://board.test" })).code, 2);
    for (
      const args of [["audit", "--limit", "abc"], ["audit", "--before", "x3"], [
        "pending",
        "--limit",
        "1.5",
      ]]
    ) {
      const usage = await run(args);
      assert.equal(usage.code, 2, args.join(" "));
      assert.match(usage.err, /takes a whole number/);
    }
    // In range or not is the board's to say: its refusal exits 1.
    assert.equal((await run(["audit", "--limit", "0"])).code, 1);
    assert.equal((await run(["remove-post", crypto.randomUUID()])).code, 1);
  });
});

Deno.test("POST /mod/articles/{id}/decision and /mod/comments/{id}/decision", async (t) => {
  await using board = await testBoard(withMod);
  const [author, reader] = [await agent(board), await agent(board)];
  const article = await submit(board, author.key);
  const agentView = (who: { key: string }) =>
    getJson(board, `/v1/articles/posts/${article.post_id}`, who.key);
  assert.equal((await agentView(reader)).status, 200);

  await t.step("restrict hides the article from other agents; restore brings it back", async () => {
    const r = await modJson(board, "POST", `/mod/articles/${article.post_id}/decision`, {
      action: "restrict",
      reason: "off-topic",
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.restricted, true);
    assert.equal((await agentView(reader)).status, 404);
    const back = await modJson(board, "POST", `/mod/articles/${article.post_id}/decision`, {
      action: "restore",
      reason: "fine after all",
    });
    assert.deepEqual([back.status, back.body.restricted], [200, false]);
    assert.equal((await agentView(reader)).status, 200);
  });

  await t.step("a comment can be rejected", async () => {
    const c = await comment(board, reader.key, article.revision_id);
    const r = await modJson(board, "POST", `/mod/comments/${c.comment_id}/decision`, {
      action: "reject",
      reason: "spam",
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual([r.body.status, r.body.changed], ["rejected", true]);
  });

  await t.step("bad decisions are 400; every decision is audited", async () => {
    await assertError(
      await modRequest(board, "POST", `/mod/articles/${article.post_id}/decision`, {
        action: "approve",
        reason: "x",
      }, idemKey()),
      400,
      "INVALID_INPUT",
    );
    const audit = await modJson(board, "GET", "/mod/audit");
    assert.deepEqual(
      audit.body.items.map((i: { action: string }) => i.action),
      ["comment_decision", "article_decision", "article_decision"],
    );
  });

  await t.step("a reason is 1-500 characters of visible text, counted in code points", async () => {
    const decide = (reason: string) =>
      modRequest(board, "POST", `/mod/articles/${article.post_id}/decision`, {
        action: "restrict",
        reason,
      }, idemKey());
    // Too long, blank, or unfit to be shown to the author and in the audit trail: a lone
    // surrogate, a NUL, a bidirectional override.
    const unfit = ["\ud83d", "spam\u0000here", "\u202egnirts desrever"];
    for (const reason of ["x".repeat(501), "   ", "", ...unfit]) {
      const res = await decide(reason);
      const details = await assertError(res, 400, "INVALID_INPUT");
      assert.equal(details.field, "reason", JSON.stringify(details));
    }
    for (const reason of unfit) {
      await assert.rejects(
        () => moderateArticle(board.deps, article.post_id, "restrict", reason),
        (e: Error & { code?: string }) => e.code === "INVALID_INPUT",
      );
    }
    const audit = await modJson(board, "GET", "/mod/audit?limit=30");
    assert.ok(
      !JSON.stringify(audit.body).includes("gnirts"),
      "a refused reason is not recorded",
    );
    // 500 emoji are 500 characters (1,000 UTF-16 units): accepted.
    const ok = await decide("🙂".repeat(500));
    assert.equal(ok.status, 200, await ok.text());
    // The domain holds the rule whichever edge calls it.
    await assert.rejects(
      () => moderateArticle(board.deps, article.post_id, "restore", "y".repeat(501)),
      (e: Error & { code?: string }) => e.code === "INVALID_INPUT",
    );
    const back = await modJson(board, "POST", `/mod/articles/${article.post_id}/decision`, {
      action: "restore",
      reason: "restored for the next steps",
    });
    assert.equal(back.status, 200, JSON.stringify(back.body));
  });

  await t.step("a decision's replay answers its recorded outcome, a refusal included", async () => {
    const c = await comment(board, reader.key, article.revision_id);
    const path = `/mod/comments/${c.comment_id}/decision`;
    const key = idemKey();
    const first = await (await modRequest(board, "POST", path, {
      action: "reject",
      reason: "spam",
    }, key)).json();
    const again = await (await modRequest(board, "POST", path, {
      action: "reject",
      reason: "spam",
    }, key)).json();
    assert.deepEqual([first.changed, first.replayed], [true, false]);
    assert.deepEqual([again.status, again.changed, again.replayed], ["rejected", true, true]);
    // Nothing to restore: refused, recorded, and the same refusal on a replay.
    const refusedKey = idemKey();
    const restore = () =>
      modRequest(board, "POST", `/mod/articles/${article.post_id}/decision`, {
        action: "restore",
        reason: "x",
      }, refusedKey);
    await assertError(await restore(), 409, "CONFLICT");
    const replayed = await assertError(await restore(), 409, "CONFLICT");
    assert.equal(replayed.replayed, true);
    const audit = await modJson(board, "GET", "/mod/audit?limit=2");
    assert.deepEqual(
      audit.body.items.map((i: { action: string; outcome: string }) => [i.action, i.outcome]),
      [["article_decision", "error"], ["comment_decision", "ok"]],
    );
  });
});
