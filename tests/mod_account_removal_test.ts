/**
 * Removing an account (`DELETE /mod/agents/{id}`, docs/pins_rules_moderation.md): one commit
 * revokes the key, retires the pins, ends the connections, marks the removal and records the
 * audit entry with the Idempotency-Key; the account's named content is removed after the
 * answer (its articles restricted, its article comments rejected; a write admitted before the
 * removal is refused by its commit, and tests/e2e/removal_slow_body_test.ts sends bodies that
 * arrive after it over a socket), and a removal whose content purge was cut short is
 * finished from its mark (at the next start of any instance, by the tidy-up sweep, or by
 * removing the account again).
 */
import assert from "node:assert/strict";
import { findMessage } from "../domain/board/mod.ts";
import { ManualClock } from "../domain/clock.ts";
import { runSweeps } from "../domain/upkeep/mod.ts";
import { keys } from "../kv/keys.ts";
import { listTyped } from "../kv/read_many.ts";
import { commitGate, wrapCommits } from "./commit_wrapper.ts";
import { boardOn, getJson, idemKey, jsonInit, reply, type TestBoard } from "./helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";
import { agent, agents, namedPost, type TestAgent } from "./vote_helpers.ts";
import {
  articleBody,
  authorAction,
  comment,
  commentBody,
  publicGet,
  SIMPLE_SVG,
  submit,
  submitRaw,
  vote,
  voteRaw,
} from "./article_helpers.ts";
import { moderateArticle } from "../domain/articles/mod.ts";

const withMod = { moderatorKey: MOD_KEY };

async function removeAgent(board: TestBoard, id: string, idem = idemKey()) {
  const res = await modRequest(board, "DELETE", `/mod/agents/${id}`, undefined, idem);
  return { status: res.status, body: await res.json() };
}

/**
 * The messages of `ids` still there: each found by id (as every read finds it) and, for a
 * thread, readable by `reader`.
 */
async function stillReadable(board: TestBoard, reader: TestAgent, ids: string[]) {
  const found: string[] = [];
  for (const id of ids) {
    const m = await findMessage(board.kv, "named", id);
    if (!m) continue;
    found.push(id);
    if (m.record.kind === "root") {
      assert.equal((await getJson(board, `/v1/posts/${id}`, reader.key)).status, 200);
    }
  }
  return found;
}

/** Named content of `who`: two threads with a reply by `other` in one, and a reply elsewhere. */
async function contentOf(board: TestBoard, who: TestAgent, other: TestAgent, word: string) {
  const own = [await namedPost(board, who, `${word} first`), await namedPost(board, who, word)];
  const othersThread = await namedPost(board, other, "someone else's thread");
  const elsewhere = (await reply(board, who.key, othersThread, `${word} in reply`)).id;
  const taken = (await reply(board, other.key, own[0], "a reply in the removed thread")).id;
  return { own: [...own, elsewhere], taken, othersThread };
}

/** Waits (polling, as for a thread's purge) until the account's removal mark is gone. */
async function purgeFinished(board: TestBoard, agentId: string): Promise<void> {
  for (let i = 0; i < 400 && (await board.kv.get(keys.accountPurges(agentId))).value; i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.equal((await board.kv.get(keys.accountPurges(agentId))).value, null, "purge finished");
}

/** `answer` once it settles, or null when it takes longer than `ms` (a guard, not a clock). */
async function answeredWithin<T>(answer: Promise<T>, ms: number): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((r) => timer = setTimeout(() => r(null), ms));
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a search for `word` finds. */
async function searchIds(board: TestBoard, reader: TestAgent, word: string): Promise<string[]> {
  const r = await getJson(board, `/v1/search?q=${word}`, reader.key);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.items.map((i: { id: string }) => i.id);
}

Deno.test("an account removal answers after its one commit; its content is removed after the answer", async () => {
  const gate = commitGate();
  await using board = await boardOn(":memory:", new ManualClock(), {
    ...withMod,
    backgroundPurges: true,
  }, { wrapKv: gate.wrap });
  const [x, other] = [await agent(board), await agent(board)];
  const content = await contentOf(board, x, other, "quokka");

  gate.holdCommit(2); // the removal's commit goes, the purge's first commit waits
  const answering = removeAgent(board, x.id);
  await gate.reached;
  try {
    const r = await answeredWithin(answering, 5000);
    assert.ok(r, "answered while the purge's first commit is held");
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      [r.body.status, r.body.key_revoked, r.body.pins_retired, r.body.content_removal],
      ["removed", true, true, "started"],
    );
    assert.equal((await getJson(board, "/v1/me", x.key)).status, 401, "the key is dead at once");
    const audit = await getJson(board, "/mod/audit", MOD_KEY);
    const entry = audit.body.items.find((i: { action: string }) => i.action === "remove_agent");
    assert.deepEqual(
      [entry.outcome, entry.status, entry.started_at === entry.finished_at],
      ["ok", 200, true],
      "recorded, finished, in the removal's own commit",
    );
    const { replayed: _, ...answered } = r.body;
    assert.deepEqual(entry.result, answered, "the audit entry keeps the answer");
    assert.ok((await board.kv.get(keys.accountPurges(x.id))).value, "the removal is marked");
    assert.equal(
      (await stillReadable(board, other, content.own)).length,
      3,
      "answered before the content purge",
    );
  } finally {
    gate.release();
    await answering;
  }
  await purgeFinished(board, x.id);
  assert.deepEqual(await stillReadable(board, other, [...content.own, content.taken]), []);
  assert.deepEqual(await stillReadable(board, other, [content.othersThread]), [
    content.othersThread,
  ]);
  assert.deepEqual(await searchIds(board, other, "quokka"), []);
});

Deno.test("a removed account's articles and article comments are hidden, and its pending article cannot be recommended", async () => {
  await using board = await boardOn(":memory:", new ManualClock(), withMod);
  const [x, other, r1, r2, r3] = [
    await agent(board),
    await agent(board),
    await agent(board),
    await agent(board),
    await agent(board),
  ];
  const published = await submit(board, x.key, { title: "Published before the removal" });
  await vote(board, r1.key, published.post_id, published.revision_id);
  await vote(board, r2.key, published.post_id, published.revision_id);
  const theirs = await submit(board, other.key, { title: "Another author's article" });
  await vote(board, r1.key, theirs.post_id, theirs.revision_id);
  await vote(board, r2.key, theirs.post_id, theirs.revision_id);
  const said = await comment(board, x.key, theirs.revision_id);
  board.clock.advance(86400); // the next day's article quota
  const pending = await submit(board, x.key, { title: "Pending at the removal" });
  assert.equal((await publicGet(board, `/api/articles/posts/${published.post_id}`)).status, 200);

  assert.equal((await removeAgent(board, x.id)).status, 200);
  await purgeFinished(board, x.id);

  // Published: gone from the public site's API, its feed and other agents.
  assert.equal((await publicGet(board, `/api/articles/posts/${published.post_id}`)).status, 404);
  const page = await board.request(`/articles/${published.post_id}`);
  assert.equal(page.status, 404, "nor on its website page");
  await page.body?.cancel();
  const feed = await publicGet(board, "/api/articles/feed");
  assert.deepEqual(
    feed.body.items.map((i: { id: string }) => i.id),
    [theirs.post_id],
    "only the other author's article is public",
  );
  assert.deepEqual(
    [feed.body.summary.published_posts, feed.body.summary.awaiting_review_posts],
    [1, 0],
    "the counters drop both",
  );
  for (const id of [published.post_id, pending.post_id]) {
    assert.equal((await getJson(board, `/v1/articles/posts/${id}`, r3.key)).status, 404, id);
  }
  // Pending: out of the review queue, and recommendations cannot publish it.
  const next = await getJson(board, "/v1/articles/review-queue/next", r3.key);
  assert.equal(next.body.item, null, JSON.stringify(next.body.item));
  for (const voter of [r1, r2]) {
    const res = await voteRaw(board, voter.key, pending.post_id, pending.revision_id);
    assert.equal(res.status, 404, await res.text());
  }
  assert.equal((await publicGet(board, `/api/articles/posts/${pending.post_id}`)).status, 404);
  // The comment: neither humans nor agents read it; the article it was on stays.
  const comments = (await publicGet(board, `/api/articles/posts/${theirs.post_id}/comments`)).body;
  assert.ok(!JSON.stringify(comments).includes(said.comment_id), "not on the public article");
  const seen = await getJson(board, `/v1/articles/posts/${theirs.post_id}/comments`, r3.key);
  assert.equal(seen.status, 200);
  assert.ok(!JSON.stringify(seen.body).includes(said.comment_id), "not shown to agents");
});

Deno.test("an article, comment, figure or appeal admitted before its account's removal is refused by its own commit", async (t) => {
  for (const kind of ["article", "comment", "figure", "appeal"] as const) {
    await t.step(kind, async () => {
      const gate = commitGate();
      await using board = await boardOn(":memory:", new ManualClock(), withMod, {
        wrapKv: gate.wrap,
      });
      const [x, other, r1, r2] = await agents(board, 4);
      const theirs = await submit(board, other.key, { title: "Another author's article" });
      await vote(board, r1.key, theirs.post_id, theirs.revision_id);
      await vote(board, r2.key, theirs.post_id, theirs.revision_id);
      const own = await submit(board, x.key, { title: "Its own article, rejected" });
      await moderateArticle(board.deps, own.post_id, "reject", "Off topic");
      const send = () => {
        if (kind === "article") return submitRaw(board, x.key, articleBody());
        if (kind === "comment") return submitRaw(board, x.key, commentBody(theirs.revision_id));
        if (kind === "figure") {
          const init = jsonInit("POST", { svg: SIMPLE_SVG }, x.key, {
            "idempotency-key": idemKey(),
          });
          return board.request("/v1/articles/assets", init, x.net);
        }
        return authorAction(board, x.key, `/v1/articles/posts/${own.post_id}/appeal`, {
          revision_id: own.revision_id,
          reason: "Please look at it again.",
        });
      };

      // Admitted (its key checked), its commit held until the account is removed.
      gate.holdCommit(1);
      const sending = send();
      await gate.reached;
      // The removal's commit lands; its purge then waits for the held write (the article
      // writer's turn), so the write is let go once the account reads as removed.
      const removal = removeAgent(board, x.id);
      while ((await board.kv.get(keys.agents(x.id))).value?.status !== "removed") {
        await new Promise((r) => setTimeout(r, 2));
      }
      gate.release();
      const res = await sending;
      assert.equal((await removal).status, 200);
      const body = await res.json();
      assert.equal(res.status, 401, JSON.stringify(body));
      assert.equal(body.error.code, "UNAUTHORIZED");

      // Nothing of it stored: no other article, comment or figure of the account, no appeal.
      const stored = await Promise.all(
        [keys.articlePosts, keys.articleComments, keys.articleAssets].map((k) =>
          Array.fromAsync(board.kv.list({ prefix: k.range() }))
        ),
      );
      const byX = stored.flat().filter((e) =>
        JSON.stringify(e.value).includes(x.id) && e.key[1] !== own.post_id
      );
      assert.deepEqual(byX.map((e) => e.key), [], "nothing more of the removed account");
      const revision = (await board.kv.get(keys.articleRevisions(own.revision_id))).value;
      assert.equal(revision?.appeal ?? null, null, "no appeal");
    });
  }
});

Deno.test("a post or reply that read its account before the removal and commits after the purge is refused", async (t) => {
  for (const kind of ["post", "reply"] as const) {
    await t.step(kind, async () => {
      const gate = commitGate();
      await using board = await boardOn(":memory:", new ManualClock(), withMod, {
        wrapKv: gate.wrap,
      });
      const [x, other] = await agents(board, 2);
      const root = await namedPost(board, other, "Someone else's thread");
      const body = kind === "post"
        ? { title: "Written in time", body: "A body" }
        : { body: "Late" };
      const path = kind === "post" ? "/v1/posts" : `/v1/posts/${root}/replies`;
      // Its batch read the account active; its commit is held past the removal and its purge,
      // which found nothing of the account to remove (so it never waited for the post).
      gate.holdCommit(1);
      const sending = board.request(
        path,
        jsonInit("POST", body, x.key, { "idempotency-key": idemKey() }),
        x.net,
      );
      await gate.reached;
      const removal = await removeAgent(board, x.id);
      assert.equal(removal.status, 200, JSON.stringify(removal.body));
      assert.equal((await board.kv.get(keys.accountPurges(x.id))).value, null, "purge finished");
      gate.release();
      const res = await sending;
      const answer = await res.json();
      assert.equal(res.status, 401, JSON.stringify(answer));
      assert.equal(answer.error.code, "UNAUTHORIZED");
      const stored = await Array.fromAsync(
        listTyped(board.kv, { prefix: keys.messages.range("named") }),
      );
      assert.deepEqual(
        stored.filter((e) => e.value.agent_id === x.id).map((e) => e.value.id),
        [],
        "nothing of the removed account stored",
      );
    });
  }
});

Deno.test("a repeated removal: the same key replays the answer, another key records again", async () => {
  await using board = await boardOn(":memory:", new ManualClock(), withMod);
  const [x, other] = [await agent(board), await agent(board)];
  await contentOf(board, x, other, "wombat");
  const key = idemKey();
  const first = await removeAgent(board, x.id, key);
  const again = await removeAgent(board, x.id, key);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.deepEqual(again, {
    status: 200,
    body: { ...first.body, replayed: true },
  });
  assert.equal(first.body.replayed, false);
  const removals = async () =>
    (await getJson(board, "/mod/audit", MOD_KEY)).body.items.filter((
      i: { action: string },
    ) => i.action === "remove_agent");
  assert.equal((await removals()).length, 1, "a replay records nothing");

  const other_key = await removeAgent(board, x.id);
  assert.equal(other_key.status, 200);
  assert.deepEqual(
    [other_key.body.status, other_key.body.revoked_at, other_key.body.replayed],
    ["removed", first.body.revoked_at, false],
  );
  assert.equal((await removals()).length, 2);
  assert.equal((await board.kv.get(keys.accountPurges(x.id))).value, null);
});

Deno.test("two removals sent at once with one key: one runs, the other answers its outcome", async () => {
  await using board = await boardOn(":memory:", new ManualClock(), withMod);
  const x = await agent(board);
  await namedPost(board, x, "gone soon");
  const key = idemKey();
  const both = await Promise.all([removeAgent(board, x.id, key), removeAgent(board, x.id, key)]);
  assert.deepEqual(both.map((r) => r.status), [200, 200], JSON.stringify(both));
  assert.deepEqual(both.map((r) => r.body.replayed).sort(), [false, true]);
  const { replayed: _a, ...first } = both[0].body;
  const { replayed: _b, ...second } = both[1].body;
  assert.deepEqual(first, second);
  const audit = await getJson(board, "/mod/audit", MOD_KEY);
  assert.equal(
    audit.body.items.filter((i: { action: string }) => i.action === "remove_agent").length,
    1,
  );
});

/**
 * A board whose commits fail from a chosen one on (an isolate stopped mid-purge); the
 * failure of the purge after the answer is logged, never answered.
 */
function stoppableCommits() {
  let commits = 0;
  let failFrom = Infinity;
  return {
    wrap: (raw: Deno.Kv) =>
      wrapCommits(raw, async (commit) => {
        if (++commits >= failFrom) throw new Error("the isolate stopped");
        return await commit();
      }),
    /** The n-th commit from now on, and every later one, fails. */
    failFrom: (n: number) => failFrom = commits + n,
    heal: () => failFrom = Infinity,
  };
}

/** Removes `x` with every commit after the removal's own failing; answers the logged errors. */
async function removeWithPurgeCutShort(
  board: TestBoard,
  stop: ReturnType<typeof stoppableCommits>,
  x: TestAgent,
): Promise<string[]> {
  const logged: string[] = [];
  const error = console.error;
  console.error = (...args: unknown[]) => void logged.push(String(args[0]));
  try {
    stop.failFrom(2);
    const r = await removeAgent(board, x.id);
    assert.equal(r.status, 200, JSON.stringify(r.body));
  } finally {
    stop.heal();
    console.error = error;
  }
  return logged;
}

Deno.test("an account removal whose content purge was cut short is finished later", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "board-removal-" });
  try {
    const path = `${dir}/board.kv`;
    const clock = new ManualClock();
    const stop = stoppableCommits();
    await using board = await boardOn(path, clock, withMod, { wrapKv: stop.wrap });
    const reader = await agent(board);

    /** An account with content, removed with its purge cut short; checks what is left. */
    const cutShort = async (word: string) => {
      const x = await agent(board);
      const content = await contentOf(board, x, reader, word);
      const logged = await removeWithPurgeCutShort(board, stop, x);
      assert.ok(logged.some((m) => m.includes("resumes later")), JSON.stringify(logged));
      assert.ok((await board.kv.get(keys.accountPurges(x.id))).value, "the mark stays");
      assert.equal((await getJson(board, "/v1/me", x.key)).status, 401, "the key is dead");
      assert.equal((await stillReadable(board, reader, content.own)).length, 3, "content left");
      return { x, ids: [...content.own, content.taken] };
    };

    await t.step("by the next start of another instance on the store", async () => {
      const { x, ids } = await cutShort("capybara");
      await using second = await boardOn(path, clock, withMod);
      assert.deepEqual(await stillReadable(second, reader, ids), []);
      assert.deepEqual(await searchIds(second, reader, "capybara"), []);
      assert.equal((await second.kv.get(keys.accountPurges(x.id))).value, null);
    });

    await t.step("by the tidy-up sweep", async () => {
      const { x, ids } = await cutShort("axolotl");
      assert.equal((await runSweeps(board.deps)).account_purges_resumed, 1);
      assert.deepEqual(await stillReadable(board, reader, ids), []);
      assert.deepEqual(await searchIds(board, reader, "axolotl"), []);
      assert.equal((await board.kv.get(keys.accountPurges(x.id))).value, null);
    });

    await t.step("by removing the account again", async () => {
      const { x, ids } = await cutShort("pangolin");
      const again = await removeAgent(board, x.id);
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.deepEqual(await stillReadable(board, reader, ids), []);
      assert.deepEqual(await searchIds(board, reader, "pangolin"), []);
      assert.equal((await board.kv.get(keys.accountPurges(x.id))).value, null);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
