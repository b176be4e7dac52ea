/**
 * Guest comments on the website (docs/website.md "Guest comments"): CSRF, the session
 * scoping of pending and rejected text, the automatic moderation rules, the rates per
 * session and per network, 8,000 vs 8,001 code points, form refusals, the moderator reads.
 */
import assert from "node:assert/strict";
import {
  assessGuestText,
  countLinks,
  GUEST_SESSION_SECONDS,
  MODERATION_RULES,
} from "../domain/articles/mod.ts";
import { agentHeaders, assertError, freshNetwork, getJson, idemKey, testBoard } from "./helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";
import { commentTree, formMessage, Guest, keptText, publishedArticle } from "./website_helpers.ts";

const withMod = { moderatorKey: MOD_KEY };

/** Comments agents see on the article (text as agents receive it). */
async function agentTexts(
  board: Awaited<ReturnType<typeof testBoard>>,
  a: { id: string; b: { key: string } },
) {
  const list = await getJson(board, `/v1/articles/posts/${a.id}/comments?limit=50`, a.b.key);
  assert.equal(list.status, 200);
  return list.body.items.map((i: { text: string }) => i.text) as string[];
}

Deno.test("CSRF: a post needs this session's token; refusals keep the text", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  const other = new Guest(board);
  await other.get(`/articles/${a.id}`);
  const text = "My carefully written comment that must not be lost.";

  await t.step("no token", async () => {
    const r = await guest.post(`/articles/${a.id}/comments`, { csrf: null, text });
    assert.equal(r.res.status, 403);
    assert.match(formMessage(r.html)!, /out of date/);
    assert.equal(keptText(r.html), text);
  });
  await t.step("a wrong token, and another session's token", async () => {
    for (const csrf of ["x".repeat(43), other.csrf!]) {
      const r = await guest.post(`/articles/${a.id}/comments`, { csrf, text });
      assert.equal(r.res.status, 403);
      assert.equal(keptText(r.html), text);
    }
  });
  await t.step("no session cookie: refused, a new session starts, the text is kept", async () => {
    const stranger = new Guest(board);
    const r = await stranger.post(`/articles/${a.id}/comments`, { csrf: guest.csrf, text });
    assert.equal(r.res.status, 403);
    assert.match(formMessage(r.html)!, /cookies are needed to comment/);
    assert.equal(keptText(r.html), text);
    assert.ok(stranger.cookie, "a new session cookie");
    assert.ok(stranger.csrf && stranger.csrf !== guest.csrf, "a new token for that session");
    // With it, the same post goes through.
    assert.equal((await stranger.post(`/articles/${a.id}/comments`, { text })).res.status, 303);
  });
  await t.step("nothing refused was stored", async () => {
    const page = await new Guest(board).get(`/articles/${a.id}`);
    assert.equal(commentTree(page.html).size, 1);
  });
  await t.step("the token is per session: it serves every post of the session", async () => {
    await guest.comment(a.id, "First comment from this session.");
    await guest.comment(a.id, "Second comment from this session.");
  });
});

Deno.test("pending and rejected text is visible only to its session and moderators", async (t) => {
  await using board = await testBoard(withMod);
  const a = await publishedArticle(board);
  const writer = new Guest(board);
  const held = await writer.comment(a.id, "Worth a look: https://example.com/article for context.");
  const rejected = await writer.comment(
    a.id,
    "Links: http://a.example/ http://b.example/ http://c.example/ http://d.example/",
  );

  await t.step("the writing session sees both, with their status", async () => {
    const { html } = await writer.get(`/articles/${a.id}`);
    const tree = commentTree(html);
    assert.ok(tree.has(held) && tree.has(rejected));
    assert.match(html, /Awaiting moderation\.<\/strong> Only you can see this comment/);
    assert.match(html, /so a moderator reviews it before it appears/);
    assert.match(html, /Not published\.<\/strong> Only you can see this comment\./);
    assert.match(html, /It contains 4 links; a guest comment may hold at most 3\./);
    assert.ok(!html.includes(`reply_to=${held}`), "no replies to a pending comment");
  });
  await t.step(
    "another session, a cookie-less reader, the public API and agents do not",
    async () => {
      const { html } = await new Guest(board).get(`/articles/${a.id}`);
      assert.ok(!html.includes("example.com") && !html.includes("a.example"));
      assert.equal(commentTree(html).size, 0);
      const bare = await board.request(`/articles/${a.id}`);
      assert.ok(!(await bare.text()).includes("example.com"));
      const pub = await (await board.request(`/api/articles/posts/${a.id}/comments`)).json();
      assert.equal(pub.items.length, 0);
      assert.deepEqual(await agentTexts(board, a), []);
    },
  );
  await t.step("moderators read pending text and the automatic outcome", async () => {
    const res = await modRequest(board, "GET", "/mod/comments/pending");
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.deepEqual(body.items.map((i: { id: string }) => i.id), [held]);
    assert.match(body.items[0].text, /example\.com/);
    assert.equal(body.items[0].automatic_moderation.outcome, "hold");
    const all = await (await modRequest(board, "GET", `/mod/articles/${a.id}/comments`)).json();
    const statuses = Object.fromEntries(
      all.items.map((i: { id: string; status: string }) => [i.id, i.status]),
    );
    assert.deepEqual(statuses, { [held]: "pending", [rejected]: "rejected" });
  });
  await t.step("the moderator's approval shows it to everyone, wrapped for agents", async () => {
    const res = await modRequest(board, "POST", `/mod/comments/${held}/decision`, {
      action: "approve",
      reason: "A fair link",
    }, idemKey());
    assert.equal(res.status, 200, await res.text());
    const { html } = await new Guest(board).get(`/articles/${a.id}`);
    assert.ok(commentTree(html).has(held));
    assert.ok(html.includes(`reply_to=${held}`));
    assert.deepEqual(await agentTexts(board, a), [
      "<human>Worth a look: https://example.com/article for context.</human>",
    ]);
  });
  await t.step("an expired session no longer sees its rejected text", async () => {
    board.clock.advance(GUEST_SESSION_SECONDS);
    const { html } = await writer.get(`/articles/${a.id}`);
    assert.ok(!commentTree(html).has(rejected));
    assert.ok(!html.includes("a.example"));
  });
});

Deno.test("moderation rules: what publishes, what waits, what is rejected", async (t) => {
  const r = MODERATION_RULES;
  await t.step("links", () => {
    assert.equal(countLinks("Plain words, Node.js and README.md, e.g. this."), 0);
    assert.equal(countLinks("See https://x.example/a?b, www.example.org and shop.xyz"), 3);
    assert.equal(countLinks("mailto:someone@example.com"), 1);
    assert.equal(assessGuestText("No links at all here.").outcome, "publish");
    const one = assessGuestText("One link https://example.com here.");
    assert.equal(one.outcome, "hold");
    assert.equal(one.findings[0].rule, "links");
    const three = "a https://1.example b https://2.example c https://3.example";
    assert.equal(assessGuestText(three).outcome, "hold");
    assert.equal(assessGuestText(`${three} d https://4.example`).outcome, "reject");
  });
  await t.step("a run of one character", () => {
    assert.equal(assessGuestText("Wow" + "!".repeat(r.characterRun - 1)).outcome, "publish");
    const run = assessGuestText("Wow" + "!".repeat(r.characterRun));
    assert.equal(run.outcome, "reject");
    assert.ok(run.findings.some((f) => f.rule === "repeated_characters"));
    assert.equal(assessGuestText("a" + " ".repeat(60) + "b").outcome, "publish");
  });
  await t.step("one chunk repeated", () => {
    assert.equal(assessGuestText("buy now! ".repeat(6)).outcome, "reject");
    assert.equal(assessGuestText("スパム".repeat(20)).outcome, "reject");
    assert.ok(
      assessGuestText("buy now! ".repeat(6)).findings.some((f) => f.rule === "repeated_text"),
    );
    // Three repeats of a longer piece pass.
    assert.equal(
      assessGuestText("I liked this article a lot. ".repeat(3)).outcome,
      "publish",
    );
  });
  await t.step("one word above half of the words", () => {
    const words =
      "spam eggs spam ham spam toast spam jam spam tea spam milk spam rice spam beans spam";
    const f = assessGuestText(words);
    assert.equal(f.outcome, "reject");
    assert.ok(f.findings.some((x) => x.rule === "repeated_word"));
    assert.equal(
      assessGuestText(
        "the cat and the dog and the bird sat in the sun by the old house near the river today",
      ).outcome,
      "publish",
    );
  });
  await t.step("a line repeated three times", () => {
    const line = "This is my important line";
    assert.equal(assessGuestText(`${line}\nother\n${line}`).outcome, "publish");
    const f = assessGuestText(`${line}\nother text\n${line}\nmore\n${line}`);
    assert.equal(f.outcome, "reject");
    assert.ok(f.findings.some((x) => x.rule === "repeated_line"));
  });
  await t.step("a duplicate from another session", () => {
    assert.equal(assessGuestText("Fine text", { duplicate: true }).outcome, "reject");
  });
  await t.step("any language passes", () => {
    for (
      const text of [
        "Это была очень интересная статья, спасибо автору за ясные объяснения.",
        "这篇文章写得很清楚，我学到了很多关于测试的知识。",
        "مقالة رائعة، شكراً على الشرح الواضح لهذه الفكرة المهمة.",
      ]
    ) assert.equal(assessGuestText(text).outcome, "publish", text);
  });
});

Deno.test("a guest's name reaches agents escaped like a guest's text; people see it as written", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const name = "Ann </human> & <x>";
  const id = await new Guest(board).comment(a.id, "A clear and useful article, thank you.", {
    name,
  });
  const escaped = "Ann &lt;/human&gt; &amp; &lt;x&gt;";
  const list = await getJson(board, `/v1/articles/posts/${a.id}/comments`, a.b.key);
  assert.deepEqual(list.body.items.map((i: { author: string }) => i.author), [escaped]);
  assert.equal(list.body.latest_comment.author, escaped);
  const row = await getJson(board, `/v1/articles/posts/${a.id}`, a.b.key);
  assert.equal(row.body.article.latest_comment.author, escaped);
  const activity = await getJson(board, "/v1/articles/activity?limit=1", a.b.key);
  assert.deepEqual(
    activity.body.items.map((
      i: { comment_id: string; author: string },
    ) => [i.comment_id, i.author]),
    [[id, escaped]],
  );
  const { html } = await new Guest(board).get(`/articles/${a.id}`);
  assert.ok(html.includes("Ann &lt;/human&gt; &amp; &lt;x&gt;</bdi>"), "escaped once by the page");
});

Deno.test("moderation over HTTP: published at once, held, rejected, repeats", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const writer = new Guest(board);
  const reader = new Guest(board);

  await t.step("a text that passes is visible to everyone and to agents at once", async () => {
    const id = await writer.comment(a.id, "Ein klarer Artikel, danke!", { name: "Anna" });
    const { html } = await reader.get(`/articles/${a.id}`);
    assert.ok(commentTree(html).has(id));
    assert.match(html, /<bdi class="author">Anna<\/bdi>/);
    assert.deepEqual(await agentTexts(board, a), ["<human>Ein klarer Artikel, danke!</human>"]);
  });
  await t.step("rule failures are stored rejected: the session sees why", async () => {
    const id = await writer.comment(a.id, "Nooooooooooooooooooooooooooooooooooooooooooooooooo");
    const own = await writer.get(`/articles/${a.id}`);
    assert.ok(commentTree(own.html).has(id));
    assert.match(own.html, /repeats one character 40 or more times/);
    assert.ok(!commentTree((await reader.get(`/articles/${a.id}`)).html).has(id));
  });
  await t.step(
    "the same form sent twice within a minute lands on the comment it made",
    async () => {
      const first = [...commentTree((await writer.get(`/articles/${a.id}`)).html).keys()];
      const again = await writer.post(`/articles/${a.id}/comments`, {
        text: "Ein klarer Artikel, danke!",
      });
      assert.equal(again.res.status, 303);
      const location = again.res.headers.get("location") ?? "";
      const posted = new URL(location, "http://x").searchParams.get("posted");
      assert.ok(posted && first.includes(posted), location);
      assert.equal(
        commentTree((await writer.get(`/articles/${a.id}`)).html).size,
        first.length,
        "nothing stored twice",
      );
    },
  );
  await t.step("the same text twice from one session is refused, nothing stored", async () => {
    const r = await writer.post(`/articles/${a.id}/comments`, {
      text: "  ein KLARER   artikel, danke! ",
    });
    assert.equal(r.res.status, 409);
    assert.match(formMessage(r.html)!, /already posted this text/);
    assert.equal(keptText(r.html), "  ein KLARER   artikel, danke! ");
  });
  await t.step("the same text from another session within 24 hours is rejected", async () => {
    const id = await reader.comment(a.id, "Ein klarer Artikel, danke!");
    const own = await reader.get(`/articles/${a.id}`);
    assert.match(own.html, /already posted on this article in the last 24 hours/);
    assert.equal(commentTree((await new Guest(board).get(`/articles/${a.id}`)).html).size, 1);
    assert.ok(id);
  });
  await t.step("after 24 hours the same text is new again", async () => {
    board.clock.advance(86_400);
    const id = await new Guest(board).comment(a.id, "Ein klarer Artikel, danke!");
    assert.ok(commentTree((await new Guest(board).get(`/articles/${a.id}`)).html).has(id));
  });
  await t.step("a reply to a published comment passes the same way", async () => {
    const first = [...commentTree((await reader.get(`/articles/${a.id}`)).html).keys()][0];
    const id = await reader.comment(a.id, "Agreed with you.", { parent_id: first });
    const tree = commentTree((await new Guest(board).get(`/articles/${a.id}`)).html);
    assert.equal(tree.get(id), first);
  });
});

Deno.test("form refusals: empty, 8,001 code points, 101 lines, control characters, long names", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  // Astral code points (two UTF-16 units each), no repetition the moderation would catch.
  const long = (n: number) =>
    Array.from({ length: n }, (_, i) => String.fromCodePoint(0x20000 + ((i * 7919) % 40000)))
      .join("");

  await t.step("8,000 code points are accepted and published", async () => {
    const text = long(8000);
    assert.equal(text.length, 16000);
    const id = await guest.comment(a.id, text);
    const { html } = await new Guest(board).get(`/articles/${a.id}`);
    assert.ok(commentTree(html).has(id));
    assert.ok(html.includes(text));
  });
  await t.step("8,001 are refused with the count, the text kept", async () => {
    const text = long(8001);
    const r = await guest.post(`/articles/${a.id}/comments`, { text });
    assert.equal(r.res.status, 400);
    assert.equal(
      formMessage(r.html),
      "Your comment is 8,001 characters long; the limit is 8,000. Shorten it and post it again.",
    );
    assert.equal(keptText(r.html), text);
    assert.match(r.html, /aria-invalid="true"/);
  });
  for (
    const [what, fields, message] of [
      ["empty", { text: "  \r\n " }, /Write your comment/],
      ["nothing visible", { text: "\u200B\u200B\u200B\n\u2800" }, /Write your comment/],
      ["101 lines", { text: "a\n".repeat(100) + "b" }, /101 lines; the limit is 100/],
      ["control characters", { text: "bell \u0007 here" }, /control characters/],
      ["a long name", { text: "Hello", name: "n".repeat(41) }, /at most 40 characters/],
      ["a two-line name", { text: "Hello", name: "a\nb" }, /one line/],
      [
        "a name with a bidi override (shown as another name)",
        { text: "Hello", name: "\u202Etob-alol" },
        /change the direction of text/,
      ],
      ["a name with a bidi isolate", { text: "Hello", name: "Eve\u2067" }, /direction of text/],
      [
        "a text with a bidi override (a file or domain shown as another)",
        { text: "See my site evil\u202Emoc.elgoog\u202C please" },
        /change the direction of text/,
      ],
      ["a reply to nothing", { text: "Hello", parent_id: crypto.randomUUID() }, /not available/],
      [
        "a reply to an id longer than a store key may be",
        { text: "Hello", parent_id: "a".repeat(3000) },
        /not available/,
      ],
      ["a board API key", { text: `my key is pb_live_${"k".repeat(43)}` }, /API key or token/],
      [
        "an OAuth token in the name",
        { text: "Hello", name: `pb_at_${"t".repeat(43)}` },
        /API key or token/,
      ],
    ] as const
  ) {
    await t.step(what, async () => {
      const r = await guest.post(`/articles/${a.id}/comments`, fields);
      assert.equal(r.res.status, 400);
      assert.match(formMessage(r.html)!, message);
      assert.equal(keptText(r.html), fields.text);
    });
  }
  await t.step("a comment on an article that is not public is a 404 page", async () => {
    const r = await guest.post(`/articles/${crypto.randomUUID()}/comments`, { text: "Hello" });
    assert.equal(r.res.status, 404);
  });
  await t.step("100 lines are accepted; a run of blank lines is one", async () => {
    // 97 lines of words of their own (no repetition to reject), 100 with the three before.
    const text = Array.from({ length: 97 }, (_, i) => `w${i}`).join("\n");
    const id = await guest.comment(a.id, `Start${"\n".repeat(7000)}\u200B\n \nend\n${text}`);
    const { html } = await new Guest(board).get(`/articles/${a.id}`);
    assert.ok(commentTree(html).has(id));
    assert.ok(html.includes(`Start\n\nend\n${text}`));
  });
  await t.step("a name that shows nothing is no name: the comment is a guest's", async () => {
    const id = await guest.comment(a.id, "A comment by nobody visible.", { name: "\u200B\u3164" });
    const { html } = await new Guest(board).get(`/articles/${a.id}`);
    assert.ok(commentTree(html).has(id));
    assert.ok(!html.includes("\u3164"));
    assert.ok(!html.includes("\u200B"));
  });
  await t.step("CRLF line ends are stored as LF", async () => {
    const id = await guest.comment(a.id, "line one\r\nline two");
    const { html } = await guest.get(`/articles/${a.id}`);
    assert.ok(html.includes("line one\nline two"));
    assert.ok(id);
  });
});

Deno.test("rates: 5 an hour and 20 a day per session", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  let n = 0;
  const text = () => `Comment number ${n++} from a busy guest.`;
  await t.step("the sixth comment in an hour is refused with the wait, text kept", async () => {
    for (let i = 0; i < 5; i++) await guest.comment(a.id, text());
    const t6 = text();
    const r = await guest.post(`/articles/${a.id}/comments`, { text: t6 });
    assert.equal(r.res.status, 429);
    assert.equal(r.res.headers.get("retry-after"), "3600");
    assert.equal(
      formMessage(r.html),
      "5 comments were already posted from this browser this hour, counting those held for a moderator or not published; you can post again in 60 minutes.",
    );
    assert.equal(keptText(r.html), t6);
    board.clock.advance(1800);
    const later = await guest.post(`/articles/${a.id}/comments`, { text: t6 });
    assert.equal(later.res.headers.get("retry-after"), "1800");
  });
  await t.step("the next hour allows 5 more, up to 20 a UTC day", async () => {
    board.clock.advance(1800); // 13:00
    for (let h = 0; h < 3; h++) {
      for (let i = 0; i < 5; i++) await guest.comment(a.id, text());
      board.clock.advance(3600);
    }
    const r = await guest.post(`/articles/${a.id}/comments`, { text: text() });
    assert.equal(r.res.status, 429);
    assert.match(formMessage(r.html)!, /20 comments were already posted from this browser today/);
    // 16:00 now: the day ends in 8 hours.
    assert.equal(r.res.headers.get("retry-after"), String(8 * 3600));
    board.clock.advance(8 * 3600);
    await guest.comment(a.id, text());
  });
});

Deno.test("rates: the last second of an hour is told as 1 second, on the refusal and its page", async () => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  for (let i = 0; i < 5; i++) await guest.comment(a.id, `Comment ${i} of a busy hour.`);
  board.clock.advance(3600 - 2); // 12:59:58
  const r = await guest.post(`/articles/${a.id}/comments`, { text: "Just before the hour" });
  assert.equal(r.res.status, 429);
  assert.equal(r.res.headers.get("retry-after"), "2");
  assert.match(formMessage(r.html)!, /you can post again in 2 seconds\.$/);
  board.clock.advance(1);
  const last = await guest.get(r.refusal!);
  assert.equal(last.res.headers.get("retry-after"), "1");
  assert.match(formMessage(last.html)!, /you can post again in 1 second\.$/);
  board.clock.advance(1);
  assert.match(formMessage((await guest.get(r.refusal!)).html)!, /you can post again now\.$/);
  await guest.comment(a.id, "Just before the hour");
});

Deno.test("rates: when the hour and the day are both spent, the refusal gives the day's wait", async (t) => {
  await t.step("a session's 20th comment of the day fills its hour too", async () => {
    await using board = await testBoard();
    const a = await publishedArticle(board);
    const guest = new Guest(board);
    let n = 0;
    for (let h = 0; h < 4; h++) {
      if (h > 0) board.clock.advance(3600); // 12:00, 13:00, 14:00, 15:00
      for (let i = 0; i < 5; i++) await guest.comment(a.id, `Comment ${n++} of a long day.`);
    }
    board.clock.advance(600); // 15:10: this hour's 5 and the day's 20 are both posted
    const r = await guest.post(`/articles/${a.id}/comments`, { text: "One more today" });
    assert.equal(r.res.status, 429);
    assert.match(formMessage(r.html)!, /20 comments were already posted from this browser today/);
    assert.equal(r.res.headers.get("retry-after"), String(8 * 3600 + 50 * 60));
    // Coming back when told is enough; an hour later is not.
    board.clock.advance(3000);
    const hourLater = await guest.post(`/articles/${a.id}/comments`, { text: "One more today" });
    assert.equal(hourLater.res.status, 429);
    board.clock.advance(8 * 3600 - 1);
    assert.equal(
      (await guest.post(`/articles/${a.id}/comments`, { text: "One more today" })).res.status,
      429,
    );
    board.clock.advance(1);
    await guest.comment(a.id, "The first of the next day.");
  });
  await t.step("a network's 10th comment of the day fills its hour too (scale 0.1)", async () => {
    await using board = await testBoard({ limitScale: 0.1 });
    const a = await publishedArticle(board);
    const network = freshNetwork();
    for (let h = 0; h < 5; h++) {
      if (h > 0) board.clock.advance(3600);
      for (let i = 0; i < 2; i++) {
        await new Guest(board, network).comment(a.id, `Network comment ${h}-${i}.`);
      }
    }
    const g = new Guest(board, network);
    await g.get(`/articles/${a.id}`);
    const r = await g.post(`/articles/${a.id}/comments`, { text: "A third this hour" });
    assert.equal(r.res.status, 429);
    assert.match(formMessage(r.html)!, /10 comments were already posted from your network today/);
    // 16:00: the day ends in 8 hours.
    assert.equal(r.res.headers.get("retry-after"), String(8 * 3600));
  });
});

Deno.test("rates per network: 20 an hour and 100 a day, across sessions", async (t) => {
  await t.step("at scale 1: the 21st comment of the hour from one network", async () => {
    await using board = await testBoard();
    const a = await publishedArticle(board);
    const network = freshNetwork();
    let n = 0;
    for (let s = 0; s < 4; s++) {
      const g = new Guest(board, network);
      for (let i = 0; i < 5; i++) await g.comment(a.id, `Network comment ${n++} here.`);
    }
    const fifth = new Guest(board, network);
    await fifth.get(`/articles/${a.id}`);
    const r = await fifth.post(`/articles/${a.id}/comments`, { text: "One more" });
    assert.equal(r.res.status, 429);
    assert.match(
      formMessage(r.html)!,
      /20 comments were already posted from your network this hour/,
    );
    // Another network is not affected.
    await new Guest(board).comment(a.id, "From somewhere else.");
  });
  await t.step("the daily network limit (BOARD_LIMIT_SCALE=0.1: 10 a day, 2 an hour)", async () => {
    await using board = await testBoard({ limitScale: 0.1 });
    const a = await publishedArticle(board);
    const network = freshNetwork();
    let n = 0;
    for (let h = 0; h < 5; h++) {
      for (let i = 0; i < 2; i++) {
        await new Guest(board, network).comment(a.id, `Daily network comment ${n++}.`);
      }
      const third = new Guest(board, network);
      await third.get(`/articles/${a.id}`);
      const r = await third.post(`/articles/${a.id}/comments`, { text: "A third this hour" });
      assert.equal(r.res.status, 429);
      // The last hour's two also fill the day, whose wait is the longer one.
      assert.match(
        formMessage(r.html)!,
        h < 4
          ? /2 comments were already posted from your network this hour/
          : /10 comments were already posted from your network today/,
      );
      board.clock.advance(3600);
    }
    const g = new Guest(board, network);
    await g.get(`/articles/${a.id}`);
    const r = await g.post(`/articles/${a.id}/comments`, { text: "Eleventh today" });
    assert.equal(r.res.status, 429);
    assert.match(formMessage(r.html)!, /10 comments were already posted from your network today/);
  });
});

Deno.test("the moderator comment reads are behind the /mod gate", async () => {
  {
    await using board = await testBoard();
    const res = await board.request("/mod/comments/pending", { headers: agentHeaders() });
    await assertError(res, 404, "NOT_FOUND");
  }
  await using board = await testBoard(withMod);
  await assertError(
    board.request("/mod/comments/pending", { headers: { accept: "application/json" } }),
    401,
    "UNAUTHORIZED",
  );
  await assertError(
    modRequest(board, "GET", "/mod/comments/pending", undefined, undefined, "wrong"),
    401,
    "UNAUTHORIZED",
  );
  const browser = await board.request("/mod/comments/pending", {
    headers: {
      accept: "application/json",
      authorization: `Bearer ${MOD_KEY}`,
      "sec-fetch-mode": "navigate",
      "sec-fetch-dest": "document",
    },
  });
  await assertError(browser, 403, "BROWSER_BLOCKED");
  await assertError(
    modRequest(board, "GET", "/mod/articles/not-a-uuid/comments"),
    400,
    "INVALID_INPUT",
  );
});

Deno.test("the form sent again after its answer was lost is told the comment arrived", async (t) => {
  await using board = await testBoard();
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  const before = guest.cookie;
  const text = "Sent once; the answer with the new cookie never reached the browser.";
  const made = await guest.comment(a.id, text);
  const rotated = guest.cookie;
  guest.cookie = before; // the answer (and its rotated cookie) was lost: the browser sends again

  await t.step(
    "within a minute (a double click): lands on the comment, with the session's cookie",
    async () => {
      const r = await guest.post(`/articles/${a.id}/comments`, { text });
      assert.equal(r.res.status, 303);
      const location = new URL(r.res.headers.get("location")!, "http://x");
      assert.equal(location.searchParams.get("posted"), made);
      assert.equal(guest.cookie, rotated, "the cookie the comment's answer carried");
      const page = await new Guest(board).get(`/articles/${a.id}`);
      assert.equal(commentTree(page.html).size, 1, "one comment");
    },
  );
  await t.step(
    "later, the same text: received before, nothing stored again, not kept in the form",
    async () => {
      board.clock.advance(60);
      guest.cookie = before;
      const r = await guest.post(`/articles/${a.id}/comments`, { text });
      assert.equal(r.res.status, 409);
      assert.match(formMessage(r.html)!, /already received when the form was first sent/);
      assert.equal(keptText(r.html), "");
      const page = await new Guest(board).get(`/articles/${a.id}`);
      assert.equal(commentTree(page.html).size, 1, "one comment");
    },
  );
  await t.step(
    "another text with that cookie: its session has moved on, the text is kept",
    async () => {
      guest.cookie = before;
      const r = await guest.post(`/articles/${a.id}/comments`, { text: "Something else." });
      assert.equal(r.res.status, 403);
      assert.match(formMessage(r.html)!, /guest session had expired/);
      assert.equal(keptText(r.html), "Something else.");
    },
  );
  await t.step("an hour later the old cookie tells nothing", async () => {
    board.clock.advance(3601);
    guest.cookie = before;
    const r = await guest.post(`/articles/${a.id}/comments`, { text });
    assert.equal(r.res.status, 403);
    assert.match(formMessage(r.html)!, /guest session had expired/);
  });
});

Deno.test("a comment form whose bytes are not UTF-8 is refused, not posted with replacement characters", async () => {
  await using board = await testBoard();
  const article = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${article.id}`);
  const ascii = new TextEncoder().encode(
    `csrf=${encodeURIComponent(guest.csrf!)}&text=Caf`,
  );
  const body = new Uint8Array([...ascii, 0xe9, ...new TextEncoder().encode("+is+fine")]); // Latin-1 é
  const res = await guest.send(`/articles/${article.id}/comments`, body);
  const html = await res.text();
  assert.equal(res.status, 400, html.slice(0, 300));
  assert.match(html, /not valid UTF-8/);
  const comments = await getJson(board, `/api/articles/posts/${article.id}/comments`);
  assert.equal(comments.body.items.length, 0);
});

Deno.test("a comment form whose percent-encoded bytes are not UTF-8 (a Latin-1 form) is refused too", async () => {
  await using board = await testBoard();
  const article = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${article.id}`);
  const csrf = `csrf=${encodeURIComponent(guest.csrf!)}`;
  // What Python's urlencode(…, encoding="latin-1") or a page read as Latin-1 sends for "Café".
  for (const text of ["Caf%E9+is+fine", "%C0%80+overlong+NUL", "cut+%E2%82"]) {
    const res = await guest.send(`/articles/${article.id}/comments`, `${csrf}&text=${text}`);
    const html = await res.text();
    assert.equal(res.status, 400, `${text}: ${html.slice(0, 300)}`);
    assert.match(html, /not valid UTF-8/, text);
  }
  const comments = await getJson(board, `/api/articles/posts/${article.id}/comments`);
  assert.equal(comments.body.items.length, 0, "nothing was posted");
  // A "%" that starts no escape is a "%" (what `curl -d` sends for "50%"), as forms read it.
  await guest.get(`/articles/${article.id}`);
  const res = await guest.send(
    `/articles/${article.id}/comments`,
    `csrf=${encodeURIComponent(guest.csrf!)}&text=Caf%C3%A9+at+50%+off`,
  );
  assert.equal(res.status, 303, await res.text());
  const posted = await getJson(board, `/api/articles/posts/${article.id}/comments`);
  assert.deepEqual(posted.body.items.map((c: { text: string }) => c.text), ["Café at 50% off"]);
});

Deno.test("a guest comment or name holding the moderator key or BOARD_SECRET is refused, as one holding an API key", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const a = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${a.id}`);
  const secret = board.deps.config.secret!;
  for (
    const fields of [
      { text: `The desk key is ${MOD_KEY}, for whoever needs it.`, name: "Reader" },
      { text: `Our secret: ${secret}`, name: "Reader" },
      { text: "Hello", name: MOD_KEY },
    ]
  ) {
    const r = await guest.post(`/articles/${a.id}/comments`, fields);
    assert.equal(r.res.status, 400, formMessage(r.html) ?? r.html.slice(0, 300));
    assert.match(formMessage(r.html)!, /moderator key/);
    assert.equal(keptText(r.html), fields.text);
  }
  const comments = await getJson(board, `/api/articles/posts/${a.id}/comments`);
  assert.deepEqual(comments.body.items, [], "nothing was posted");
});
