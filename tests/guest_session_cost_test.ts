/**
 * What a guest session costs in KV (docs/website.md "Guest sessions"): nothing until it posts.
 * Reading an article without a cookie writes nothing and issues a signed cookie; the comment
 * that first posts with it stores the session; a forged, tampered or expired signed cookie is
 * never accepted; a stored session's cookie (as earlier releases issued) keeps working; and
 * what an unused session can make the server keep (a refused form) is limited per network.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { sha256Hex } from "../domain/hashing.ts";
import { findGuestSession, UNUSED_GUEST_SESSION_SECONDS } from "../domain/articles/mod.ts";
import { keys } from "../kv/keys.ts";
import { boardOn, freshNetwork, testBoard } from "./helpers.ts";
import { recordingKv } from "./kv_write_recorder.ts";
import { commentTree, formMessage, Guest, keptText, publishedArticle } from "./website_helpers.ts";

function cookieValue(cookie: string | null): string {
  assert.ok(cookie);
  return cookie.slice(cookie.indexOf("=") + 1);
}

/** Every guest session record in KV. */
async function sessionRecords(kv: Deno.Kv) {
  return await Array.fromAsync(kv.list({ prefix: keys.guestSessions.range() }));
}

Deno.test("reading an article without a cookie writes nothing; the first comment stores the session", async (t) => {
  let rec: ReturnType<typeof recordingKv> | undefined;
  await using board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: (raw) => (rec = recordingKv(raw)).kv,
  });
  const a = await publishedArticle(board);
  const guest = new Guest(board);

  await t.step("a browser's first visit: the form and a cookie, no KV write", async () => {
    rec!.writes();
    const { res, html } = await guest.get(`/articles/${a.id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(rec!.writes(), [], "the page view wrote nothing");
    assert.ok(guest.cookie, "a cookie was set");
    assert.ok(html.includes('name="csrf"'), "the comment form is shown");
    assert.equal((await sessionRecords(board.kv)).length, 0);
  });

  await t.step(
    "a client without cookies or fetch metadata (a crawler): no write, each time",
    async () => {
      rec!.writes();
      for (let i = 0; i < 3; i++) {
        const res = await board.request(`/articles/${a.id}`, { headers: { accept: "*/*" } });
        assert.equal(res.status, 200);
        assert.ok(res.headers.get("set-cookie"));
        await res.body?.cancel();
      }
      assert.deepEqual(rec!.writes(), []);
    },
  );

  await t.step("reading again with the cookie writes nothing either", async () => {
    rec!.writes();
    const { res } = await guest.get(`/articles/${a.id}`);
    assert.equal(res.headers.get("set-cookie"), null, "the same session, no new cookie");
    assert.deepEqual(rec!.writes(), []);
  });

  await t.step(
    "the guest posts through the form: the session is stored in that commit",
    async () => {
      const first = guest.cookie;
      // Held for a moderator (a link): only its session sees it.
      const id = await guest.comment(
        a.id,
        "A first comment, see https://example.com/more for context.",
      );
      assert.notEqual(guest.cookie, first, "the cookie rotated");
      const stored = (await board.kv.get(
        keys.guestSessions(await sha256Hex(cookieValue(guest.cookie))),
      )).value as { created_at: number; expires_at: number; owner: string } | null;
      assert.ok(stored, "the session is a KV record now");
      assert.equal(stored.owner, await sha256Hex(cookieValue(first)), "its identity is kept");
      const { html } = await guest.get(`/articles/${a.id}`);
      assert.ok(commentTree(html).has(id));
      // The signed cookie it posted with names no session any more.
      assert.equal(await findGuestSession(board.deps, cookieValue(first)), null);
      const replay = new Guest(board, guest.network);
      replay.cookie = first;
      const again = await replay.get(`/articles/${a.id}`);
      assert.notEqual(replay.cookie, first, "a new session is issued");
      assert.ok(!commentTree(again.html).has(id), "the spent cookie does not see the comment");
    },
  );
});

Deno.test("a forged or tampered signed guest cookie is never accepted", async (t) => {
  await using board = await testBoard();
  await using other = await testBoard({ secret: "another-secret-another-secret-another" });
  const a = await publishedArticle(board);
  const b = await publishedArticle(other);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  const genuine = cookieValue(guest.cookie);
  const [id, start, mac] = genuine.split(".");
  assert.ok(id && start && mac, `a signed cookie: ${genuine}`);
  const stranger = new Guest(other);
  await stranger.get(`/articles/${b.id}`);
  const flip = (s: string) => (s[0] === "A" ? "B" : "A") + s.slice(1);
  const forged: Record<string, string> = {
    "another id": `${flip(id)}.${start}.${mac}`,
    "a later start": `${id}.${Number(start) + 86_400}.${mac}`,
    "another signature": `${id}.${start}.${flip(mac)}`,
    "its start spelt with a leading zero": `${id}.0${start}.${mac}`,
    "signed under another secret": cookieValue(stranger.cookie),
  };
  for (const [what, value] of Object.entries(forged)) {
    await t.step(what, async () => {
      assert.equal(await findGuestSession(board.deps, value), null);
      const g = new Guest(board);
      g.cookie = `board_guest=${value}`;
      g.csrf = guest.csrf;
      const r = await g.post(`/articles/${a.id}/comments`, { text: "Adopt this session." });
      assert.equal(r.res.status, 403);
      assert.match(formMessage(r.html)!, /guest session had expired/);
      assert.notEqual(cookieValue(g.cookie), value, "a new session is issued");
      const page = new Guest(board);
      page.cookie = `board_guest=${value}`;
      await page.get(`/articles/${a.id}`);
      assert.notEqual(cookieValue(page.cookie), value, "a new session is issued");
    });
  }
  await t.step("the genuine cookie still posts", async () => {
    await guest.comment(a.id, "Posted with the cookie the server issued.");
  });
  assert.equal(
    (await sessionRecords(board.kv)).length,
    2,
    "the posting session and its spent mark",
  );
});

Deno.test("an unused signed cookie ends a day after its start", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  const issued = guest.cookie;
  board.clock.advance(UNUSED_GUEST_SESSION_SECONDS - 1);
  const still = await guest.get(`/articles/${a.id}`);
  assert.equal(still.res.headers.get("set-cookie"), null, "live for the whole day");
  assert.equal((await sessionRecords(board.kv)).length, 0, "with nothing stored");
  board.clock.advance(1);
  assert.equal(await findGuestSession(board.deps, cookieValue(issued)), null);
  const late = new Guest(board, guest.network);
  late.cookie = issued;
  late.csrf = guest.csrf;
  const text = "Posted a day after the page was opened.";
  const r = await late.post(`/articles/${a.id}/comments`, { text });
  assert.equal(r.res.status, 403);
  assert.match(formMessage(r.html)!, /guest session had expired/);
  assert.equal(keptText(r.html), text);
  assert.notEqual(late.cookie, issued, "a new session is issued with the refusal");
  await late.comment(a.id, text);
});

Deno.test("a stored guest session's cookie (as earlier releases issued) keeps working", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const now = board.clock.now();
  const value = "k".repeat(20) + "Q".repeat(23);
  await board.kv.set(keys.guestSessions(await sha256Hex(value)), {
    created_at: now,
    expires_at: now + UNUSED_GUEST_SESSION_SECONDS,
  });
  const guest = new Guest(board);
  guest.cookie = `board_guest=${value}`;
  const { res, html } = await guest.get(`/articles/${a.id}`);
  assert.equal(res.headers.get("set-cookie"), null, "the stored session is kept");
  assert.ok(html.includes('name="csrf"'));
  const id = await guest.comment(a.id, "Posted with a cookie from before the change.");
  assert.notEqual(cookieValue(guest.cookie), value, "the cookie rotated");
  assert.equal(
    (await board.kv.get(keys.guestSessions(await sha256Hex(value)))).value,
    null,
    "the old value names nothing",
  );
  const after = await guest.get(`/articles/${a.id}`);
  assert.ok(commentTree(after.html).has(id));
});

Deno.test("sessions are issued without limit; refusals kept for unused sessions are limited per network", async (t) => {
  await using board = await testBoard({ limitScale: 0.1 });
  const a = await publishedArticle(board);
  const network = freshNetwork();
  const guests: Guest[] = [];
  let kept = "";
  await t.step("every visitor of one network gets the form", async () => {
    for (let i = 0; i < 30; i++) {
      const g = new Guest(board, network);
      const { html } = await g.get(`/articles/${a.id}`);
      assert.ok(g.cookie && html.includes('name="csrf"'), `visitor ${i + 1}`);
      guests.push(g);
    }
  });
  await t.step("the network's first 10 unused sessions keep their refused forms", async () => {
    for (const g of guests.slice(0, 10)) {
      const r = await g.post(`/articles/${a.id}/comments`, { text: "  " });
      assert.equal(r.res.status, 400);
      assert.ok(r.refusal, "kept, shown at its own address");
      kept = r.html;
    }
    // A session that already holds a kept refusal replaces it without spending more.
    const r = await guests[0].post(`/articles/${a.id}/comments`, { text: "\u200b" });
    assert.ok(r.refusal);
  });
  await t.step("the 11th is answered with the page itself, keeping nothing", async () => {
    const g = guests[10];
    const before = (await Array.fromAsync(board.kv.list({ prefix: keys.guestRefusals.range() })))
      .length;
    const r = await g.post(`/articles/${a.id}/comments`, { text: "  ", name: "Eleventh" });
    assert.equal(r.res.status, 400);
    assert.equal(r.refusal, null);
    assert.equal(formMessage(r.html), formMessage(kept));
    assert.ok(r.html.includes('value="Eleventh"'), "the form is kept in the answer");
    const after = (await Array.fromAsync(board.kv.list({ prefix: keys.guestRefusals.range() })))
      .length;
    assert.equal(after, before);
  });
  await t.step("another network's unused sessions still keep their refused forms", async () => {
    const g = new Guest(board);
    await g.get(`/articles/${a.id}`);
    const r = await g.post(`/articles/${a.id}/comments`, { text: "  " });
    assert.equal(r.res.status, 400);
    assert.ok(r.refusal, "the allowance spent is the other network's, not this one's");
  });
  await t.step("posting is limited by the comment rates, not by sessions", async () => {
    await guests[11].comment(a.id, "A comment from the twelfth visitor.");
    board.clock.advance(3600);
    const r = await guests[12].post(`/articles/${a.id}/comments`, { text: "  " });
    assert.ok(r.refusal, "a new hour keeps refusals again");
  });
});
