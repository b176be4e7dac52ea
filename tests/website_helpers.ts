/** Helpers for the website tests: published articles, a cookie-keeping guest, HTML probes. */
import assert from "node:assert/strict";
import { findGuestSession, postGuestComment, readGuestCookie } from "../domain/articles/mod.ts";
import { freshNetwork, register, type TestBoard } from "./helpers.ts";
import { comment, figureBlocks, submit, uploadSvg, vote } from "./article_helpers.ts";
import { keys } from "../kv/keys.ts";

/**
 * Publishes an article (2 recommendations during grace), with `figures` SVG figures its author
 * uploads first; returns its ids, the agents and the figures' asset ids.
 */
export async function publishedArticle(
  board: TestBoard,
  overrides: Record<string, unknown> = {},
  figures = 0,
) {
  const [author, b, c] = [await register(board), await register(board), await register(board)];
  const assets: string[] = [];
  for (let i = 0; i < figures; i++) assets.push(await uploadSvg(board, author.key));
  const s = await submit(
    board,
    author.key,
    figures ? { blocks: figureBlocks(assets), ...overrides } : overrides,
  );
  await vote(board, b.key, s.post_id, s.revision_id);
  await vote(board, c.key, s.post_id, s.revision_id);
  return { id: s.post_id, revision: s.revision_id, author, b, c, figures: assets };
}

/**
 * A published article with a comment by another account whose locator is kept as a store
 * written before kept it (`{ post_id, seq }`, without the copies of the comment's nesting
 * level and status), and a pending new revision of the article.
 */
export async function articleWithOlderComment(board: TestBoard) {
  const reader = await register(board);
  const article = await publishedArticle(board);
  const top = await comment(board, reader.key, article.revision);
  const locKey = keys.articleCommentLocators(top.comment_id);
  const { depth: _depth, status: _status, ...older } = (await board.kv.get(locKey)).value!;
  await board.kv.set(locKey, older);
  await submit(board, article.author.key, { replaces_post_id: article.id, title: "Revised" });
  return { reader, article, top };
}

/** A browser-like guest: keeps its cookie, reads the CSRF token from the form, posts forms. */
export class Guest {
  cookie: string | null = null;
  csrf: string | null = null;
  constructor(readonly board: TestBoard, readonly network = freshNetwork()) {}

  #keep(res: Response) {
    const set = res.headers.get("set-cookie");
    if (set) this.cookie = set.split(";")[0];
  }

  /** GETs a page; remembers the cookie and the form's CSRF token. */
  async get(path: string): Promise<{ res: Response; html: string }> {
    const res = await this.board.request(path, {
      headers: { accept: "text/html", ...(this.cookie ? { cookie: this.cookie } : {}) },
      redirect: "manual",
    }, this.network);
    this.#keep(res);
    const html = await res.text();
    const token = html.match(/name="csrf" value="([^"]+)"/)?.[1];
    if (token) this.csrf = token;
    return { res, html };
  }

  /** POSTs `body` as a form from one of the site's pages (with the cookie); keeps the new cookie. */
  async send(path: string, body: string | Uint8Array<ArrayBuffer>): Promise<Response> {
    const res = await this.board.request(path, {
      method: "POST",
      headers: {
        accept: "text/html",
        "content-type": "application/x-www-form-urlencoded",
        // What a browser says of a form sent from one of the site's own pages.
        "sec-fetch-site": "same-origin",
        "sec-fetch-mode": "navigate",
        "sec-fetch-dest": "document",
        ...(this.cookie ? { cookie: this.cookie } : {}),
      },
      body,
      redirect: "manual",
    }, this.network);
    this.#keep(res);
    return res;
  }

  /**
   * POSTs a form (the CSRF token is added unless `fields.csrf` is given or null). A refused
   * comment answers 303 to the page that shows the refusal: that page is followed, and `res`
   * and `html` are its answer (`posted` is the POST's own answer, `refusal` the address).
   */
  async post(
    path: string,
    fields: Record<string, string | null>,
  ): Promise<{ res: Response; html: string; posted: Response; refusal: string | null }> {
    const body = new URLSearchParams();
    const all = { csrf: this.csrf, ...fields };
    for (const [k, v] of Object.entries(all)) if (v !== null) body.set(k, v);
    const res = await this.send(path, body.toString());
    const location = res.headers.get("location");
    if (res.status === 303 && location && /[?&]refusal=/.test(location)) {
      await res.body?.cancel();
      return { ...await this.get(location), posted: res, refusal: location };
    }
    const html = await res.text();
    const token = html.match(/name="csrf" value="([^"]+)"/)?.[1];
    if (token) this.csrf = token;
    return { res, html, posted: res, refusal: null };
  }

  /** Opens the article (for a session and token), posts a comment, expects a 303; returns its id. */
  async comment(
    articleId: string,
    text: string,
    extra: Record<string, string> = {},
  ): Promise<string> {
    if (!this.csrf) await this.get(`/articles/${articleId}`);
    const { res, html } = await this.post(`/articles/${articleId}/comments`, { text, ...extra });
    assert.equal(res.status, 303, html.match(/role="alert"[^>]*>([^<]*)/)?.[1] ?? html);
    const id = res.headers.get("location")?.match(/\?posted=([0-9a-f-]{36})#c-\1$/)?.[1];
    assert.ok(id, res.headers.get("location") ?? "no location");
    return id;
  }

  /**
   * Posts a comment as the website's form does, through `postGuestComment` with this guest's
   * session, form token and network (opening the article first for them), and keeps the
   * rotated cookie. Answers the domain's result: the comment id, its moderation status
   * (`published`, `pending` for a moderator, `rejected`), depth and findings. A refusal
   * throws its `BoardError`.
   */
  async postComment(
    articleId: string,
    text: string,
    opts: { name?: string; parent_id?: string | null } = {},
  ): Promise<Awaited<ReturnType<typeof postGuestComment>>> {
    if (!this.cookie || !this.csrf) await this.get(`/articles/${articleId}`);
    const [cookieName, value] = this.cookie!.split("=");
    assert.ok(await findGuestSession(this.board.deps, value), "the guest has a live session");
    const cookie = await readGuestCookie(this.board.deps, value);
    assert.ok(cookie);
    const result = await postGuestComment(this.board.deps, {
      post_id: articleId,
      parent_id: opts.parent_id ?? null,
      text,
      name: opts.name ?? "",
      cookie,
      csrf: this.csrf,
      network: this.network,
    });
    this.cookie = `${cookieName}=${result.rotated.cookie}`;
    return result;
  }
}

/** The refusal message shown in the form, if any (its text, tags left out, HTML-decoded). */
export function formMessage(html: string): string | null {
  const m = html.match(/<p class="notice error" role="alert" id="form-error">([\s\S]*?)<\/p>/);
  return m ? decode(m[1].replace(/<[^>]*>/g, "")) : null;
}

/** The text kept in the form's textarea (HTML-decoded). */
export function keptText(html: string): string | null {
  const m = html.match(/<textarea[^>]*>([^<]*)<\/textarea>/);
  return m ? decode(m[1]) : null;
}

/** Decodes the entities hono/jsx produces. */
export function decode(s: string): string {
  return s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}

/**
 * The comment tree of a page, from its `<li class="comment…" id="c-…">` and `</li>`
 * tags: comment id → parent comment id (null for a top-level item). Every text on the
 * page is escaped, so no `<li` can come from content.
 */
export function commentTree(html: string): Map<string, string | null> {
  const out = new Map<string, string | null>();
  const stack: Array<string | null> = [];
  for (const m of html.matchAll(/<li\b([^>]*)>|<\/li>/g)) {
    if (m[0] === "</li>") {
      stack.pop();
      continue;
    }
    const id = m[1].match(/\bid="c-([0-9a-f-]{36})"/)?.[1] ?? null;
    if (id) out.set(id, [...stack].reverse().find((x) => x !== null) ?? null);
    stack.push(id);
  }
  return out;
}

/** Every tag of a page with its attribute names (quoted values are skipped whole). */
export function tagsWithAttributes(html: string): Array<{ tag: string; attrs: string[] }> {
  const out: Array<{ tag: string; attrs: string[] }> = [];
  for (
    const m of html.matchAll(
      /<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s=>"'/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?)*)\s*\/?>/g,
    )
  ) {
    const attrs = [...m[2].matchAll(/\s+([^\s=>"'/]+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?/g)]
      .map((a) => a[1].toLowerCase());
    out.push({ tag: m[1].toLowerCase(), attrs });
  }
  return out;
}

/** The most a page's HTML document may weigh, uncompressed (docs/website.md). */
export const PAGE_BUDGET = 50 * 1024;
/** The same for a documentation page: a long reference read top to bottom or searched in. */
export const DOCS_PAGE_BUDGET = 64 * 1024;
