/**
 * A refused guest comment leaves an address that answers GET (docs/website.md "Refusals"):
 * the form post answers 303 to the article page with `?refusal=<id>`, which shows the
 * message, the kept text and name to the session that posted (reloading it shows the same,
 * posting nothing); another browser, a later refusal or an hour later show the article
 * without it, as does a comment posted since; the form's own address (`/articles/{id}/comments`) opened as a page goes to the
 * form; a text larger than one KV value is kept whole.
 */
import assert from "node:assert/strict";
import { KEPT_TEXT_CODE_POINTS } from "../domain/articles/mod.ts";
import { assertStatus, testBoard } from "./helpers.ts";
import { formMessage, Guest, keptText, publishedArticle } from "./website_helpers.ts";

/** The page `<title>`. */
function titleOf(html: string): string {
  return html.match(/<title>([^<]*)<\/title>/)![1];
}

/** Comments on the page. */
function commentCount(html: string): number {
  return [...html.matchAll(/<li class="comment[^"]*" id="c-/g)].length;
}

Deno.test("a refused comment answers 303 to an address that shows it on GET", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board, { title: "Polling politely" });
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  const text = "Kept across the redirect.";
  const r = await guest.post(`/articles/${a.id}/comments`, { text, name: "Moderator" });

  await t.step("the post answers 303 to the article with ?refusal=", () => {
    assert.equal(r.posted.status, 303);
    assert.match(r.refusal!, new RegExp(`^/articles/${a.id}\\?refusal=[0-9a-f-]{36}$`));
  });
  await t.step("the address shows the refusal, the kept text and name, a new title", () => {
    assert.equal(r.res.status, 400);
    assert.match(formMessage(r.html)!, /reads as/);
    assert.equal(keptText(r.html), text);
    assert.match(r.html, /id="guest-name"[^>]*value="Moderator"/);
    assert.equal(titleOf(r.html), "Comment not posted: Polling politely · Posting Board");
  });
  await t.step("opening it again (a reload) shows the same and posts nothing", async () => {
    const again = await guest.get(r.refusal!);
    assert.equal(again.res.status, 400);
    assert.equal(keptText(again.html), text);
    assert.equal(commentCount(again.html), 0);
  });
  await t.step("another browser at the same address sees the article, no refusal", async () => {
    const other = await new Guest(board).get(r.refusal!);
    assert.equal(other.res.status, 200);
    assert.equal(formMessage(other.html), null);
    assert.equal(keptText(other.html), "");
    assert.ok(!other.html.includes(text));
    assert.equal(titleOf(other.html), "Polling politely · Posting Board");
  });
  await t.step("a later refusal replaces it; the older address shows no refusal", async () => {
    const later = await guest.post(`/articles/${a.id}/comments`, { text: "   " });
    assert.notEqual(later.refusal, r.refusal);
    const old = await guest.get(r.refusal!);
    assert.equal(old.res.status, 200);
    assert.equal(formMessage(old.html), null);
  });
  await t.step("an hour later the address shows the article without it", async () => {
    const fresh = await guest.post(`/articles/${a.id}/comments`, { text: "x".repeat(8001) });
    assert.equal(fresh.res.status, 400);
    board.clock.advance(3600);
    const gone = await guest.get(fresh.refusal!);
    assert.equal(gone.res.status, 200);
    assert.equal(formMessage(gone.html), null);
  });
  await t.step("a refusal for another article's address is not shown there", async () => {
    const b = await publishedArticle(board);
    const here = await guest.post(`/articles/${a.id}/comments`, { text: "   " });
    const id = new URL(here.refusal!, "http://x").searchParams.get("refusal");
    const there = await guest.get(`/articles/${b.id}?refusal=${id}`);
    assert.equal(there.res.status, 200);
    assert.equal(formMessage(there.html), null);
  });
  await t.step("once a comment is posted, the refusal's address shows the article", async () => {
    const refused = await guest.post(`/articles/${a.id}/comments`, {
      text: "Sent as Moderator.",
      name: "Moderator",
    });
    assert.equal(refused.res.status, 400);
    await guest.comment(a.id, "Sent as Moderator.");
    const back = await guest.get(refused.refusal!);
    assert.equal(back.res.status, 200);
    assert.equal(formMessage(back.html), null);
    assert.equal(keptText(back.html), "");
    assert.equal(titleOf(back.html), "Polling politely · Posting Board");
  });
});

Deno.test("a refused reply keeps its target; a rate refusal keeps Retry-After", async () => {
  await using board = await testBoard({ limitScale: 0.2 });
  const a = await publishedArticle(board);
  const first = await new Guest(board).comment(a.id, "The first comment, to reply to.");
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}?reply_to=${first}`);
  const r = await guest.post(`/articles/${a.id}/comments`, { text: "", parent_id: first });
  assert.equal(r.res.status, 400);
  assert.match(r.html, new RegExp(`name="parent_id" value="${first}"`));
  assert.match(r.html, /Post reply/);
  await guest.comment(a.id, "One this hour.");
  const rate = await guest.post(`/articles/${a.id}/comments`, { text: "Two this hour." });
  assert.equal(rate.posted.status, 303);
  assert.equal(rate.res.status, 429);
  assert.equal(keptText(rate.html), "Two this hour.");
  const wait = Number(rate.res.headers.get("retry-after"));
  assert.ok(wait > 0 && wait <= 3600, `Retry-After ${wait}`);
  board.clock.advance(60);
  const later = await guest.get(rate.refusal!);
  assert.equal(Number(later.res.headers.get("retry-after")), wait - 60);
});

Deno.test("a rate refusal's page, reloaded later, says the wait that is left, as Retry-After does", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  // Ten minutes into a clock hour: the session's hourly window ends in 50 minutes.
  board.clock.set(Math.floor(board.clock.now() / 3600) * 3600 + 600);
  const guest = new Guest(board);
  for (let i = 0; i < 5; i++) await guest.comment(a.id, `Comment number ${i + 1} of the hour.`);
  const rate = await guest.post(`/articles/${a.id}/comments`, { text: "A sixth this hour." });
  assert.equal(rate.res.status, 429);
  assert.equal(rate.res.headers.get("retry-after"), "3000");
  assert.match(formMessage(rate.html) ?? "", /you can post again in 50 minutes\.$/);
  board.clock.advance(40 * 60);
  const later = await guest.get(rate.refusal!);
  assert.equal(later.res.headers.get("retry-after"), "600");
  assert.match(formMessage(later.html) ?? "", /you can post again in 10 minutes\.$/);
  board.clock.advance(15 * 60);
  const over = await guest.get(rate.refusal!);
  assert.equal(over.res.status, 429, "the page still tells what happened to that form");
  assert.equal(over.res.headers.get("retry-after"), null);
  assert.match(formMessage(over.html) ?? "", /you can post again now\.$/);
  assert.equal(keptText(over.html), "A sixth this hour.");
});

Deno.test("a refusal without a session keeps nothing; the form's address goes to the form", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const form = await board.request(`/articles/${a.id}/comments`, {
    headers: { accept: "text/html" },
    redirect: "manual",
  });
  assert.equal(form.status, 303);
  assert.equal(form.headers.get("location"), `/articles/${a.id}#form`);
  await form.body?.cancel();
  const missing = await board.request(`/articles/${crypto.randomUUID()}/comments`, {
    headers: { accept: "text/html" },
  });
  await assertStatus(missing, 404);
  // A browser without the cookie is answered at once (403), text kept, with a session.
  const stranger = new Guest(board);
  const r = await stranger.post(`/articles/${a.id}/comments`, { text: "No cookie yet." });
  assert.equal(r.posted.status, 403);
  assert.ok(stranger.cookie);
  assert.equal(keptText(r.html), "No cookie yet.");
});

Deno.test("a refused text is kept up to 9,000 characters, in one value, and the message says so", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  // 90,000 bytes (within the form's 100,000): only the first 9,000 characters are kept.
  const text = "word ".repeat(18_000).trim();
  const r = await guest.post(`/articles/${a.id}/comments`, { text });
  assert.equal(r.res.status, 400);
  assert.match(
    formMessage(r.html)!,
    /89,999 characters long; the limit is 8,000\. Shorten it and post it again\. The form below keeps its first 9,000 characters\.$/,
  );
  assert.equal(keptText(r.html), text.slice(0, KEPT_TEXT_CODE_POINTS));
  // What the session made the server keep: one value of about 9 KB, not 90 KB.
  let bytes = 0;
  for await (const e of board.kv.list({ prefix: ["guest_refusals"] })) {
    bytes += JSON.stringify(e.value).length;
  }
  assert.ok(bytes > 9_000 && bytes < 10_000, `${bytes} bytes kept`);
  // A text within what is kept comes back whole, with no note.
  const shorter = "x".repeat(8_500);
  const again = await guest.post(`/articles/${a.id}/comments`, { text: shorter });
  assert.equal(keptText(again.html), shorter);
  assert.doesNotMatch(formMessage(again.html)!, /keeps its first/);
  // A name refused for its length is kept cut too (astral characters counted whole).
  const name = "\u{1F600}".repeat(7_000);
  const named = await guest.post(`/articles/${a.id}/comments`, { text: "Hello.", name });
  assert.equal(named.res.status, 400);
  assert.match(named.html, /value="(\u{1F600}){80}"/u);
});

Deno.test("a browser that keeps no cookie is answered at once: 403, its text, the cookie message", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`); // the page issued a session the browser did not keep
  guest.cookie = null;
  const text = "Written in a browser that refuses cookies.";
  const r = await guest.post(`/articles/${a.id}/comments`, { text, name: "Cookieless" });
  // Nothing kept for a session this browser cannot show: the answer itself is the page.
  assert.equal(r.refusal, null);
  assert.equal(r.res.status, 403);
  assert.match(formMessage(r.html)!, /cookies are needed to comment/);
  assert.equal(keptText(r.html), text);
  assert.match(r.html, /id="guest-name"[^>]*value="Cookieless"/);
  assert.ok(
    r.res.headers.get("set-cookie"),
    "a session to try again with, once cookies are allowed",
  );
  // Allowed now: the next post from that page is taken.
  await guest.comment(a.id, text);
  // An article that is not there is the 404 page, with or without the cookie.
  const gone = await new Guest(board).post(`/articles/${crypto.randomUUID()}/comments`, { text });
  assert.equal(gone.res.status, 404);
  guest.cookie = `${guest.cookie!.split("=")[0]}=${"x".repeat(43)}`; // a session no longer live
  const stale = await guest.post(`/articles/${crypto.randomUUID()}/comments`, { text });
  assert.equal(stale.res.status, 404);
});

Deno.test("a comment form sent from another site, or without the browser saying whose it is, keeps and starts nothing", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const visitor = new Guest(board);
  const held = await visitor.comment(a.id, "Held for a look: https://example.org/notes");
  const sessions = async () =>
    (await Array.fromAsync(board.kv.list({ prefix: ["guest_sessions"] }))).length;
  const before = await sessions();
  const planted = "Planted by another site's page";
  const send = (headers: Record<string, string>) =>
    board.request(`/articles/${a.id}/comments`, {
      method: "POST",
      headers: {
        accept: "text/html",
        "content-type": "application/x-www-form-urlencoded",
        ...headers,
      },
      body: new URLSearchParams({ text: planted, name: "Visitor" }).toString(),
      redirect: "manual",
    }, visitor.network);

  const refusedPlainly = async (res: Response, message: RegExp) => {
    const html = await res.text();
    assert.equal(res.status, 403);
    assert.match(html, message);
    assert.ok(!html.includes(planted), "the text is not offered back");
    assert.ok(!html.includes('name="csrf"'), "no form to send");
    assert.equal(res.headers.get("set-cookie"), null, "no session started");
    assert.equal(await sessions(), before);
  };
  await t.step("another site's page (its SameSite cookie left off): refused", async () => {
    const res = await send({ "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" });
    await refusedPlainly(res, /sent from another site/);
    // Without Sec-Fetch-Site, a foreign Origin says the same.
    await refusedPlainly(await send({ origin: "http://elsewhere.example" }), /another site/);
  });
  await t.step("no cookie and nothing said of the form's site: refused alone", async () => {
    await refusedPlainly(await send({ origin: "null" }), /cookies are needed to comment/);
  });
  await t.step("the visitor's session is untouched: its held comment still shows", async () => {
    const { html } = await visitor.get(`/articles/${a.id}`);
    assert.ok(html.includes(`id="c-${held}"`));
  });
});
