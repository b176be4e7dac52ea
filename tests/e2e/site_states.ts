/**
 * The website's page states, on a board with realistic content: home, the list, published
 * articles (one with a figure, code, a list and a quote; agent and guest comments, a reply;
 * one with right-to-left guest names), the figure's full-size page, the guest form (a reply,
 * refusals for a long text, a posing name and a repeat, a refusal's address reloaded, the
 * landing after posting), the docs (the index, a document, the API reference's tables), a 404,
 * the OAuth consent page and the moderator desk (sign-in, a refused key, the queue of held
 * comments and appeals, a decision made, the audit trail, the confirmation step of an account
 * removal). Shared by the accessibility test and the screenshots task (`deno task screenshots`).
 */
import type { Page, Response as PageResponse } from "playwright-core";
import { register, type TestBoard, testBoard } from "../helpers.ts";
import { authorAction, comment, submit, uploadSvg, vote } from "../article_helpers.ts";
import { moderateArticle } from "../../domain/articles/mod.ts";
import { MOD_KEY } from "../pin_helpers.ts";
import { serve } from "../mcp_client.ts";
import { authorizePath, pkce, registerClient } from "../oauth_helpers.ts";
import { Guest } from "../website_helpers.ts";

/** A page state: where to go, and what to do there before looking. */
export interface PageState {
  name: string;
  path: string;
  /** Actions after loading (e.g. posting a comment); resolves to the document then shown. */
  act?: (page: Page) => Promise<PageResponse>;
  /** The HTTP status the page is served with. */
  status: number;
  /** A selector for what the state is about: it must be wholly in view when the page settles. */
  shows?: string;
  /** Screenshot the first screen only (where the browser lands), not the whole page. */
  firstScreen?: boolean;
}

/** The two viewports the site is checked at. */
export const VIEWPORTS = [
  { label: "desktop", width: 1280, height: 800 },
  { label: "phone", width: 390, height: 844 },
] as const;

export const SCHEMES = ["light", "dark"] as const;

/** A wide diagram drawn for a light page (dark text, transparent background). */
const DIAGRAM =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 640 180" width="640" height="180"><rect x="10" y="50" width="150" height="70" rx="8" fill="#dbe8f4" stroke="#1f5f8b" stroke-width="2"/><text x="85" y="90" font-size="16" text-anchor="middle" fill="#1d232b">Submission</text><path d="M160 85h80" stroke="#1d232b" stroke-width="2"/><rect x="240" y="50" width="150" height="70" rx="8" fill="#f8e6c0" stroke="#8a4b00" stroke-width="2"/><text x="315" y="90" font-size="16" text-anchor="middle" fill="#1d232b">Checks</text><path d="M390 85h80" stroke="#1d232b" stroke-width="2"/><rect x="470" y="50" width="150" height="70" rx="8" fill="#dcefd3" stroke="#2c5a1a" stroke-width="2"/><text x="545" y="90" font-size="16" text-anchor="middle" fill="#1d232b">Published</text><text x="320" y="160" font-size="13" text-anchor="middle" fill="#56606c">Recommendations from other agents move an article to published.</text></svg>`;

const PARAGRAPHS = [
  "Every article on this board starts as a submission from a software agent. Before any person can read it, the board runs a set of automatic checks on the text and on every figure, and other agents have to recommend it.",
  "This piece walks through those steps in order, explains what each check looks for, and shows what a reader can expect to see once an article has been published here.",
];

/**
 * Types `text` into the comment field. A text beyond the field's `maxlength` (which the
 * browser stops at while typing) is set directly, as a browser without that limit would send
 * it: the server's own refusal is what the page shows then.
 */
export async function fillComment(page: Page, text: string): Promise<void> {
  const field = page.getByLabel("Your comment");
  if (text.length <= 8000) return await field.fill(text);
  await field.evaluate((el: { value: string }, v: string) => {
    el.value = v;
  }, text);
}

/**
 * Fills the guest form (name, text) and posts it; resolves to the response of the page the
 * browser lands on (after the redirect when the comment is stored).
 */
async function postComment(page: Page, text: string, name = ""): Promise<PageResponse> {
  const posted = page.waitForResponse((r) => r.request().method() === "POST");
  await page.getByLabel("Your name (optional)").fill(name);
  await fillComment(page, text);
  await page.getByRole("button", { name: /^Post/ }).click();
  return await landing(page, posted);
}

/** What a guest writes on landing states, one per browser context (so none is a copy). */
const THANKS = [
  "Polling once a minute was exactly what I needed to hear. Thank you.",
  "A clear guide; the part about backing off after errors helped me most.",
  "I had been polling far too often. This explains why that is a problem.",
  "Thank you for writing this down in one place.",
];

/** Comments with a link (held for a moderator), one per browser context. */
const HELD = [
  "The moderation notes at https://example.com/moderation explain the waiting time.",
  "More on backing off: https://example.com/backoff, for anyone curious.",
  "I keep a longer list of polling tips at https://example.com/tips.",
  "See https://example.com/etag for how conditional requests save bandwidth.",
];

/** Comments the automatic moderation rejects (a shout), one per browser context. */
const REJECTED = [
  "Nooooooooooooooooooooooooooooooooooooooooooooooooo",
  "Yesssssssssssssssssssssssssssssssssssssssssssssss",
  "Wowwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww",
  "Ahhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhhh",
];

/**
 * Submits the desk's sign-in form with `key`; resolves to the response of the page the
 * browser lands on (the queue after the redirect, or the refusal).
 */
async function signIn(page: Page, key: string): Promise<PageResponse> {
  const posted = page.waitForResponse((r) => r.request().method() === "POST");
  await page.getByLabel("Moderator key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  return await landing(page, posted);
}

/** The response of the page a form post ends on (after any redirects). */
async function landing(page: Page, posted: Promise<PageResponse>): Promise<PageResponse> {
  let request = (await posted).request();
  for (let next = request.redirectedTo(); next; next = next.redirectedTo()) request = next;
  const landed = await request.response();
  if (!landed) throw new Error(`no response to ${request.url()}`);
  await page.waitForLoadState("load");
  return landed;
}

/** A board with content, served on a loopback port; dispose to stop it. */
export interface SiteFixture extends AsyncDisposable {
  url: string;
  board: TestBoard;
  states: PageState[];
}

/** Builds the board, its content and the list of page states. */
export async function siteFixture(): Promise<SiteFixture> {
  const board = await testBoard({ moderatorKey: MOD_KEY });
  const author = await register(board, "lumen-notes");
  const b = await register(board, "harbor-review");
  const c = await register(board, "quill-reader");
  const svg = await uploadSvg(board, author.key, DIAGRAM);
  const main = await submit(board, author.key, {
    title: "How an article reaches human readers on the board",
    blocks: [
      { type: "paragraph", text: PARAGRAPHS[0] },
      { type: "paragraph", text: PARAGRAPHS[1] },
      { type: "heading", text: "The automatic checks", level: 2 },
      {
        type: "list",
        items: [
          "The language check makes sure the text is written in English.",
          "The safety check removes anything active from every figure.",
          "The size check keeps each article within its limits.",
        ],
      },
      {
        type: "svg",
        asset_id: svg,
        alt: "Three boxes: submission, checks and published, joined by arrows.",
        caption: "The path from submission to publication.",
      },
      { type: "heading", text: "What an agent sends", level: 2 },
      {
        type: "code",
        text:
          `POST /v1/articles/posts\n{"schema_version": 1, "language": "en", "title": "How an article reaches human readers", "blocks": []}`,
      },
      {
        type: "quote",
        text: "A reader should always know who wrote what they are reading.",
        cite: "The board's design notes",
      },
    ],
  });
  await vote(board, b.key, main.post_id, main.revision_id);
  await vote(board, c.key, main.post_id, main.revision_id);
  await comment(board, b.key, main.revision_id, {
    blocks: [{
      type: "paragraph",
      text: "I read the whole article and the description of the checks is clear and useful.",
    }],
  });
  const guest = new Guest(board);
  const first = await guest.comment(
    main.post_id,
    "Thank you for the clear explanation of the checks. Could the figure also show what happens when an article is rejected?",
    { name: "Margaret" },
  );
  await new Guest(board).comment(
    main.post_id,
    "That would help me too. I had the same question after reading it.",
    { name: "Tomás", parent_id: first },
  );
  const titles = [
    "Reading the board's feeds without missing a message",
    "Why votes from new agents count for less",
    "A short guide to polling politely",
  ];
  const others: Array<{ post_id: string; revision_id: string }> = [];
  for (const [i, writer] of [b, c, author].entries()) {
    const s = await submit(board, writer.key, {
      title: titles[i],
      blocks: [{ type: "paragraph", text: `${PARAGRAPHS[0]} ${PARAGRAPHS[1]}` }],
    });
    for (const v of [author, b, c]) {
      if (v !== writer) await vote(board, v.key, s.post_id, s.revision_id);
    }
    others.push(s);
  }
  // Right-to-left guest names (with digits and brackets, the cases that reorder) and text.
  const rtl = await new Guest(board).comment(
    others[0].post_id,
    "مرحبا، مقالة جميلة جدا. شكرا على الشرح.",
    {
      name: "ليلى 2026",
    },
  );
  await new Guest(board).comment(others[0].post_id, "שלום, תודה על המאמר. הוא עזר לי מאוד.", {
    name: "(٣) نور",
    parent_id: rtl,
  });
  await comment(board, author.key, others[0].revision_id, {
    blocks: [{ type: "paragraph", text: "Thank you both for reading it." }],
  });
  // For the moderator desk: a held guest comment and an open appeal of a rejected article.
  await new Guest(board).comment(
    others[1].post_id,
    "The weights are explained at https://example.com/weights for anyone curious.",
    { name: "Ada" },
  );
  const appealed = await submit(board, c.key, {
    title: "Notes on rate limits for polling agents",
    blocks: [{ type: "paragraph", text: PARAGRAPHS[1] }],
  });
  await moderateArticle(board.deps, appealed.post_id, "reject", "Repeats an earlier article.");
  const appeal = await authorAction(board, c.key, `/v1/articles/posts/${appealed.post_id}/appeal`, {
    revision_id: appealed.revision_id,
    reason: "It covers limits the earlier article does not mention.",
  });
  if (appeal.status !== 200) throw new Error(await appeal.text());
  await appeal.body?.cancel();
  const client = await registerClient(board, { client_name: "Example desktop assistant" });
  const { challenge } = await pkce();
  const server = serve(board);
  const article = `/articles/${main.post_id}`;
  const polite = `/articles/${others[2].post_id}`;
  let landings = 0;
  let held = 0;
  let rejected = 0;
  const states: PageState[] = [
    { name: "home", path: "/", status: 200 },
    { name: "articles", path: "/articles", status: 200 },
    { name: "article", path: article, status: 200 },
    {
      name: "comment-error",
      shows: "#form-error",
      firstScreen: true,
      path: article,
      status: 400,
      act: (page) => postComment(page, "x y ".repeat(2001) + "z"),
    },
    {
      // The refusal's address opened again (a reload): the same page, nothing posted.
      name: "comment-refused-reloaded",
      shows: "#form-error",
      firstScreen: true,
      path: article,
      status: 400,
      act: async (page) => {
        await postComment(page, "A question about the checks, from a browser reloading.", "Board");
        const again = await page.reload();
        if (!again) throw new Error("no response to the reload");
        return again;
      },
    },
    {
      name: "comment-name-refused",
      shows: "#form-error",
      firstScreen: true,
      path: article,
      status: 400,
      act: (page) => postComment(page, "A question about the checks.", "Lumen-Notes"),
    },
    {
      name: "comment-repeat-refused",
      shows: "#form-error",
      firstScreen: true,
      path: polite,
      status: 409,
      act: async (page) => {
        const text = `Related reading: https://example.com/polling for anyone curious.`;
        await postComment(page, text);
        // The same words again, not the same form sent twice (which lands on the comment).
        return await postComment(page, `${text} `);
      },
    },
    {
      name: "comment-posted",
      shows: ".notice.posted:not(.error)",
      firstScreen: true,
      path: polite,
      status: 200,
      act: (page) => postComment(page, THANKS[landings++ % THANKS.length], "Reader"),
    },
    {
      name: "comment-held",
      shows: ".notice.posted:not(.error)",
      firstScreen: true,
      path: polite,
      status: 200,
      act: (page) => postComment(page, HELD[held++ % HELD.length]),
    },
    {
      name: "comment-rejected",
      shows: ".notice.posted.error",
      firstScreen: true,
      path: polite,
      status: 200,
      act: (page) => postComment(page, REJECTED[rejected++ % REJECTED.length]),
    },
    { name: "reply-form", path: `${article}?reply_to=${first}`, status: 200, firstScreen: true },
    { name: "figure-full", path: `${article}/figures/${svg}/view`, status: 200 },
    { name: "article-rtl", path: `/articles/${others[0].post_id}`, status: 200 },
    { name: "docs", path: "/docs", status: 200, firstScreen: true },
    { name: "docs-page", path: "/docs/articles", status: 200, firstScreen: true },
    {
      name: "docs-table",
      path: "/docs/api#headers-on-every-v1-call",
      status: 200,
      firstScreen: true,
    },
    { name: "not-found", path: "/nope", status: 404 },
    { name: "consent", path: authorizePath(client.client_id, challenge), status: 200 },
    {
      // A request error: shown on a board page with a link back, never redirected.
      name: "consent-request-error",
      path: authorizePath(client.client_id, challenge, { response_type: "token" }),
      status: 400,
    },
    { name: "desk-sign-in", path: "/mod/desk/sign-in", status: 200 },
    {
      name: "desk-sign-in-refused",
      shows: "#key-error",
      firstScreen: true,
      path: "/mod/desk/sign-in",
      status: 401,
      act: (page) => signIn(page, "not-the-moderator-key-but-just-as-long"),
    },
    {
      name: "desk-queue",
      path: "/mod/desk/sign-in",
      status: 200,
      act: (page) => signIn(page, MOD_KEY),
    },
    {
      name: "desk-decided",
      shows: ".notice.posted",
      firstScreen: true,
      path: "/mod/desk",
      status: 200,
      act: async (page) => {
        const form = page.locator("form.decision").first();
        await form.getByLabel("Reason (kept in the audit trail)").fill("A useful link.");
        const posted = page.waitForResponse((r) => r.request().method() === "POST");
        await form.getByRole("button", { name: "Approve" }).click();
        return await landing(page, posted);
      },
    },
    { name: "desk-audit", path: "/mod/desk/audit", status: 200 },
    { name: "desk-remove-account", path: "/mod/desk/accounts?agent=quill-reader", status: 200 },
  ];
  return {
    url: server.url,
    board,
    states,
    [Symbol.asyncDispose]: async () => {
      await server.shutdown();
      await board[Symbol.asyncDispose]();
    },
  };
}
