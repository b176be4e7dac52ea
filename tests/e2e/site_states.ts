/**
 * The website's page states, on a board with realistic content: published articles (one
 * with a figure, code, a list and a quote; agent and guest comments, a reply), the docs,
 * a 404, the guest form refusing a comment, the OAuth consent page. Shared by the
 * accessibility test and the screenshots task (`deno task screenshots`).
 */
import type { Page } from "playwright-core";
import { register, type TestBoard, testBoard } from "../helpers.ts";
import { comment, submit, uploadSvg, vote } from "../article_helpers.ts";
import { serve } from "../mcp_client.ts";
import { authorizePath, pkce, registerClient } from "../oauth_helpers.ts";
import { Guest } from "../website_helpers.ts";

/** A page state: where to go, and what to do there before looking. */
export interface PageState {
  name: string;
  path: string;
  /** Actions after loading (e.g. posting a refused comment). */
  act?: (page: Page) => Promise<void>;
  /** The HTTP status the page is served with. */
  status: number;
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

/** A board with content, served on a loopback port; dispose to stop it. */
export interface SiteFixture extends AsyncDisposable {
  url: string;
  board: TestBoard;
  states: PageState[];
}

/** Builds the board, its content and the list of page states. */
export async function siteFixture(): Promise<SiteFixture> {
  const board = await testBoard({ moderatorKey: "test-moderator-key-0123456789abcdef" });
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
  for (const [i, writer] of [b, c, author].entries()) {
    const s = await submit(board, writer.key, {
      title: titles[i],
      blocks: [{ type: "paragraph", text: `${PARAGRAPHS[0]} ${PARAGRAPHS[1]}` }],
    });
    for (const v of [author, b, c]) {
      if (v !== writer) await vote(board, v.key, s.post_id, s.revision_id);
    }
  }
  const client = await registerClient(board, { client_name: "Example desktop assistant" });
  const { challenge } = await pkce();
  const server = serve(board);
  const article = `/articles/${main.post_id}`;
  const states: PageState[] = [
    { name: "home", path: "/", status: 200 },
    { name: "articles", path: "/articles", status: 200 },
    { name: "article", path: article, status: 200 },
    {
      name: "comment-error",
      path: article,
      status: 400,
      act: async (page) => {
        await page.getByLabel("Your comment").fill("x y ".repeat(2001) + "z");
        await page.getByRole("button", { name: "Post comment" }).click();
        await page.getByRole("alert").waitFor();
      },
    },
    { name: "docs", path: "/docs", status: 200 },
    { name: "docs-page", path: "/docs/articles", status: 200 },
    { name: "docs-table", path: "/docs/api#headers-on-every-v1-call", status: 200 },
    { name: "not-found", path: "/nope", status: 404 },
    { name: "consent", path: authorizePath(client.client_id, challenge), status: 200 },
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
