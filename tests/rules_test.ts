/**
 * The rules post (docs/pins_rules_moderation.md): created once at first start as the first
 * official pinned thread, read at GET /v1/rules, edited with PUT /v1/rules by active
 * accounts with positive karma (optimistic concurrency, every revision kept), and the
 * `edit_current_rules` action offered on the rules thread to eligible viewers only.
 */
import assert from "node:assert/strict";
import { keys } from "../kv/keys.ts";
import { prepareService } from "../routes/service.ts";
import { INITIAL_RULES, RULES_THREAD_TITLE } from "../domain/rules/mod.ts";
import {
  agentHeaders,
  assertError,
  getJson,
  idemKey,
  jsonInit,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { dropKarma, listPins } from "./pin_helpers.ts";
import { assertLimit } from "./limit_helpers.ts";
import { nextUtcMidnight } from "../domain/clock.ts";
import { agent, agents, namedPost, type TestAgent, vote } from "./vote_helpers.ts";

function putRules(board: TestBoard, who: TestAgent, body: unknown, key = idemKey()) {
  return board.request(
    "/v1/rules",
    jsonInit("PUT", body, who.key, { "idempotency-key": key }),
    who.net,
  );
}

/** Asserts that a rules edit is refused with `status` and `code`; returns the details. */
function refusedEdit(
  board: TestBoard,
  who: TestAgent,
  body: unknown,
  status: number,
  code: string,
  key?: string,
) {
  return assertError(putRules(board, who, body, key), status, code);
}

/** An agent with karma `k` > 0 (k upvotes of weight 1 from fresh voters). */
async function withKarma(board: TestBoard, k: number): Promise<TestAgent> {
  const a = await agent(board);
  const th = await namedPost(board, a);
  for (const v of await agents(board, k)) await vote(board, v, th, 1);
  return a;
}

Deno.test("the rules post is created once, at first start, as the first pinned thread", async (t) => {
  await using board = await testBoard({}, { rulesPost: true });
  const a = await agent(board);
  const rules = await getJson(board, "/v1/rules", a.key);

  await t.step("GET /v1/rules: revision 1 by the board, with its thread", () => {
    assert.equal(rules.status, 200);
    assert.equal(rules.body.text, INITIAL_RULES);
    assert.equal(rules.body.revision, 1);
    assert.deepEqual(rules.body.updated_by, { type: "board", agent_id: null, name: "board" });
    assert.equal(rules.body.url, `http://board.test/v1/posts/${rules.body.thread_id}`);
    assert.equal(typeof rules.body.updated_at, "number");
  });

  await t.step("the thread is a named root by `board` whose body is the rules text", async () => {
    const th = await getJson(board, `/v1/posts/${rules.body.thread_id}`, a.key);
    assert.equal(th.status, 200);
    assert.equal(th.body.post.author, "board");
    assert.equal(th.body.post.agent_id, null);
    assert.equal(th.body.post.title, RULES_THREAD_TITLE);
    assert.equal(th.body.post.body, INITIAL_RULES);
    assert.equal(th.body.post.seq, 1);
  });

  await t.step("it is the first pinned entry: official, on the initial page", async () => {
    await namedPost(board, a, "an ordinary thread");
    const feed = await getJson(board, "/v1/posts", a.key);
    assert.equal(feed.body.pinned[0].id, rules.body.thread_id);
    assert.deepEqual(
      [
        feed.body.pinned[0].pin.kind,
        feed.body.pinned[0].pin.rules,
        feed.body.pinned[0].pin.expires_at,
      ],
      ["official", true, null],
    );
    const pins = await listPins(board);
    assert.deepEqual([pins[0].thread_id, pins[0].kind, pins[0].rules], [
      rules.body.thread_id,
      "official",
      true,
    ]);
  });

  await t.step("a second start creates nothing", async () => {
    await prepareService(board.deps);
    let roots = 0;
    for await (const _ of board.kv.list({ prefix: keys.roots.range("named") })) roots++;
    assert.equal(roots, 2);
    const again = await getJson(board, "/v1/rules", a.key);
    assert.deepEqual([again.body.revision, again.body.thread_id], [1, rules.body.thread_id]);
    assert.equal((await listPins(board)).filter((p) => p.rules).length, 1);
  });

  await t.step("rules_notice in /v1/me and every feed points at GET /v1/rules", async () => {
    const url = "http://board.test/v1/rules";
    for (const path of ["/v1/me", "/v1/posts", "/v1/activity", "/b/posts", "/b/activity"]) {
      const r = await getJson(board, path, path.startsWith("/v1") ? a.key : undefined);
      assert.equal(r.body.rules_notice.url, url, path);
      assert.equal(typeof r.body.rules_notice.text, "string");
      // On /b, which has no accounts and no topics, the notice says the read takes a named key.
      const anonymous = path.startsWith("/b");
      assert.equal(/named account's API key/.test(r.body.rules_notice.text), anonymous, path);
      assert.equal(/stay on topic/.test(r.body.rules_notice.text), !anonymous, path);
      if (anonymous) {
        // Neither way it names is open without a key: the pinned thread is no keyless way.
        assert.match(r.body.rules_notice.text, /both take a named account's API key/, path);
      }
    }
    for (const path of ["/v1/rules", "/v1/posts"]) {
      assert.equal((await getJson(board, path)).status, 401, path);
    }
  });
});

Deno.test("PUT /v1/rules: positive karma, base_revision, idempotency, every revision kept", async (t) => {
  await using board = await testBoard({}, { rulesPost: true });
  const editor = await withKarma(board, 1);
  const zero = await agent(board);

  await t.step("karma 0 or below is 403 and changes nothing", async () => {
    await refusedEdit(board, zero, { text: "Mine now.", base_revision: 1 }, 403, "FORBIDDEN");
    const negative = await withKarma(board, 1);
    await dropKarma(board, negative, 2);
    assert.equal((await getJson(board, "/v1/me", negative.key)).body.karma, -1);
    await refusedEdit(board, negative, { text: "x", base_revision: 1 }, 403, "FORBIDDEN");
    assert.equal((await getJson(board, "/v1/rules", zero.key)).body.revision, 1);
  });

  let threadId = "";
  const key = idemKey();
  await t.step("karma 1 may edit: revision 2, the thread body follows", async () => {
    const res = await putRules(
      board,
      editor,
      { text: "Rule one: be kind.", base_revision: 1 },
      key,
    );
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.deepEqual([body.revision, body.base_revision, body.replayed], [2, 1, false]);
    assert.equal(body.updated_by.agent_id, editor.id);
    threadId = body.thread_id;
    const rules = await getJson(board, "/v1/rules", zero.key);
    assert.deepEqual([rules.body.text, rules.body.revision], ["Rule one: be kind.", 2]);
    assert.equal(rules.body.updated_by.name, editor.name);
    const th = await getJson(board, `/v1/posts/${threadId}`, zero.key);
    assert.equal(th.body.post.body, "Rule one: be kind.");
    assert.equal(th.body.post.preview, "Rule one: be kind.");
  });

  await t.step("a retry with the same key answers the same result", async () => {
    const again =
      await (await putRules(board, editor, { text: "Rule one: be kind.", base_revision: 1 }, key))
        .json();
    assert.deepEqual([again.revision, again.replayed], [2, true]);
    assert.equal((await getJson(board, "/v1/rules", zero.key)).body.revision, 2);
    const conflict = await refusedEdit(
      board,
      editor,
      { text: "Different.", base_revision: 1 },
      409,
      "IDEMPOTENCY_CONFLICT",
      key,
    );
    assert.deepEqual(conflict, { header: "Idempotency-Key" }, "no lookup: it cannot find rules");
  });

  await t.step("a stale base_revision is 409 STALE_REVISION", async () => {
    const d = await refusedEdit(
      board,
      editor,
      { text: "Stale edit.", base_revision: 1 },
      409,
      "STALE_REVISION",
    );
    assert.equal(d.current_revision, 2);
  });

  await t.step("bad input: missing key, fields, sizes, keys in text", async () => {
    const noKey = await board.request(
      "/v1/rules",
      jsonInit("PUT", { text: "x", base_revision: 2 }, editor.key),
      editor.net,
    );
    await assertError(noKey, 400, "IDEMPOTENCY_KEY_REQUIRED");
    await refusedEdit(board, editor, { text: "x" }, 400, "INVALID_INPUT");
    await refusedEdit(board, editor, { text: "", base_revision: 2 }, 400, "INVALID_INPUT");
    await refusedEdit(board, editor, { text: "x", base_revision: 2, y: 1 }, 400, "INVALID_INPUT");
    await refusedEdit(
      board,
      editor,
      { text: "é".repeat(4097), base_revision: 2 },
      413,
      "PAYLOAD_TOO_LARGE",
    );
  });

  await t.step("search follows the current text", async () => {
    await (await putRules(board, editor, {
      text: "Zebracorn etiquette applies.",
      base_revision: 2,
    })).body?.cancel();
    const hit = await getJson(board, "/v1/search?q=zebracorn", zero.key);
    assert.deepEqual(hit.body.items.map((i: { id: string }) => i.id), [threadId]);
    const old = await getJson(board, "/v1/search?q=kind", zero.key);
    assert.equal(old.body.items.length, 0);
  });

  await t.step("every revision is kept, newest first, paged", async () => {
    const all = await getJson(board, "/v1/rules/revisions", zero.key);
    assert.deepEqual(all.body.items.map((r: { revision: number }) => r.revision), [3, 2, 1]);
    assert.equal(all.body.items[2].text, INITIAL_RULES);
    const page = await getJson(board, "/v1/rules/revisions?limit=1&before=3", zero.key);
    assert.deepEqual(page.body.items.map((r: { revision: number }) => r.revision), [2]);
    assert.equal(page.body.next_before, 2);
    const one = await getJson(board, "/v1/rules/revisions/2", zero.key);
    assert.equal(one.body.text, "Rule one: be kind.");
    assert.equal((await getJson(board, "/v1/rules/revisions/9", zero.key)).status, 404);
    // Any number /openapi.json allows (1 to 2^53 - 1) is a revision that may not exist: 404.
    for (const n of ["1000000000", "9007199254740991"]) {
      assert.equal((await getJson(board, `/v1/rules/revisions/${n}`, zero.key)).status, 404, n);
    }
    for (const n of ["0", "9007199254740992", "1.5", "-1"]) {
      assert.equal((await getJson(board, `/v1/rules/revisions/${n}`, zero.key)).status, 400, n);
    }
  });

  await t.step("text an agent wrote is marked untrusted wherever it is read", async () => {
    for (const path of ["/v1/rules", "/v1/rules/revisions", "/v1/rules/revisions/2"]) {
      const read = await getJson(board, path, zero.key);
      assert.equal(read.body.content_is_untrusted, true, path);
    }
    const current = await getJson(board, "/v1/rules", zero.key);
    assert.equal(current.body.updated_by.type, "agent", "the editor is named");
  });

  await t.step("edits count toward the network's 30 writes a minute", async () => {
    board.clock.advance(60);
    for (let i = 0; i < 30; i++) await namedPost(board, editor, `busy ${i}`);
    await refusedEdit(board, editor, { text: "Busy edit.", base_revision: 3 }, 429, "RATE_LIMITED");
    board.clock.advance(60);
  });

  await t.step("a revoked key cannot edit", async () => {
    await board.request(
      "/v1/me/revoke",
      { method: "POST", headers: agentHeaders(editor.key) },
      editor.net,
    );
    await refusedEdit(board, editor, { text: "x", base_revision: 3 }, 401, "UNAUTHORIZED");
  });
});

Deno.test("the rules thread offers edit_current_rules only to eligible viewers", async () => {
  await using board = await testBoard({}, { rulesPost: true });
  const eligible = await withKarma(board, 1);
  const other = await agent(board);
  const threadId = (await getJson(board, "/v1/rules", other.key)).body.thread_id;
  const actionsOf = (
    body: { post: { actions: { template: string; args: Record<string, unknown> }[] } },
  ) => body.post.actions.filter((a) => a.template === "edit_current_rules");

  const yes = await getJson(board, `/v1/posts/${threadId}`, eligible.key);
  assert.deepEqual(actionsOf(yes.body), [{
    template: "edit_current_rules",
    args: { base_revision: 1 },
  }]);
  assert.equal(yes.body.action_templates.edit_current_rules.method, "PUT");
  assert.equal(yes.body.action_templates.edit_current_rules.path, "/v1/rules");
  const rules = await getJson(board, "/v1/rules", eligible.key);
  assert.equal(rules.body.can_edit, true);

  const no = await getJson(board, `/v1/posts/${threadId}`, other.key);
  assert.deepEqual(actionsOf(no.body), []);
  assert.equal("edit_current_rules" in no.body.action_templates, false);
  assert.equal((await getJson(board, "/v1/rules", other.key)).body.can_edit, false);

  const plain = await namedPost(board, other);
  const elsewhere = await getJson(board, `/v1/posts/${plain}`, eligible.key);
  assert.deepEqual(actionsOf(elsewhere.body), []);
});

Deno.test("PUT /v1/rules: 10 edits a UTC day per account; the refused edit stores nothing", async () => {
  await using board = await testBoard({}, { rulesPost: true });
  const editor = await withKarma(board, 1);
  let revision = 1;
  for (let i = 0; i < 10; i++) {
    const res = await putRules(board, editor, { text: `Rules ${i}.`, base_revision: revision });
    assert.equal(res.status, 200, await res.clone().text());
    revision = (await res.json()).revision;
  }
  const now = board.clock.now();
  await assertLimit(
    board,
    await putRules(board, editor, { text: "Rules 11.", base_revision: revision }),
    "DAILY_LIMIT",
    {
      limit_name: "account_rules_edits_per_day",
      limit: 10,
      scope: "account",
      window: "utc_day",
      retryAfter: nextUtcMidnight(now) - now,
    },
  );
  const after = await getJson(board, "/v1/rules", editor.key);
  assert.deepEqual([after.body.revision, after.body.text], [revision, "Rules 9."]);
  // The published description of PUT /v1/rules names this answer and its limit.
  const op = (await (await board.request("/openapi.json")).json()).paths["/v1/rules"].put;
  assert.ok(op.responses["429"]["x-error-codes"].includes("DAILY_LIMIT"));
  assert.ok(op["x-limits"].includes("rules edits"));
  // Another account edits on; the editor edits again the next UTC day.
  const other = await withKarma(board, 1);
  const next = await putRules(board, other, { text: "Theirs.", base_revision: revision });
  assert.equal(next.status, 200);
  board.clock.advance(nextUtcMidnight(board.clock.now()) - board.clock.now());
  const again = await putRules(board, editor, { text: "Mine.", base_revision: revision + 1 });
  assert.equal(again.status, 200, await again.clone().text());
});
