/**
 * Guest session hardening (docs/website.md "Guest sessions"): the CSRF token is never in
 * KV in any form, a cookie the server did not issue is never adopted, and a session's
 * cookie rotates when it posts a comment, so a cookie planted in a browser before the post
 * cannot read what the post made visible only to its session.
 */
import assert from "node:assert/strict";
import { sha256Hex } from "../domain/hashing.ts";
import { keys } from "../kv/keys.ts";
import { ManualClock } from "../domain/clock.ts";
import { boardOn, testBoard } from "./helpers.ts";
import { serve } from "./mcp_client.ts";
import { rawRequest } from "./reliability/raw_http.ts";
import { stringsIn } from "./reliability/harness.ts";
import { isTopLevelNavigation } from "../routes/web/guest_session.ts";
import {
  findGuestSession,
  GUEST_SESSION_SECONDS,
  UNUSED_GUEST_SESSION_SECONDS,
} from "../domain/articles/mod.ts";
import { commentTree, formMessage, Guest, keptText, publishedArticle } from "./website_helpers.ts";

const HELD = "Worth a look: https://example.com/article for context.";

function cookieValue(cookie: string | null): string {
  assert.ok(cookie);
  return cookie.slice(cookie.indexOf("=") + 1);
}

Deno.test("guest CSRF token: nothing in KV is the token or holds it", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  const token = guest.csrf!;
  assert.ok(token.length >= 32);
  // The derived token guards the form; once the session is stored, KV holds no form of it.
  await guest.comment(a.id, "A comment posted with the derived token.");
  const record = (await board.kv.get(
    keys.guestSessions(await sha256Hex(cookieValue(guest.cookie))),
  )).value!;
  assert.deepEqual(Object.keys(record).sort(), ["created_at", "expires_at", "owner"]);
  for await (const e of board.kv.list({ prefix: [] })) {
    for (const s of stringsIn([e.key, e.value])) {
      assert.ok(!s.includes(token), `the CSRF token is stored in ${JSON.stringify(e.key)}`);
    }
  }
  const forged = await new Guest(board).post(`/articles/${a.id}/comments`, {
    csrf: token,
    text: "forged",
  });
  assert.equal(forged.res.status, 403);
});

Deno.test("a well-formed board_guest cookie the server never issued is replaced, never adopted", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const planted = "A".repeat(43);
  const guest = new Guest(board);
  guest.cookie = `board_guest=${planted}`;
  await guest.get(`/articles/${a.id}`);
  assert.notEqual(cookieValue(guest.cookie), planted, "a freshly issued cookie replaces it");
  assert.equal((await board.kv.get(keys.guestSessions(await sha256Hex(planted)))).value, null);
  // A post carrying only the planted value is refused and stores nothing.
  const stranger = new Guest(board);
  stranger.cookie = `board_guest=${planted}`;
  stranger.csrf = guest.csrf;
  const r = await stranger.post(`/articles/${a.id}/comments`, { text: "adopt me" });
  assert.equal(r.res.status, 403);
  assert.notEqual(cookieValue(stranger.cookie), planted);
  assert.equal((await board.kv.get(keys.guestSessions(await sha256Hex(planted)))).value, null);
});

Deno.test("posting a comment rotates the session cookie: a planted cookie cannot see the comment", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  // The attacker starts a session of their own and plants its cookie in the victim's browser.
  const attacker = new Guest(board);
  await attacker.get(`/articles/${a.id}`);
  const victim = new Guest(board);
  victim.cookie = attacker.cookie;
  victim.csrf = attacker.csrf;
  const heldId = await victim.comment(a.id, HELD);

  await t.step("the victim got a new cookie for the same session", async () => {
    assert.notEqual(victim.cookie, attacker.cookie);
    const { html } = await victim.get(`/articles/${a.id}`);
    assert.ok(commentTree(html).has(heldId), "the session still sees its pending comment");
    assert.match(html, /only you can see this comment/i);
  });
  await t.step("the planted cookie no longer names the session", async () => {
    const { html } = await attacker.get(`/articles/${a.id}`);
    assert.ok(!commentTree(html).has(heldId), "the planted cookie must not see the comment");
    assert.doesNotMatch(html, /only you can see this comment/i);
  });
  await t.step(
    "an open form still posts after the rotation (the token is the session's)",
    async () => {
      const before = victim.csrf;
      await victim.comment(a.id, "A second comment from the same session.");
      assert.equal(victim.csrf, before);
    },
  );
});

/** The stored record of the session the guest's cookie names. */
async function sessionRecord(board: { kv: Deno.Kv }, guest: Guest) {
  return (await board.kv.get(keys.guestSessions(await sha256Hex(cookieValue(guest.cookie)))))
    .value as { created_at: number; expires_at: number } | null;
}

/** The `Max-Age` of the guest cookie a response sets. */
function cookieMaxAge(res: Response): number {
  return Number(res.headers.get("set-cookie")?.match(/Max-Age=(\d+)/i)?.[1]);
}

Deno.test("a guest session lasts a day until it posts a comment, then 30 days from its start", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const reader = new Guest(board);
  const writer = new Guest(board);
  const started = board.clock.now();
  await t.step("a new session lasts a day, and its cookie says so (nothing stored)", async () => {
    assert.equal(UNUSED_GUEST_SESSION_SECONDS, 86_400);
    for (const guest of [reader, writer]) {
      const { res } = await guest.get(`/articles/${a.id}`);
      assert.equal(cookieMaxAge(res), UNUSED_GUEST_SESSION_SECONDS);
      assert.equal(await sessionRecord(board, guest), null);
    }
  });
  let held = "";
  await t.step("the first comment stores it, for 30 days from its start", async () => {
    board.clock.advance(23 * 3600);
    held = await writer.comment(a.id, HELD);
    const rec = await sessionRecord(board, writer);
    assert.ok(rec);
    assert.deepEqual(
      [rec.created_at, rec.expires_at],
      [started, started + GUEST_SESSION_SECONDS],
    );
  });
  await t.step("a day after its start, a session that posted nothing has ended", async () => {
    board.clock.advance(3600);
    const text = "Read it all, and only now I comment.";
    const r = await reader.post(`/articles/${a.id}/comments`, { text });
    assert.equal(r.res.status, 403);
    assert.match(formMessage(r.html)!, /guest session had expired/);
    assert.equal(keptText(r.html), text, "the text is kept");
    // The refusal came with a new session (a day again): the kept form posts with it.
    assert.equal(cookieMaxAge(r.posted), UNUSED_GUEST_SESSION_SECONDS);
    await reader.comment(a.id, text);
  });
  await t.step("after 20 days the session that commented still sees its held comment", async () => {
    board.clock.advance(20 * 86_400);
    const { html } = await writer.get(`/articles/${a.id}`);
    assert.ok(commentTree(html).has(held));
    assert.match(html, /only you can see this comment/i);
    await writer.comment(a.id, "And another thought, twenty days later.");
    const rec = await sessionRecord(board, writer);
    assert.equal(rec?.expires_at, rec!.created_at + GUEST_SESSION_SECONDS, "not extended more");
  });
});

Deno.test("guest sessions start only on top-level navigations (or without fetch metadata)", () => {
  const nav = (h: Record<string, string>) => isTopLevelNavigation(new Headers(h));
  assert.equal(nav({ "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" }), true);
  assert.equal(nav({ "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image" }), false);
  assert.equal(nav({ "sec-fetch-mode": "navigate", "sec-fetch-dest": "iframe" }), false);
  assert.equal(nav({ "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" }), false);
  assert.equal(nav({ "sec-fetch-dest": "document" }), false);
  // No fetch metadata: a non-browser client, or a browser too old to send it.
  assert.equal(nav({}), true);
  assert.equal(nav({ accept: "*/*" }), true);
  assert.equal(nav({ accept: "text/html,application/xhtml+xml,image/webp,*/*;q=0.8" }), true);
  assert.equal(nav({ accept: "image/webp,image/apng,image/*,*/*;q=0.8" }), false);
});

Deno.test("a guest comment form whose body stops half-way is 400, not 500, and posts nothing", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  const full = new URLSearchParams({ csrf: guest.csrf!, text: "A comment cut short." }).toString();
  // What the server sees when the client closes the connection before its Content-Length.
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(full.slice(0, 40)));
      controller.error(new TypeError("connection closed before the message completed"));
    },
  });
  const res = await board.request(`/articles/${a.id}/comments`, {
    method: "POST",
    headers: {
      accept: "text/html",
      "content-type": "application/x-www-form-urlencoded",
      "content-length": String(full.length),
      cookie: guest.cookie!,
    },
    body,
  }, guest.network);
  const html = await res.text();
  assert.equal(res.status, 400, html.slice(0, 300));
  assert.match(html, /arrived incomplete/);
  const stored = await Array.fromAsync(board.kv.list({ prefix: keys.guestCommentPrints.range() }));
  assert.equal(stored.length, 0, "nothing was posted");
});

/** Records the keys each successful atomic commit wrote or deleted (a `wrapKv` option). */
/**
 * A `wrapKv` noting, for each committed atomic, the keys it wrote (`commits`) and, when given
 * `checks`, the keys it checked as absent (versionstamp null), in the same order.
 */
function recordCommits(commits: string[][], checks?: string[][]) {
  return (raw: Deno.Kv): Deno.Kv =>
    new Proxy(raw, {
      get(target, prop) {
        if (prop === "atomic") {
          return () => {
            const op = target.atomic();
            const touched: string[] = [];
            const absent: string[] = [];
            const mutate = op.mutate.bind(op);
            const check = op.check.bind(op);
            const commit = op.commit.bind(op);
            op.check = (...cs: Deno.AtomicCheck[]) => {
              for (const c of cs) if (c.versionstamp === null) absent.push(JSON.stringify(c.key));
              return check(...cs);
            };
            op.mutate = (...ms: Deno.KvMutation[]) => {
              for (const m of ms) touched.push(JSON.stringify(m.key));
              return mutate(...ms);
            };
            op.commit = async () => {
              const r = await commit();
              if (r.ok) {
                commits.push(touched);
                checks?.push(absent);
              }
              return r;
            };
            return op;
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
}

Deno.test("the guest cookie rotates in the very commit that stores the comment", async () => {
  const commits: string[][] = [];
  await using board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: recordCommits(commits),
  });
  const a = await publishedArticle(board);
  const attacker = new Guest(board);
  await attacker.get(`/articles/${a.id}`);
  const victim = new Guest(board);
  victim.cookie = attacker.cookie;
  victim.csrf = attacker.csrf;
  const planted = JSON.stringify(keys.guestSessions(await sha256Hex(cookieValue(attacker.cookie))));
  commits.length = 0;
  const id = await victim.comment(a.id, HELD);
  const fresh = JSON.stringify(keys.guestSessions(await sha256Hex(cookieValue(victim.cookie))));
  const locator = JSON.stringify(keys.articleCommentLocators(id));
  const storing = commits.filter((c) => c.includes(locator));
  assert.equal(storing.length, 1, "one commit stores the comment");
  assert.ok(storing[0].includes(planted), "the planted cookie is marked spent in that commit");
  assert.ok(storing[0].includes(fresh), "the new cookie's session key comes in that commit");
  const left = (await board.kv.get(JSON.parse(planted))).value as { spent?: true } | null;
  assert.equal(left?.spent, true);
  assert.equal(await findGuestSession(board.deps, cookieValue(attacker.cookie)), null);
});

Deno.test("the first comment's commit checks that the signed cookie's session is still unrecorded", async () => {
  // Two first comments of one unused session must not both land: each commit moves the
  // signed cookie to a stored session, so each checks that no other commit did so first.
  const commits: string[][] = [];
  const checks: string[][] = [];
  await using board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: recordCommits(commits, checks),
  });
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  const signed = JSON.stringify(keys.guestSessions(await sha256Hex(cookieValue(guest.cookie))));
  commits.length = 0;
  checks.length = 0;
  const id = await guest.comment(a.id, HELD);
  const locator = JSON.stringify(keys.articleCommentLocators(id));
  const storing = commits.findIndex((c) => c.includes(locator));
  assert.ok(storing >= 0, "a commit stores the comment");
  assert.ok(commits[storing].includes(signed), "it marks the signed cookie spent");
  assert.ok(checks[storing].includes(signed), "and checks that it had no record until then");
});

Deno.test("over https only a __Host- guest cookie names a session", async () => {
  await using board = await testBoard({ baseUrl: "https://board.test" });
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  assert.ok(guest.cookie!.startsWith("__Host-board_guest="), guest.cookie!);
  const id = await guest.comment(a.id, HELD);
  assert.ok(guest.cookie!.startsWith("__Host-board_guest="), "the rotated cookie too");
  // The same value under the plain name (as a sibling host or an http page could set it).
  const plain = new Guest(board);
  plain.cookie = `board_guest=${cookieValue(guest.cookie)}`;
  const { res, html } = await plain.get(`/articles/${a.id}`);
  assert.ok(!commentTree(html).has(id), "a plain-named cookie never names the session");
  assert.match(res.headers.get("set-cookie") ?? "", /^__Host-board_guest=/);
});

Deno.test("over a real connection, a guest comment form cut short by the client is 400", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  await using server = serve(board);
  const body = new URLSearchParams({ csrf: guest.csrf!, text: "A comment cut short." }).toString();
  const head = `POST /articles/${a.id}/comments HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
    `Accept: text/html\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
    `Cookie: ${guest.cookie}\r\nContent-Length: ${body.length + 100}\r\nConnection: close\r\n\r\n`;
  const answer = await rawRequest(server.addr.port, head + body, { halfClose: true });
  assert.equal(answer.status, 400, answer.head);
  const stored = await Array.fromAsync(board.kv.list({ prefix: keys.guestCommentPrints.range() }));
  assert.equal(stored.length, 0, "nothing was posted");
});
