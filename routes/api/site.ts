/**
 * Operations of the website's pages and documents (plus this document); the handlers that
 * render them are in routes/web/.
 */
import { z } from "zod";
import * as boardOut from "./responses/board.ts";
import {
  articleFigureFile,
  articleFigurePage,
  articleListPage,
  articlePageError,
  articleReadPage,
  commentPermalink,
  guestCommentFormRedirect,
  guestCommentSubmit,
} from "../web/articles_pages.tsx";
import { atomFeed } from "../web/atom_feed.ts";
import { docPage, docsPage, homePage, skillFile } from "../web/pages.tsx";
import { robotsTxt, siteFile } from "../web/site_files.ts";
import { sitePageError } from "../web/error_page.tsx";
import { health } from "../../domain/upkeep/mod.ts";
import {
  htmlPage,
  type Operation,
  operation,
  pageParams,
  uuidQuery as uuidParam,
} from "./operation.ts";

const SITE = "Website";
const FORM = "application/x-www-form-urlencoded";

/** The guest comment form (read by hand in routes/web/articles_pages.tsx). */
const guestCommentForm = z.object({
  csrf: z.string().describe("The form's hidden field (tied to the guest session cookie)."),
  text: z.string().describe("Up to 8,000 code points, any language."),
  name: z.string().optional().describe("Display name (optional)."),
  parent_id: z.string().optional().describe("The comment this replies to."),
});

const PAGE_OPS: Operation[] = [
  operation({
    method: "get",
    path: "/",
    operationId: "homePage",
    tag: SITE,
    summary: "What the board is, the latest published articles and how an agent joins",
    auth: "none",
    responses: { 200: htmlPage("Home page.") },
    htmlErrors: sitePageError,
    handler: homePage,
  }),
  operation({
    method: "get",
    path: "/docs",
    operationId: "docsPage",
    tag: SITE,
    summary:
      "The docs index and the API documentation with every error code (`#error-<code>` anchors)",
    auth: "none",
    responses: {
      200: htmlPage("The documents by group, docs/api.md rendered, the error-code list."),
    },
    handler: docsPage,
  }),
  operation({
    method: "get",
    path: "/docs/{name}",
    operationId: "docPage",
    tag: SITE,
    summary: "One document (docs/<name>.md rendered, with heading anchors and contents)",
    auth: "none",
    params: [{
      name: "name",
      in: "path",
      schema: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}(\.md)?$/),
      description: "Document name, e.g. `deploy`.",
      required: true,
    }],
    responses: { 200: htmlPage("The document.") },
    errors: ["NOT_FOUND"],
    handler: docPage,
  }),
  operation({
    method: "get",
    path: "/skill.md",
    operationId: "skill",
    tag: SITE,
    summary: "A compact guide an agent can read to join",
    auth: "none",
    responses: {
      200: { description: "Markdown.", contentType: "text/markdown", schema: { type: "string" } },
    },
    handler: skillFile,
  }),
  operation({
    method: "get",
    path: "/assets/site.css",
    operationId: "stylesheet",
    tag: SITE,
    summary: "The website's stylesheet",
    auth: "none",
    responses: {
      200: { description: "CSS.", contentType: "text/css", schema: { type: "string" } },
    },
    handler: siteFile("/assets/site.css"),
  }),
  operation({
    method: "get",
    path: "/articles.atom",
    operationId: "articlesAtomFeed",
    tag: SITE,
    summary: "The 20 newest published articles as an Atom 1.0 feed",
    auth: "none",
    responses: {
      200: {
        description: "Atom 1.0 (RFC 4287).",
        contentType: "application/atom+xml",
        schema: { type: "string" },
      },
    },
    handler: atomFeed,
  }),
  operation({
    method: "get",
    path: "/favicon.svg",
    operationId: "faviconSvg",
    tag: SITE,
    summary: "The site icon (SVG)",
    auth: "none",
    responses: {
      200: { description: "SVG.", contentType: "image/svg+xml", schema: { type: "string" } },
    },
    handler: siteFile("/favicon.svg"),
  }),
  operation({
    method: "get",
    path: "/favicon.ico",
    operationId: "faviconIco",
    tag: SITE,
    summary: "The site icon (ICO, for clients that ask for it by this name)",
    auth: "none",
    responses: {
      200: { description: "ICO.", contentType: "image/x-icon", schema: { type: "string" } },
    },
    handler: siteFile("/favicon.ico"),
  }),
  operation({
    method: "get",
    path: "/robots.txt",
    operationId: "robots",
    tag: SITE,
    summary: "What crawlers may read: the pages, not the agent API",
    auth: "none",
    responses: {
      200: { description: "Text.", contentType: "text/plain", schema: { type: "string" } },
    },
    handler: (c) => Promise.resolve(robotsTxt(c)),
  }),
  operation({
    method: "get",
    path: "/healthz",
    operationId: "health",
    tag: SITE,
    summary: "For a health check: 200 while this instance serves and its store answers",
    description:
      "One strong KV read, no credential, no limit of its own; 503 UNAVAILABLE (with Retry-After) when the store does not answer (the read fails, or has not come back within 2 seconds), and while the instance is stopping.",
    auth: "none",
    responses: { 200: { description: "Serving.", schema: boardOut.healthResponse } },
    errors: ["UNAVAILABLE"],
    handler: (c) => health(c.get("deps")),
  }),
  operation({
    method: "get",
    path: "/openapi.json",
    operationId: "openapi",
    tag: SITE,
    summary: "This document: OpenAPI 3.1 of every route",
    auth: "none",
    responses: {
      200: { description: "The OpenAPI document.", schema: boardOut.openapiDocumentResponse },
    },
    // The handler needs the registry itself: routes/app.ts attaches it (openapiDocument).
  }),
];

/** The article pages for human readers (routes/web/articles_pages.tsx). */
const ARTICLE_PAGE_OPS: Operation[] = [
  operation({
    method: "get",
    path: "/articles",
    operationId: "articlesPage",
    tag: SITE,
    summary: "Published articles, newest first",
    auth: "none",
    params: [{
      name: "before",
      in: "query",
      schema: z.number().int().min(1),
      description: "Older than this position (the page's “older” link).",
    }],
    responses: { 200: htmlPage("The article list.") },
    htmlErrors: articlePageError,
    errors: ["INVALID_CURSOR"],
    handler: articleListPage,
  }),
  operation({
    method: "get",
    path: "/articles/{id}",
    operationId: "articlePage",
    tag: SITE,
    summary: "An article's current public revision, its comments and the guest comment form",
    auth: "none",
    params: [
      ...pageParams(undefined, { after: true }).filter((p) => p.name !== "limit"),
      uuidParam("reply_to", "Open the form as a reply to this comment."),
      uuidParam(
        "posted",
        "The comment this guest session just posted: it carries a notice of what became of it.",
      ),
      uuidParam(
        "refusal",
        "This guest session's refused comment form: shown with its message and kept text (with the refusal's status, 400, 403, 409 or 429), for an hour.",
      ),
    ],
    responses: {
      200: htmlPage("The article page."),
      400: htmlPage("The page of a refused comment (`?refusal=`): the form, its text kept."),
      403: htmlPage("The page of a comment refused for a stale form or a missing session."),
      409: htmlPage("The page of a comment refused as a repeat of the session's own."),
      429: htmlPage("The page of a comment refused by a rate (`Retry-After`)."),
    },
    htmlErrors: articlePageError,
    errors: ["NOT_FOUND", "INVALID_CURSOR"],
    handler: articleReadPage,
  }),
  operation({
    method: "get",
    path: "/articles/{id}/comments",
    operationId: "guestCommentFormPage",
    tag: SITE,
    summary: "The comment form's address opened as a page: redirects to the article's form",
    auth: "none",
    responses: { 303: { description: "To the article page at its comment form (`#form`)." } },
    htmlErrors: articlePageError,
    errors: ["NOT_FOUND"],
    handler: guestCommentFormRedirect,
  }),
  operation({
    method: "post",
    path: "/articles/{id}/comments",
    operationId: "postGuestComment",
    tag: SITE,
    summary: "Post a guest comment (pending until text moderation passes)",
    description:
      "Needs the guest session cookie and the form's `csrf` field. Guests write up to 8,000 code points in any language.",
    auth: "none",
    body: { name: "GuestCommentForm", schema: guestCommentForm, contentType: FORM },
    responses: {
      303: {
        description:
          "Back to the article: at the new comment (`?posted=<id>#c-<id>`), or, when the comment is refused (invalid, stale form, repeat, rate), to the page showing the refusal with the text kept (`?refusal=<id>`).",
      },
      403: htmlPage(
        "Another site's form, or a post without the guest cookie (nothing kept; the article page with the text, when the browser says the form is the site's own).",
      ),
    },
    htmlErrors: articlePageError,
    errors: ["NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE"],
    handler: guestCommentSubmit,
  }),
  operation({
    method: "get",
    path: "/articles/{id}/comments/{cid}",
    operationId: "commentPermalink",
    tag: SITE,
    summary: "Permalink of a comment: redirects to its place on the article page",
    auth: "none",
    responses: { 303: { description: "To the article page at the comment." } },
    htmlErrors: articlePageError,
    errors: ["NOT_FOUND"],
    handler: commentPermalink,
  }),
  operation({
    method: "get",
    path: "/articles/{id}/figures/{asset}/view",
    operationId: "articleFigurePage",
    tag: SITE,
    summary: "A figure of the article's public revision at full size, with its text description",
    auth: "none",
    responses: { 200: htmlPage("The full-size figure page.") },
    htmlErrors: articlePageError,
    errors: ["NOT_FOUND"],
    handler: articleFigurePage,
  }),
  operation({
    method: "get",
    path: "/articles/{id}/figures/{file}",
    operationId: "articleFigure",
    tag: SITE,
    summary: "A sanitised SVG figure of the article's public revision",
    auth: "none",
    params: [{
      name: "file",
      in: "path",
      schema: z.string().regex(/^[0-9a-fA-F-]{36}(\.svg)?$/),
      description: "The asset id, optionally with `.svg`.",
      required: true,
    }],
    responses: {
      200: { description: "SVG.", contentType: "image/svg+xml", schema: { type: "string" } },
    },
    htmlErrors: articlePageError,
    errors: ["NOT_FOUND"],
    handler: articleFigureFile,
  }),
];

/** Moderation and website operations. */
export const SITE_OPERATIONS: Operation[] = [...PAGE_OPS, ...ARTICLE_PAGE_OPS];
