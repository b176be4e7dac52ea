/**
 * What a guest is told after posting (docs/website.md "After posting"): a refusal sits
 * right before the field it is about, which is marked invalid, described by it and
 * focused on load; a stored comment is landed on with a notice of what became of it; a
 * repeat is a 409 linking to the earlier comment, even after a duplicate rejection; names
 * that pose as the author, an agent or the staff are refused with the text kept.
 */
import assert from "node:assert/strict";
import { postGuestComment, readGuestCookie } from "../domain/articles/mod.ts";
import { register, testBoard } from "./helpers.ts";
import { commentTree, formMessage, Guest, keptText, publishedArticle } from "./website_helpers.ts";

/** The opening tag of the element with this id. */
function tagOf(html: string, id: string): string {
  const m = html.match(new RegExp(`<[a-z]+\\b[^>]*\\bid="${id}"[^>]*>`));
  assert.ok(m, `no element #${id}`);
  return m[0];
}

/** Whether the refusal message ends right where the element with this id begins. */
function errorJustBefore(html: string, id: string): boolean {
  const start = html.indexOf('id="form-error"');
  if (start < 0) return false;
  const end = html.indexOf("</p>", start) + "</p>".length;
  return html.indexOf(tagOf(html, id)) === end;
}

/** The ids of the elements with `autofocus`. */
function autofocused(html: string): string[] {
  return [...html.matchAll(/<[a-z]+\b[^>]*\bautofocus\b[^>]*>/g)]
    .map((m) => m[0].match(/\bid="([^"]+)"/)?.[1] ?? "?");
}

/** The markup of one comment's `<article>` (its meta line, notes and body). */
function commentArticle(html: string, id: string): string {
  const start = html.indexOf(`id="c-${id}"`);
  assert.ok(start >= 0, `comment ${id} on the page`);
  return html.slice(start, html.indexOf("</article>", start));
}

Deno.test("a refusal sits before the field it is about, which takes the focus", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);

  await t.step("a page without a refusal focuses nothing", async () => {
    const { html } = await guest.get(`/articles/${a.id}`);
    assert.deepEqual(autofocused(html), []);
    assert.ok(!html.includes('aria-invalid="true"'));
    assert.ok(!html.includes('id="form-error"'));
  });
  await t.step("about the text: before the textarea, which is invalid and focused", async () => {
    const text = "bell \u0007 here";
    const r = await guest.post(`/articles/${a.id}/comments`, { text, name: "Anna" });
    assert.equal(r.res.status, 400);
    assert.ok(errorJustBefore(r.html, "guest-text"));
    assert.deepEqual(autofocused(r.html), ["guest-text"]);
    const area = tagOf(r.html, "guest-text");
    assert.match(area, /aria-invalid="true"/);
    assert.match(area, /aria-describedby="form-error guest-text-help"/);
    assert.ok(!/aria-invalid/.test(tagOf(r.html, "guest-name")));
    assert.equal(keptText(r.html), text);
    assert.match(tagOf(r.html, "guest-name"), /value="Anna"/);
  });
  await t.step("about the name: before the name field, which is invalid and focused", async () => {
    const text = "A comment whose name is too long.";
    const r = await guest.post(`/articles/${a.id}/comments`, { text, name: "n".repeat(41) });
    assert.equal(r.res.status, 400);
    assert.ok(errorJustBefore(r.html, "guest-name"));
    assert.deepEqual(autofocused(r.html), ["guest-name"]);
    const input = tagOf(r.html, "guest-name");
    assert.match(input, /aria-invalid="true"/);
    assert.match(input, /aria-describedby="form-error"/);
    assert.match(tagOf(r.html, "guest-text"), /aria-describedby="guest-text-help"/);
    assert.equal(keptText(r.html), text);
  });
  await t.step("a stale form (403): at the kept text, which is focused", async () => {
    const text = "Written before the form went stale.";
    const r = await guest.post(`/articles/${a.id}/comments`, { text, csrf: "x".repeat(43) });
    assert.equal(r.res.status, 403);
    assert.ok(errorJustBefore(r.html, "guest-text"));
    assert.ok(!r.html.includes('aria-invalid="true"'), "the text itself is not at fault");
    assert.deepEqual(autofocused(r.html), ["guest-text"]);
    assert.equal(keptText(r.html), text);
  });
  await t.step("a reply form focuses its text field (the link has no fragment)", async () => {
    const id = await guest.comment(a.id, "A comment to reply to.");
    const page = await guest.get(`/articles/${a.id}`);
    // Named after whom it answers; a view with the form open, which crawlers do not follow.
    const link = new RegExp(
      `<a href="/articles/${a.id}\\?reply_to=${id}" rel="nofollow" aria-label="Reply to [^"]+">Reply</a>`,
    );
    assert.match(page.html, link);
    const { html } = await guest.get(`/articles/${a.id}?reply_to=${id}`);
    assert.deepEqual(autofocused(html), ["guest-text"]);
    assert.ok(!html.includes('id="form-error"'));
    // The focused field is described by the heading that says whom the reply answers.
    const field = html.match(/<textarea[^>]*id="guest-text"[^>]*>/)![0];
    assert.match(field, /aria-describedby="form-title guest-text-help"/);
  });
  await t.step("a rate (429): at the kept text, which is focused", async () => {
    await using limited = await testBoard({ limitScale: 0.1 });
    const b = await publishedArticle(limited);
    const g = new Guest(limited);
    await g.comment(b.id, "The only comment this hour.");
    const r = await g.post(`/articles/${b.id}/comments`, { text: "One more" });
    assert.equal(r.res.status, 429);
    assert.ok(errorJustBefore(r.html, "guest-text"));
    assert.deepEqual(autofocused(r.html), ["guest-text"]);
    assert.ok(!r.html.includes('aria-invalid="true"'), "the text itself is not at fault");
  });
});

Deno.test("after posting, the guest lands on the comment with a notice", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);

  const land = async (text: string) => {
    const r = await guest.post(`/articles/${a.id}/comments`, { text });
    assert.equal(r.res.status, 303);
    const location = r.res.headers.get("location") ?? "";
    const id = location.match(/^\/articles\/[0-9a-f-]{36}\?posted=([0-9a-f-]{36})#c-\1$/)?.[1];
    assert.ok(id, location);
    const page = await guest.get(location.replace(/#.*/, ""));
    assert.equal(page.res.status, 200);
    return { id, location, html: page.html };
  };
  await t.step("published at once", async () => {
    const { id, html } = await land("A clear article, thank you.");
    const own = commentArticle(html, id);
    assert.match(
      own,
      /<p class="notice posted" role="status">Thank you: your comment is published\./,
    );
    assert.equal((html.match(/class="notice posted"/g) ?? []).length, 1, "only at that comment");
  });
  await t.step("held for a moderator", async () => {
    const { id, html } = await land("Worth a look: https://example.com/more for context.");
    const own = commentArticle(html, id);
    assert.match(own, /your comment was received\. It appears to others once a moderator/);
    assert.match(own, /Awaiting moderation/);
  });
  await t.step("rejected by the automatic moderation", async () => {
    const { id, html } = await land("Nooooooooooooooooooooooooooooooooooooooooooooooooo");
    assert.match(commentArticle(html, id), /received but not published; the reason is below/);
  });
  await t.step("nobody else is told, nor the guest on a plain visit", async () => {
    const { id, location } = await land("Another thought on the same subject.");
    const stranger = await new Guest(board).get(location.replace(/#.*/, ""));
    assert.ok(!stranger.html.includes("notice posted"));
    const plain = await guest.get(`/articles/${a.id}`);
    assert.ok(commentTree(plain.html).has(id));
    assert.ok(!plain.html.includes("notice posted"));
    const junk = await guest.get(`/articles/${a.id}?posted=not-a-uuid`);
    assert.equal(junk.res.status, 200);
    assert.ok(!junk.html.includes("notice posted"));
  });
});

Deno.test("a session's repeated text is a 409 linking to its earlier comment", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const first = new Guest(board);
  const second = new Guest(board);
  const text = "Exactly the same words from two browsers.";
  const original = await first.comment(a.id, text);
  const copy = await second.comment(a.id, text);

  await t.step("the copy from another session was stored rejected", async () => {
    const { html } = await second.get(`/articles/${a.id}`);
    assert.match(commentArticle(html, copy), /already posted on this article in the last 24 hours/);
  });
  for (
    const [who, guest, earlier] of [["copier", second, copy], ["first", first, original]] as const
  ) {
    await t.step(`the ${who} session posting it again: 409, nothing stored`, async () => {
      const r = await guest.post(`/articles/${a.id}/comments`, { text: ` ${text.toUpperCase()} ` });
      assert.equal(r.res.status, 409);
      assert.equal(
        formMessage(r.html),
        "You already posted this text on this article within the last 24 hours, so it was not posted again. See your earlier comment.",
      );
      assert.ok(r.html.includes(`href="/articles/${a.id}/comments/${earlier}">See your earlier`));
      assert.ok(!/shown below/.test(r.html));
      assert.equal(keptText(r.html), ` ${text.toUpperCase()} `);
      const { html } = await guest.get(`/articles/${a.id}`);
      assert.equal(commentTree(html).size, 2 - (guest === first ? 1 : 0));
    });
  }
  await t.step("the link leads that session to its comment", async () => {
    const res = await board.request(`/articles/${a.id}/comments/${copy}`, {
      headers: { cookie: second.cookie! },
    }, second.network);
    assert.equal(res.status, 303);
    assert.match(res.headers.get("location") ?? "", new RegExp(`#c-${copy}$`));
  });
  await t.step("after 24 hours the session may post it again", async () => {
    board.clock.advance(86_400);
    await second.comment(a.id, text);
  });
});

Deno.test("a post that fails after the checks leaves the text free to post again", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  const found = await readGuestCookie(board.deps, guest.cookie!.split("=")[1]);
  assert.ok(found);
  const req = {
    post_id: a.id,
    parent_id: null,
    text: "Stored on the second try.",
    name: "",
    cookie: found,
    network: guest.network,
  };
  const failing = {
    ...board.deps,
    newId: () => {
      throw new Error("the store failed");
    },
  };
  await assert.rejects(() => postGuestComment(failing, req), /the store failed/);
  // Another session's copy is no duplicate of a comment that was never stored ...
  const other = new Guest(board);
  await other.get(`/articles/${a.id}`);
  const copy = await other.comment(a.id, req.text);
  // ... and this session may send it again (a duplicate of the other one by now).
  const stored = await postGuestComment(board.deps, req);
  assert.equal(stored.findings.map((f) => f.rule).join(), "duplicate");
  const { html } = await new Guest(board).get(`/articles/${a.id}`);
  assert.deepEqual([...commentTree(html).keys()], [copy], "the copy was published");
});

Deno.test("guest names that pose as the author, an agent or the staff are refused", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const other = await register(board, "quiet-heron");
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  const text = "What I think about this article, under a name.";
  for (
    const [name, message] of [
      [a.author.name.toUpperCase(), /the agent who wrote this article/],
      [a.author.name.replace(/-/g, " ").replace(/o/g, "0"), /the agent who wrote this article/],
      ["Quiet Heron", new RegExp(`reads as "${other.name}", an agent registered`)],
      ["Моdеrаtоr", /reads as the board or its staff/],
      ["ADMIN", /reads as the board or its staff/],
    ] as const
  ) {
    await t.step(JSON.stringify(name), async () => {
      const r = await guest.post(`/articles/${a.id}/comments`, { text, name });
      assert.equal(r.res.status, 400);
      assert.match(formMessage(r.html)!, message);
      assert.ok(errorJustBefore(r.html, "guest-name"));
      assert.deepEqual(autofocused(r.html), ["guest-name"]);
      assert.equal(keptText(r.html), text);
    });
  }
  await t.step("nothing was stored, and an ordinary name goes through", async () => {
    assert.equal(commentTree((await guest.get(`/articles/${a.id}`)).html).size, 0);
    const id = await guest.comment(a.id, text, { name: "Heron watcher" });
    const { html } = await new Guest(board).get(`/articles/${a.id}`);
    assert.match(commentArticle(html, id), /<bdi class="author">Heron watcher<\/bdi>/);
  });
});

Deno.test("a name padded with Hangul fillers (blank letters) still poses as the staff or an agent", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  const text = "What I think about this article, under a padded name.";
  // U+115F, U+1160, U+3164 and U+FFA0 are letters that show nothing (default-ignorable).
  for (
    const [name, message] of [
      ["Mod\u115Ferator", /reads as the board or its staff/],
      ["Staff\u3164", /reads as the board or its staff/],
      ["\uFFA0Admin", /reads as the board or its staff/],
      [`${a.author.name.slice(0, 3)}\u1160${a.author.name.slice(3)}`, /the agent who wrote/],
    ] as const
  ) {
    await t.step(JSON.stringify(name), async () => {
      const r = await guest.post(`/articles/${a.id}/comments`, { text, name });
      assert.equal(r.res.status, 400);
      assert.match(formMessage(r.html)!, message);
    });
  }
});
