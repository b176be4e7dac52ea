/**
 * Bidirectional isolation (docs/website.md "Security"): every piece of agent- or
 * guest-written text on the article pages — titles, names, blocks, captions, comments,
 * the reply target, the form fields — and on the moderator desk's queue (what a moderator
 * decides on reads as it will read on the site) is in its own `<bdi>` or `dir="auto"` element,
 * so a right-to-left name or a stray bidi control never reorders the site's words around it.
 */
import assert from "node:assert/strict";
import { register, testBoard } from "./helpers.ts";
import { authorAction, comment, submit, uploadSvg, vote } from "./article_helpers.ts";
import { Guest } from "./website_helpers.ts";
import { DeskBrowser, heldComment } from "./desk_helpers.ts";
import { MOD_KEY } from "./pin_helpers.ts";
import { moderateArticle } from "../domain/articles/mod.ts";

/** Written text, each short enough for the article language check (under 20 letters). */
export const RTL = {
  name: "ليلى 2026",
  heading: "مرحبا بكم",
  item: "שלום עולם",
  cite: "ابن خلدون",
  caption: "مخطط 3",
  alt: "רשת 12",
  agentText: "نص 42",
  guestText: "شكراً على المقالة 7",
  title: "Names like ليلى in an English sentence about how readers see mixed text",
} as const;

/** The escaped form hono/jsx writes for a text. */
function escaped(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

/** Where `text` appears as page text (not inside a tag, nor in `<title>`): the tag it sits in. */
function textPlaces(html: string, text: string): string[] {
  const tags: string[] = [];
  const needle = escaped(text);
  for (let at = html.indexOf(needle); at >= 0; at = html.indexOf(needle, at + 1)) {
    const open = html.lastIndexOf("<", at);
    const close = html.lastIndexOf(">", at);
    if (open > close) continue; // inside a tag: an attribute value
    const tag = html.slice(open, close + 1);
    if (tag !== "<title>") tags.push(tag);
  }
  return tags;
}

/** The places of `text` not in a `<bdi>` nor in an element with `dir="auto"`. */
function unisolated(html: string, text: string): string[] {
  return textPlaces(html, text).filter((tag) => !/^<bdi\b/.test(tag) && !/\bdir="auto"/.test(tag));
}

Deno.test("author- and guest-written text is isolated on every article page", async (t) => {
  await using board = await testBoard();
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const svg = await uploadSvg(board, author.key);
  const s = await submit(board, author.key, {
    title: RTL.title,
    blocks: [
      {
        type: "paragraph",
        text: "An English paragraph that introduces the figure below. ".repeat(12),
      },
      { type: "heading", text: RTL.heading, level: 2 },
      { type: "list", items: [RTL.item, "ok"] },
      { type: "quote", text: "A quoted English sentence.", cite: RTL.cite },
      { type: "svg", asset_id: svg, alt: RTL.alt, caption: RTL.caption },
    ],
  });
  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id);
  await comment(board, b.key, s.revision_id, {
    blocks: [{ type: "paragraph", text: RTL.agentText }],
  });
  const guest = new Guest(board);
  const id = await guest.comment(s.post_id, RTL.guestText, { name: RTL.name });
  const pages = {
    list: (await guest.get("/articles")).html,
    article: (await guest.get(`/articles/${s.post_id}`)).html,
    reply: (await guest.get(`/articles/${s.post_id}?reply_to=${id}`)).html,
    figure: (await guest.get(`/articles/${s.post_id}/figures/${svg}/view`)).html,
  };

  const expect: Array<[keyof typeof pages, string, number]> = [
    ["list", RTL.title, 1],
    ["list", author.name, 1],
    ["article", RTL.title, 1],
    ["article", author.name, 1],
    ["article", RTL.heading, 1],
    ["article", RTL.item, 1],
    ["article", RTL.cite, 1],
    ["article", RTL.caption, 1],
    ["article", RTL.alt, 1], // the text description under the figure
    ["article", b.name, 1],
    ["article", RTL.agentText, 1],
    ["article", RTL.name, 1],
    ["article", RTL.guestText, 1],
    ["reply", RTL.name, 2], // the comment, and "Reply to …"
    ["reply", RTL.guestText, 2], // the comment, and the quoted reply target
    ["figure", RTL.title, 2],
    ["figure", author.name, 1],
    ["figure", RTL.caption, 1],
    ["figure", RTL.alt, 1],
  ];
  for (const [page, text, count] of expect) {
    await t.step(`${page}: ${text}`, () => {
      assert.equal(textPlaces(pages[page], text).length, count, "shown as text");
      assert.deepEqual(unisolated(pages[page], text), []);
    });
  }
  await t.step("the form's fields take either direction", async () => {
    // The same text again (past the minute in which it would be the same form sent twice).
    board.clock.advance(60);
    const r = await guest.post(`/articles/${s.post_id}/comments`, {
      text: RTL.guestText,
      name: RTL.name,
    });
    assert.equal(r.res.status, 409);
    assert.match(r.html, /<input type="text" id="guest-name" name="name" dir="auto"/);
    assert.match(r.html, /<textarea id="guest-text" name="text" dir="auto"/);
  });
});

Deno.test("author- and guest-written text is isolated on the moderator desk's queue", async (t) => {
  await using board = await testBoard({ moderatorKey: MOD_KEY });
  const author = await register(board);
  // A held guest comment (a link holds it for a moderator), in a right-to-left script.
  const held = `${RTL.guestText} https://example.com/${crypto.randomUUID()}`;
  const { article } = await heldComment(board, held, RTL.name);
  // An open appeal of a rejected revision, its title and reason written by its author.
  const s = await submit(board, author.key, { title: RTL.title });
  await moderateArticle(board.deps, s.post_id, "reject", "Off topic");
  const appeal = "أعيدوا النظر فيها 3";
  const ap = await authorAction(board, author.key, `/v1/articles/posts/${s.post_id}/appeal`, {
    revision_id: s.revision_id,
    reason: appeal,
  });
  assert.equal(ap.status, 200);
  await ap.body?.cancel();
  const desk = new DeskBrowser(board);
  await desk.signIn();
  const { html } = await desk.get("/mod/desk");
  assert.ok(article.id);
  const expect: Array<[string, number]> = [
    [RTL.name, 1], // "Guest comment by …"
    [held, 1], // the held text
    [RTL.title, 1], // the appealed article's title
    [appeal, 1], // "The author's appeal: …"
    [author.name, 1], // "Revision 1 by …"
  ];
  for (const [text, count] of expect) {
    await t.step(text, () => {
      assert.equal(textPlaces(html, text).length, count, "shown as text");
      assert.deepEqual(unisolated(html, text), []);
    });
  }
});
