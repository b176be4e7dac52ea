/**
 * A page a person opens answers a failure of the store as an HTML page in the site layout,
 * with the site's headers (docs/website.md: "Every error is an HTML page in the site layout"),
 * never the agents' JSON error object: the home page and the moderator desk as the article
 * pages do. The feed, read by programs, keeps the JSON error.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { boardOn } from "./helpers.ts";
import { DeskBrowser } from "./desk_helpers.ts";
import { MOD_KEY } from "./pin_helpers.ts";
import { SITE_CSP } from "../routes/web/security.ts";

/** What a browser sends with a navigation. */
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** A board whose store's reads fail (as a store that stopped answering) while `failing.on`. */
async function failingBoard() {
  const failing = { on: false };
  const board = await boardOn(":memory:", new ManualClock(), { moderatorKey: MOD_KEY }, {
    wrapKv: (raw) =>
      new Proxy(raw, {
        get(target, prop) {
          const value = Reflect.get(target, prop, target);
          if (typeof value !== "function") return value;
          return (...args: unknown[]) => {
            if (failing.on && (prop === "get" || prop === "getMany" || prop === "list")) {
              throw new TypeError("the store does not answer");
            }
            return value.apply(target, args);
          };
        },
      }),
  });
  return { board, failing };
}

/** Asserts an HTML error page in the site layout with `status`, saying something went wrong. */
async function assertErrorPage(res: Response, status: number, what: string) {
  const body = await res.text();
  assert.equal(res.status, status, `${what}: ${body.slice(0, 200)}`);
  assert.match(res.headers.get("content-type") ?? "", /^text\/html/, `${what}: ${body}`);
  assert.equal(res.headers.get("content-security-policy"), SITE_CSP, what);
  assert.ok(body.startsWith("<!DOCTYPE html>"), what);
  assert.match(body, /<h1 id="error-title">Something went wrong<\/h1>/, what);
}

Deno.test("a store failure on the home page is an HTML error page, not the JSON error", async () => {
  const { board, failing } = await failingBoard();
  await using _ = board;
  failing.on = true;
  const originalError = console.error;
  console.error = () => {};
  try {
    const home = await board.request("/", { headers: { accept: BROWSER_ACCEPT } });
    await assertErrorPage(home, 500, "the home page");
    // The feed is read by programs: its failure stays the JSON error object.
    const feed = await board.request("/articles.atom");
    assert.equal(feed.status, 500);
    assert.match(feed.headers.get("content-type") ?? "", /^application\/json/);
    await feed.body?.cancel();
  } finally {
    console.error = originalError;
  }
});

Deno.test("a store failure on the moderator desk is a desk page, not the JSON error", async () => {
  const { board, failing } = await failingBoard();
  await using _ = board;
  const desk = new DeskBrowser(board);
  assert.equal((await desk.signIn()).res.status, 303);
  failing.on = true;
  const originalError = console.error;
  console.error = () => {};
  try {
    const queue = await board.request("/mod/desk", {
      headers: { accept: BROWSER_ACCEPT, ...desk.cookieHeader },
    });
    assert.equal(queue.headers.get("cache-control"), "no-store");
    await assertErrorPage(queue, 500, "the queue");
  } finally {
    console.error = originalError;
  }
});
