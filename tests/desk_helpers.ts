/** Helpers for the moderator desk tests: a cookie-keeping moderator's browser, HTML probes. */
import assert from "node:assert/strict";
import { freshNetwork, type TestBoard } from "./helpers.ts";
import { MOD_KEY } from "./pin_helpers.ts";
import { publishedArticle } from "./website_helpers.ts";
import { Guest } from "./website_helpers.ts";

/** A browser on the desk: keeps its cookies (by name), reads each page's form tokens. */
export class DeskBrowser {
  cookies = new Map<string, string>();
  csrf: string | null = null;
  idem: string[] = [];
  constructor(
    readonly board: TestBoard,
    readonly network = freshNetwork(),
    readonly headers: Record<string, string> = {},
  ) {}

  #keep(res: Response) {
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(";");
      const [name, ...rest] = pair.split("=");
      const value = rest.join("=");
      if (value && !/Max-Age=0/i.test(set)) this.cookies.set(name, value);
      else this.cookies.delete(name);
    }
  }

  get cookieHeader(): Record<string, string> {
    return this.cookies.size
      ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ") }
      : {};
  }

  #read(html: string) {
    const token = html.match(/name="csrf" value="([^"]+)"/)?.[1];
    if (token) this.csrf = token;
    this.idem = [...html.matchAll(/name="idempotency_key" value="([^"]+)"/g)].map((m) => m[1]);
  }

  /** GETs a desk page (no redirects followed). */
  async get(path: string): Promise<{ res: Response; html: string }> {
    const res = await this.board.request(path, {
      headers: { accept: "text/html", ...this.headers, ...this.cookieHeader },
      redirect: "manual",
    }, this.network);
    this.#keep(res);
    const html = await res.text();
    this.#read(html);
    return { res, html };
  }

  /** POSTs a form; the page's token is added unless `fields.csrf` is given (null: left out). */
  async post(
    path: string,
    fields: Record<string, string | null>,
    headers: Record<string, string> = {},
  ): Promise<{ res: Response; html: string }> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries({ csrf: this.csrf, ...fields })) {
      if (v !== null) body.set(k, v);
    }
    const res = await this.board.request(path, {
      method: "POST",
      headers: {
        accept: "text/html",
        "content-type": "application/x-www-form-urlencoded",
        ...this.headers,
        ...this.cookieHeader,
        ...headers,
      },
      body: body.toString(),
      redirect: "manual",
    }, this.network);
    this.#keep(res);
    const html = await res.text();
    this.#read(html);
    return { res, html };
  }

  /** Opens the sign-in form and signs in with `key`; returns the answer to the post. */
  async signIn(key = MOD_KEY): Promise<{ res: Response; html: string }> {
    await this.get("/mod/desk/sign-in");
    return await this.post("/mod/desk/sign-in", { key });
  }
}

/** An article with a held guest comment (it has a link; `name`: its guest's); returns their ids. */
export async function heldComment(board: TestBoard, text?: string, name?: string) {
  const a = await publishedArticle(board);
  const comment = await new Guest(board).comment(
    a.id,
    text ?? `Further reading at https://example.com/${crypto.randomUUID()} for anyone curious.`,
    name === undefined ? {} : { name },
  );
  return { article: a, comment };
}

/** The message of a page's alert, tags left out. */
export function alertText(html: string): string | null {
  const m = html.match(/role="alert"[^>]*>([\s\S]*?)<\/p>/);
  return m ? m[1].replace(/<[^>]+>/g, "").trim() : null;
}

/** Asserts a 303 to `location` (a prefix match when it ends with `*`). */
export function assertRedirect(res: Response, location: string) {
  assert.equal(res.status, 303);
  const got = res.headers.get("location") ?? "";
  if (location.endsWith("*")) assert.ok(got.startsWith(location.slice(0, -1)), got);
  else assert.equal(got, location);
}
