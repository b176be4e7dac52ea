/**
 * The moderator desk (docs/website.md "Moderator desk"): off without a key; sign-in with the
 * key (throttled like /mod), the session cookie and its attributes, sessions shared by
 * processes and ended by time, sign-out and key changes; the refusal of other sites' posts and
 * stale tokens; decisions, appeals and account removal through the same audited functions as
 * the JSON interface; the audit trail page.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { keys } from "../kv/keys.ts";
import { moderateArticle } from "../domain/articles/mod.ts";
import { boardOn, freshNetwork, idemKey, register, testBoard } from "./helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";
import { authorAction, submit } from "./article_helpers.ts";
import { alertText, assertRedirect, DeskBrowser, heldComment } from "./desk_helpers.ts";
import { Guest } from "./website_helpers.ts";

const withMod = { moderatorKey: MOD_KEY };

async function auditEntries(board: { kv: Deno.Kv }) {
  const out: Array<Record<string, unknown>> = [];
  for await (const e of board.kv.list<Record<string, unknown>>({ prefix: ["mod_audit"] })) {
    out.push(e.value);
  }
  return out;
}

async function commentStatus(
  board: { request: (p: string, i?: RequestInit) => Promise<Response> },
  id: string,
) {
  const res = await modRequest(board as never, "GET", "/mod/comments/pending");
  const body = await res.json();
  return body.items.some((c: { id: string }) => c.id === id) ? "pending" : "decided";
}

Deno.test("the desk is off (404) without BOARD_MODERATOR_KEY", async () => {
  await using board = await testBoard();
  const desk = new DeskBrowser(board);
  for (const path of ["/mod/desk", "/mod/desk/sign-in", "/mod/desk/audit", "/mod/desk/accounts"]) {
    assert.equal((await desk.get(path)).res.status, 404, path);
  }
  assert.equal((await desk.post("/mod/desk/sign-in", { key: "x" })).res.status, 404);
});

Deno.test("desk sign-in: the form, the cookie, the pages' headers; the key is never echoed", async (t) => {
  await using board = await testBoard(withMod);
  const desk = new DeskBrowser(board);

  await t.step("without a session every page leads to the sign-in form", async () => {
    for (
      const path of ["/mod/desk", "/mod/desk/audit", "/mod/desk/accounts", "/mod/desk/sign-out"]
    ) {
      assertRedirect((await desk.get(path)).res, "/mod/desk/sign-in");
    }
    const { res, html } = await desk.get("/mod/desk/sign-in");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'none'/);
    assert.doesNotMatch(res.headers.get("content-security-policy") ?? "", /script-src/);
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.match(html, /type="password"/);
    const nonce = res.headers.getSetCookie()[0];
    assert.match(nonce, /^board_mod_sign_in=[A-Za-z0-9_-]{43};/);
    assert.match(nonce, /HttpOnly/);
    assert.match(nonce, /SameSite=Strict/);
  });

  await t.step("a wrong key: 401, the field marked, the key not in the page", async () => {
    const wrong = "not-the-key-but-long-enough-0123456789";
    const { res, html } = await desk.signIn(wrong);
    assert.equal(res.status, 401);
    assert.match(alertText(html) ?? "", /not the moderator key/);
    assert.match(html, /aria-invalid="true"/);
    assert.ok(!html.includes(wrong));
    assert.equal(desk.cookies.has("board_mod"), false);
  });

  await t.step(
    "the right key: a session cookie (HttpOnly, Strict, 30 minutes), no key",
    async () => {
      const { res } = await desk.signIn();
      assertRedirect(res, "/mod/desk");
      const set = res.headers.getSetCookie().find((c) => c.startsWith("board_mod="))!;
      assert.match(set, /HttpOnly/);
      assert.match(set, /SameSite=Strict/);
      assert.match(set, /Path=\/mod\/desk/);
      assert.match(set, /Max-Age=1800/);
      assert.doesNotMatch(set, /Secure/);
      assert.ok(!res.headers.getSetCookie().join().includes(MOD_KEY));
      const value = desk.cookies.get("board_mod")!;
      const stored = await board.kv.get<Record<string, unknown>>(
        keys.modDeskSessions(
          Array.from(
            new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value))),
          ).map((b) => b.toString(16).padStart(2, "0")).join(""),
        ),
      );
      assert.ok(stored.value, "the session is in KV under the cookie's SHA-256");
      assert.ok(!JSON.stringify(stored.value).includes(MOD_KEY));
      assert.ok(!JSON.stringify(stored.value).includes(value));
      const { res: page, html } = await desk.get("/mod/desk");
      assert.equal(page.status, 200);
      assert.match(html, /Moderation queue/);
      assert.ok(!html.includes(MOD_KEY));
      assert.equal(
        (await desk.get("/mod/desk/sign-in")).res.status,
        303,
        "signed in: to the queue",
      );
    },
  );

  await t.step("a sign-in form post without the form's cookie is refused", async () => {
    const other = new DeskBrowser(board);
    const { res } = await other.post("/mod/desk/sign-in", { csrf: "x".repeat(43), key: MOD_KEY });
    assert.equal(res.status, 403);
    assert.equal(other.cookies.has("board_mod"), false);
  });
});

Deno.test("desk over HTTPS: the __Host- cookie, Secure, Path=/", async () => {
  await using board = await testBoard({ ...withMod, baseUrl: "https://board.example" });
  const desk = new DeskBrowser(board);
  const { res } = await desk.signIn();
  assertRedirect(res, "/mod/desk");
  const set = res.headers.getSetCookie().find((c) => c.startsWith("__Host-board_mod="))!;
  assert.ok(set, res.headers.getSetCookie().join(" | "));
  assert.match(set, /Secure/);
  assert.match(set, /Path=\/;/);
  assert.match(set, /HttpOnly/);
  assert.match(set, /SameSite=Strict/);
  assert.doesNotMatch(set, /Domain=/);
  assert.equal((await desk.get("/mod/desk")).res.status, 200);
});

Deno.test("desk sign-in is throttled with the moderator-key check of /mod", async () => {
  await using board = await testBoard(withMod);
  const network = freshNetwork();
  const desk = new DeskBrowser(board, network);
  // Five wrong keys on the JSON interface and five on the desk fill the same window.
  for (let i = 0; i < 5; i++) {
    const res = await board.request("/mod/audit", {
      headers: { accept: "application/json", authorization: "Bearer wrong-key" },
    }, network);
    assert.equal(res.status, 401);
    await res.body?.cancel();
    assert.equal((await desk.signIn("wrong-key")).res.status, 401);
  }
  const limited = await desk.signIn("wrong-key");
  assert.equal(limited.res.status, 429);
  const wait = Number(limited.res.headers.get("retry-after"));
  assert.ok(wait > 0);
  // The page says the wait its Retry-After says.
  assert.match(limited.html, new RegExp(`Try again in ${wait} seconds`));
  // While the window is full even the right key is refused (the throttle answers no guess).
  assert.equal((await desk.signIn()).res.status, 429);
  assert.equal(desk.cookies.has("board_mod"), false);
  board.clock.advance(61);
  assertRedirect((await desk.signIn()).res, "/mod/desk");
});

Deno.test("desk sessions: shared by processes on one store; ended by time, sign-out, a new key", async (t) => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/board.kv`;
  const clock = new ManualClock();
  await using a = await boardOn(path, clock, withMod);
  await using b = await boardOn(path, clock, withMod);
  const desk = new DeskBrowser(a);
  assertRedirect((await desk.signIn()).res, "/mod/desk");
  const onB = new DeskBrowser(b, desk.network);
  onB.cookies = new Map(desk.cookies);

  await t.step("a session opened on one process works on another", async () => {
    assert.equal((await onB.get("/mod/desk")).res.status, 200);
  });

  await t.step("after 30 minutes (the injected clock) the session has ended", async () => {
    clock.advance(29 * 60);
    assert.equal((await desk.get("/mod/desk")).res.status, 200);
    clock.advance(60);
    const { res } = await desk.get("/mod/desk");
    assertRedirect(res, "/mod/desk/sign-in?ended=1");
    const { html } = await desk.get("/mod/desk/sign-in?ended=1");
    assert.match(alertText(html) ?? html, /session has ended/);
  });

  await t.step("sign-out on one process ends the session on the other", async () => {
    assertRedirect((await desk.signIn()).res, "/mod/desk");
    onB.cookies = new Map(desk.cookies);
    await onB.get("/mod/desk/sign-out");
    assertRedirect(
      (await onB.post("/mod/desk/sign-out", {})).res,
      "/mod/desk/sign-in?signed_out=1",
    );
    assertRedirect((await desk.get("/mod/desk")).res, "/mod/desk/sign-in?ended=1");
    // The other tab is told a sign-out may have ended it, not only the 30 minutes.
    const told = await desk.get("/mod/desk/sign-in?ended=1");
    assert.match(alertText(told.html) ?? told.html, /signing out anywhere ends them/);
  });

  await t.step("a process with another moderator key does not accept the session", async () => {
    assertRedirect((await desk.signIn()).res, "/mod/desk");
    await using c = await boardOn(path, clock, { moderatorKey: `${MOD_KEY}-rotated` });
    const onC = new DeskBrowser(c, desk.network);
    onC.cookies = new Map(desk.cookies);
    assertRedirect((await onC.get("/mod/desk")).res, "/mod/desk/sign-in?ended=1");
  });
  await Deno.remove(dir, { recursive: true });
});

Deno.test("desk decisions: held comments, the same audit entries as /mod, replays", async (t) => {
  await using board = await testBoard(withMod);
  const first = await heldComment(board);
  const second = await heldComment(board);
  const third = await heldComment(board);
  const desk = new DeskBrowser(board);
  await desk.signIn();

  await t.step("the queue lists held comments with their decision forms", async () => {
    const { html } = await desk.get("/mod/desk");
    assert.match(html, /Held comments \(3\)/);
    for (const c of [first, second, third]) assert.ok(html.includes(`value="${c.comment}"`));
    assert.equal(desk.idem.length, 3);
  });

  let seq = 0;
  await t.step("approve: a 303 naming the audit entry; a double post replays it", async () => {
    const idem = desk.idem[0];
    const fields = {
      target: "comment",
      id: first.comment,
      decision: "approve",
      reason: "Useful link",
      idempotency_key: idem,
    };
    const { res } = await desk.post("/mod/desk", fields);
    assertRedirect(res, "/mod/desk?done=*");
    seq = Number(res.headers.get("location")!.split("=")[1]);
    const again = await desk.post("/mod/desk", fields);
    assertRedirect(again.res, `/mod/desk?done=${seq}`);
    assert.equal((await auditEntries(board)).length, 1);
    const { html } = await desk.get(`/mod/desk?done=${seq}`);
    assert.match(html, /Done \(#\d+ in the audit trail\): The comment was approved\./);
    assert.match(html, /Held comments \(2\)/);
    assert.equal(await commentStatus(board, first.comment), "decided");
  });

  await t.step("the desk's audit entry is the JSON interface's, field for field", async () => {
    const res = await modRequest(board, "POST", `/mod/comments/${second.comment}/decision`, {
      action: "approve",
      reason: "Useful link",
      decides_pending: true,
    }, idemKey());
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const [fromDesk, fromJson] = await auditEntries(board);
    const shape = (r: Record<string, unknown>) => ({
      action: r.action,
      target: Object.keys(r.target as object),
      request: r.request,
      outcome: r.outcome,
      status: r.status,
      result: Object.keys(r.result as object).sort(),
    });
    assert.deepEqual(shape(fromDesk), shape(fromJson));
  });

  await t.step("reject; a blank reason is refused at the field and nothing changes", async () => {
    await desk.get("/mod/desk");
    const blank = await desk.post("/mod/desk", {
      target: "comment",
      id: third.comment,
      decision: "reject",
      reason: "",
      idempotency_key: desk.idem[0],
    });
    assert.equal(blank.res.status, 400);
    assert.match(alertText(blank.html) ?? "", /Give a reason/);
    assert.match(blank.html, new RegExp(`id="reason-${third.comment}"[^>]*aria-invalid="true"`));
    assert.equal(await commentStatus(board, third.comment), "pending");
    const { res } = await desk.post("/mod/desk", {
      target: "comment",
      id: third.comment,
      decision: "reject",
      reason: "Spam",
      idempotency_key: desk.idem[0],
    });
    assertRedirect(res, "/mod/desk?done=*");
    assert.equal(await commentStatus(board, third.comment), "decided");
  });

  await t.step("the audit trail page shows every entry, newest first", async () => {
    const { res, html } = await desk.get("/mod/desk/audit");
    assert.equal(res.status, 200);
    const rows = [...html.matchAll(/<tr id="audit-(\d+)"/g)].map((m) => Number(m[1]));
    assert.deepEqual(rows, [3, 2, 1]);
    assert.match(html, /comment_decision/);
    // Actions of one day are told apart: each shows its time of day, not only its date.
    const times = [...html.matchAll(/<time datetime="[^"]+"[^>]*>([^<]*)<\/time>/g)].map((m) =>
      m[1]
    );
    assert.ok(times.length >= 3, `${times.length} times shown`);
    for (const t of times) assert.match(t, /^\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC$/);
    assert.doesNotMatch(html, /Newest entries/, "the first page links back to nothing");
  });

  await t.step("a page past the oldest entry says so and links back to the newest", async () => {
    const { res, html } = await desk.get("/mod/desk/audit?before=1");
    assert.equal(res.status, 200);
    assert.match(html, /No older entries\./);
    assert.doesNotMatch(html, /has been recorded yet/);
    assert.match(html, /<a href="\/mod\/desk\/audit">← Newest entries<\/a>/);
    const older = await desk.get("/mod/desk/audit?before=3");
    const rows = [...older.html.matchAll(/<tr id="audit-(\d+)"/g)].map((m) => Number(m[1]));
    assert.deepEqual(rows, [2, 1]);
    assert.match(older.html, /← Newest entries/);
  });
});

Deno.test("a desk decision from a tab shown before another decision is refused, never turned around", async () => {
  await using board = await testBoard(withMod);
  const desk = new DeskBrowser(board);
  await desk.signIn();
  const held = await heldComment(board);
  // Two tabs show the queue; the held comment's form has a key of its own in each.
  const formKey = (html: string) =>
    html.split("<form").find((f) => f.includes(`name="id" value="${held.comment}"`))!
      .match(/name="idempotency_key" value="([^"]+)"/)![1];
  const tabA = formKey((await desk.get("/mod/desk")).html);
  const tabB = formKey((await desk.get("/mod/desk")).html);
  assert.notEqual(tabA, tabB);
  const decide = (decision: string, key: string) =>
    desk.post("/mod/desk", {
      target: "comment",
      id: held.comment,
      decision,
      reason: decision === "reject" ? "Spam" : "Looks fine",
      idempotency_key: key,
    });
  assertRedirect((await decide("reject", tabA)).res, "/mod/desk?done=*");
  const entries = (await auditEntries(board)).length;
  const stale = await decide("approve", tabB);
  assert.equal(stale.res.status, 409);
  assert.match(alertText(stale.html) ?? "", /rejected now: it was decided since/);
  const visible = await board.request(`/api/articles/posts/${held.article.id}/comments`);
  assert.ok(!(await visible.text()).includes(held.comment), "still rejected, not published");
  // The refusal is audited as a refusal: the decision itself changed nothing.
  const last = (await auditEntries(board)).at(-1)!;
  assert.equal((await auditEntries(board)).length, entries + 1);
  assert.equal(last.status, 409);
});

Deno.test("desk refuses other sites' posts and stale tokens; nothing is changed or audited", async (t) => {
  await using board = await testBoard(withMod);
  const held = await heldComment(board);
  const desk = new DeskBrowser(board);
  await desk.signIn();
  await desk.get("/mod/desk");
  const fields = () => ({
    target: "comment",
    id: held.comment,
    decision: "approve",
    reason: "ok",
    idempotency_key: idemKey(),
  });

  await t.step("Sec-Fetch-Site: cross-site, with the right cookie and token: 403", async () => {
    const { res } = await desk.post("/mod/desk", fields(), { "sec-fetch-site": "cross-site" });
    assert.equal(res.status, 403);
    const sameSite = await desk.post("/mod/desk", fields(), { "sec-fetch-site": "same-site" });
    assert.equal(sameSite.res.status, 403);
  });
  await t.step("an Origin of another site: 403", async () => {
    const { res } = await desk.post("/mod/desk", fields(), { origin: "https://evil.example" });
    assert.equal(res.status, 403);
  });
  await t.step("no token, or another session's token: 403", async () => {
    assert.equal((await desk.post("/mod/desk", { ...fields(), csrf: null })).res.status, 403);
    const other = new DeskBrowser(board);
    await other.signIn();
    await other.get("/mod/desk");
    const { res } = await desk.post("/mod/desk", { ...fields(), csrf: other.csrf });
    assert.equal(res.status, 403);
  });
  await t.step(
    "no session cookie (what SameSite=Strict leaves a cross-site post): sign-in",
    async () => {
      const bare = new DeskBrowser(board);
      const { res } = await bare.post("/mod/desk", { ...fields(), csrf: desk.csrf });
      assertRedirect(res, "/mod/desk/sign-in?ended=action");
    },
  );
  await t.step("an ended session's post changes nothing", async () => {
    board.clock.advance(30 * 60);
    const { res } = await desk.post("/mod/desk", fields());
    assertRedirect(res, "/mod/desk/sign-in?ended=action");
    // The sign-in page says the action was not carried out, not only that the session ended.
    const { html } = await desk.get("/mod/desk/sign-in?ended=action");
    assert.match(alertText(html) ?? html, /the action you sent was not carried out/);
  });
  assert.equal(await commentStatus(board, held.comment), "pending");
  assert.deepEqual(await auditEntries(board), []);
});

Deno.test("desk article reviews: open appeals listed (also at GET /mod/articles/appeals), granted or denied", async () => {
  await using board = await testBoard(withMod);
  const author = await register(board);
  const articles = [];
  for (const title of ["An article to restore", "An article to keep rejected"]) {
    const s = await submit(board, author.key, { title });
    await moderateArticle(board.deps, s.post_id, "reject", "Off topic");
    const ap = await authorAction(board, author.key, `/v1/articles/posts/${s.post_id}/appeal`, {
      revision_id: s.revision_id,
      reason: "It is on topic: it is about the board.",
    });
    assert.equal(ap.status, 200);
    await ap.body?.cancel();
    articles.push(s);
    board.clock.advance(1);
  }
  const json = await modRequest(board, "GET", "/mod/articles/appeals");
  const listed = await json.json();
  assert.equal(json.status, 200, JSON.stringify(listed));
  assert.deepEqual(
    listed.items.map((i: { post_id: string }) => i.post_id),
    articles.map((a) => a.post_id),
  );
  assert.equal(listed.items[0].appeal.reason, "It is on topic: it is about the board.");
  assert.equal(listed.items[0].moderation.reason, "Off topic");

  const desk = new DeskBrowser(board);
  await desk.signIn();
  const { html } = await desk.get("/mod/desk");
  assert.match(html, /open appeals \(2\)/);
  assert.match(html, /An article to restore/);
  for (const [i, decision] of [[0, "approve"], [1, "reject"]] as const) {
    await desk.get("/mod/desk");
    const { res } = await desk.post("/mod/desk", {
      target: "article",
      id: articles[i].post_id,
      decision,
      reason: "Reviewed",
      idempotency_key: desk.idem[0],
    });
    assertRedirect(res, "/mod/desk?done=*");
  }
  const audit = await auditEntries(board);
  assert.deepEqual(audit.map((r) => (r.request as { action: string }).action), [
    "restore",
    "reject",
  ]);
  assert.deepEqual(
    audit.map((r) => ((r.result as { appeal: { status: string } }).appeal.status)),
    ["granted", "denied"],
  );
  const after = await (await modRequest(board, "GET", "/mod/articles/appeals")).json();
  assert.deepEqual(after.items, []);
});

Deno.test("desk account removal: look-up, a confirmation step, the audit entry", async () => {
  await using board = await testBoard(withMod);
  const target = await register(board, "spam-source");
  const desk = new DeskBrowser(board);
  await desk.signIn();
  const missing = await desk.get("/mod/desk/accounts?agent=nobody-here");
  assert.equal(missing.res.status, 404);
  const { html } = await desk.get("/mod/desk/accounts?agent=spam-source");
  assert.match(html, /Confirm: remove spam-source\?/);
  // The step opens on the field it asks for.
  assert.match(html, /<input[^>]*id="confirm-name"[^>]*autofocus/);
  const idem = desk.idem[0];
  const wrong = await desk.post("/mod/desk/accounts", {
    agent_id: target.id,
    confirm_name: "spam",
    idempotency_key: idem,
  });
  assert.equal(wrong.res.status, 400);
  assert.match(alertText(wrong.html) ?? "", /Type the account(&#39;|')s name exactly/);
  const me = await board.request("/v1/me", {
    headers: {
      accept: "application/json",
      "x-agent-protocol": "board/1",
      authorization: `Bearer ${target.key}`,
    },
  });
  assert.equal(me.status, 200, "not removed yet");
  await me.body?.cancel();
  assert.deepEqual(await auditEntries(board), []);
  const { res } = await desk.post("/mod/desk/accounts", {
    agent_id: target.id,
    confirm_name: "spam-source",
    idempotency_key: idem,
  });
  assertRedirect(res, "/mod/desk/audit?done=1");
  const [entry] = await auditEntries(board);
  assert.equal(entry.action, "remove_agent");
  assert.deepEqual(entry.target, { agent_id: target.id });
  assert.equal(entry.outcome, "ok");
  const page = await desk.get("/mod/desk/audit?done=1");
  assert.match(page.html, /Done \(#1 in the audit trail\): The account was removed\./);
  // Its content leaves after the answer: the notice says so.
  assert.match(page.html, /its posts and replies leave the board in the background/);
  const gone = await desk.get(`/mod/desk/accounts?agent=${target.id}`);
  assert.match(gone.html, /already been removed/);
});

Deno.test("the JSON interface still refuses browsers; the desk does not take the key as a bearer", async () => {
  await using board = await testBoard(withMod);
  const res = await board.request("/mod/audit", {
    headers: { accept: "text/html", authorization: `Bearer ${MOD_KEY}` },
  });
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error.code, "JSON_REQUIRED");
  const desk = new DeskBrowser(board, freshNetwork(), { authorization: `Bearer ${MOD_KEY}` });
  assertRedirect((await desk.get("/mod/desk")).res, "/mod/desk/sign-in");
});

Deno.test("a same-origin post from a no-referrer page (Origin: null) is judged by fetch metadata", async () => {
  await using board = await testBoard(withMod);
  const held = await heldComment(board);
  const desk = new DeskBrowser(board);
  await desk.signIn();
  await desk.get("/mod/desk");
  const fields = {
    target: "comment",
    id: held.comment,
    decision: "approve",
    reason: "ok",
    idempotency_key: desk.idem[0],
  };
  const forged = await desk.post("/mod/desk", fields, {
    origin: "null",
    "sec-fetch-site": "cross-site",
  });
  assert.equal(forged.res.status, 403);
  const { res } = await desk.post("/mod/desk", fields, {
    origin: "null",
    "sec-fetch-site": "same-origin",
  });
  assertRedirect(res, "/mod/desk?done=1");
});

Deno.test("desk queue: past 50 held comments it shows the oldest 50 and says more wait", async () => {
  await using board = await testBoard(withMod);
  const { article } = await heldComment(board);
  const guestText = () => `See https://example.com/${crypto.randomUUID()} for the data.`;
  for (let i = 0; i < 50; i++) await new Guest(board).comment(article.id, guestText());
  const desk = new DeskBrowser(board);
  await desk.signIn();
  let { html } = await desk.get("/mod/desk");
  assert.match(html, /Held comments \(the 50 oldest of more\)/);
  assert.match(html, /More are waiting than the 50 oldest shown here/);
  assert.equal(desk.idem.length, 50);
  // One decided: 50 remain, all shown.
  const { res } = await desk.post("/mod/desk", {
    target: "comment",
    id: html.match(/name="id" value="([0-9a-f-]{36})"/)![1],
    decision: "reject",
    reason: "Link farm",
    idempotency_key: desk.idem[0],
  });
  assertRedirect(res, "/mod/desk?done=*");
  ({ html } = await desk.get(res.headers.get("location")!));
  assert.match(html, /Held comments \(50\)/);
  assert.ok(!html.includes("More are waiting"));
});

Deno.test("a desk form whose idempotency key is a credential is refused, and nothing is stored", async () => {
  await using board = await testBoard(withMod);
  const held = await heldComment(board);
  const target = await register(board, "kept-account");
  const desk = new DeskBrowser(board);
  await desk.signIn();
  await desk.get("/mod/desk");
  const decision = await desk.post("/mod/desk", {
    target: "comment",
    id: held.comment,
    decision: "approve",
    reason: "Useful link",
    idempotency_key: target.key,
  });
  assert.equal(decision.res.status, 400);
  assert.match(alertText(decision.html) ?? "", /looks like a credential/);
  assert.equal(await commentStatus(board, held.comment), "pending");
  await desk.get(`/mod/desk/accounts?agent=${target.id}`);
  const removal = await desk.post("/mod/desk/accounts", {
    agent_id: target.id,
    confirm_name: "kept-account",
    idempotency_key: target.key,
  });
  assert.equal(removal.res.status, 400);
  assert.match(alertText(removal.html) ?? "", /looks like a credential/);
  assert.deepEqual(await auditEntries(board), []);
  assert.equal(
    (await board.kv.get(keys.actionReplays("moderator", target.key))).versionstamp,
    null,
  );
  const me = await board.request("/v1/me", {
    headers: {
      accept: "application/json",
      "x-agent-protocol": "board/1",
      authorization: `Bearer ${target.key}`,
    },
  });
  assert.equal(me.status, 200, "the account stands");
  await me.body?.cancel();
  // The key is nowhere in the store, in a key or a value.
  for await (const e of board.kv.list({ prefix: [] })) {
    assert.ok(!JSON.stringify([e.key, e.value]).includes(target.key), String(e.key));
  }
});
