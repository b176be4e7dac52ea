/**
 * A page on another site, opened in Chromium, must not spend the allowances of its
 * visitor's network: `<img>` loads of article pages start no guest session (only a
 * top-level navigation does), and `/mcp` calls it makes with junk or guessed tokens
 * never touch what the visitor's own agents on the same network use.
 * BOARD_LIMIT_SCALE=0.05: 5 guest sessions an hour per network, 15 credential calls and
 * 2 failed lookups a minute per network.
 */
import assert from "node:assert/strict";
import type { Browser } from "playwright-core";
import { publishedArticle } from "../website_helpers.ts";
import { type TestBoard, testBoard } from "../helpers.ts";
import { register } from "../helpers.ts";
import { serve } from "../mcp_client.ts";
import { launchBrowser, skipBrowserTests } from "./browser.ts";

/** Serves one HTML page on `http://localhost:<port>/` (another site than 127.0.0.1). */
function otherSite(html: string): Deno.HttpServer<Deno.NetAddr> & { url: string } {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } }),
  );
  return Object.assign(server, { url: `http://localhost:${server.addr.port}/` });
}

/** Guest sessions stored in KV (a session is stored only when it posts a comment). */
async function sessionsStored(board: TestBoard): Promise<number> {
  let n = 0;
  for await (const _ of board.kv.list({ prefix: ["guest_sessions"] })) n++;
  return n;
}

/** A token of the access token's exact shape that was never issued. */
function guessedToken(i: number): string {
  return "pb_at_" + String(i).padStart(43, "A");
}

Deno.test({
  name: "cross-site page in Chromium: <img> loads start no guest session; a navigation does",
  ignore: skipBrowserTests(),
  fn: async () => {
    await using board = await testBoard({ limitScale: 0.05 });
    const a = await publishedArticle(board);
    const hits: string[] = [];
    /** The fetch destination of each answer that set a cookie. */
    const cookiesSet: string[] = [];
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (req, info) => {
        hits.push(`${req.headers.get("sec-fetch-dest")} ${new URL(req.url).pathname}`);
        const res = await board.app.fetch(req, info);
        if (res.headers.get("set-cookie")) cookiesSet.push(`${req.headers.get("sec-fetch-dest")}`);
        return res;
      },
    );
    const target = `http://127.0.0.1:${server.addr.port}/articles/${a.id}`;
    const imgs = Array.from({ length: 10 }, (_, i) => `<img src="${target}?i=${i}" alt="">`);
    const attacker = otherSite(`<!doctype html><title>Another site</title>${imgs.join("")}`);
    let browser: Browser | null = null;
    try {
      browser = await launchBrowser();
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      await page.goto(attacker.url, { waitUntil: "load" });
      const imageLoads = hits.filter((h) => h === `image /articles/${a.id}`);
      assert.equal(imageLoads.length, 10, `every <img> reached the board: ${hits.join(", ")}`);
      assert.deepEqual(cookiesSet, [], "an <img> load starts no session");

      // The visitor then opens the article: a session starts (a cookie, nothing stored).
      await page.goto(target, { waitUntil: "load" });
      assert.equal(await page.locator('form input[name="csrf"]').count(), 1);
      assert.deepEqual(cookiesSet, ["document"]);
      assert.equal(await sessionsStored(board), 0);
      const cookies = await ctx.cookies(target);
      assert.ok(cookies.some((c) => c.name === "board_guest"));
      await ctx.close();
    } finally {
      await browser?.close();
      await attacker.shutdown();
      await server.shutdown();
    }
  },
});

Deno.test({
  name:
    "cross-site page in Chromium: a guest comment form it submits is refused, the visitor's session and held comment untouched",
  ignore: skipBrowserTests(),
  fn: async () => {
    await using board = await testBoard();
    const a = await publishedArticle(board);
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (req, info) => board.app.fetch(req, info),
    );
    const articleUrl = `http://127.0.0.1:${server.addr.port}/articles/${a.id}`;
    const planted = "Planted by another site's page";
    // The other site's page posts the article's comment form on load, with a text of its own.
    const attacker = otherSite(`<!doctype html><title>Another site</title>
      <form method="post" action="${articleUrl}/comments">
        <input name="name" value="Visitor"><textarea name="text">${planted}</textarea>
      </form><script>document.forms[0].submit()</script>`);
    let browser: Browser | null = null;
    try {
      browser = await launchBrowser();
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      // The visitor comments first: a link makes the comment wait for a moderator, shown to
      // its own session only.
      await page.goto(articleUrl, { waitUntil: "load" });
      const own = "My own words, with a link: https://example.org/notes";
      await page.getByLabel("Your comment").fill(own);
      await page.getByRole("button", { name: /^Post/ }).click();
      await page.waitForURL(/posted=/);
      assert.ok((await page.content()).includes("My own words"), "the held comment is shown");
      const cookieOf = async () =>
        (await ctx.cookies(articleUrl)).find((c) => c.name === "board_guest")?.value;
      const cookie = await cookieOf();
      assert.ok(cookie, "a guest session");
      const sessions = await sessionsStored(board);

      const answer = page.waitForResponse((r) => r.url().endsWith("/comments"));
      await page.goto(attacker.url);
      const res = await answer;
      await page.waitForLoadState("load");
      assert.equal(res.status(), 403);
      const text = await page.locator("main").innerText();
      assert.match(text, /sent from another site/);
      assert.ok(!(await page.content()).includes(planted), "the planted text is not offered");
      assert.equal(await page.locator('input[name="csrf"]').count(), 0, "no form to send");
      assert.equal(await cookieOf(), cookie, "the visitor's guest cookie is unchanged");
      assert.equal(await sessionsStored(board), sessions, "no session started");

      await page.goto(articleUrl, { waitUntil: "load" });
      assert.ok((await page.content()).includes("My own words"), "still shown to its session");
      await ctx.close();
    } finally {
      await browser?.close();
      await attacker.shutdown();
      await server.shutdown();
    }
  },
});

Deno.test({
  name: "cross-site page in Chromium: its /mcp calls never spend the network's own allowances",
  ignore: skipBrowserTests(),
  fn: async () => {
    await using board = await testBoard({ limitScale: 0.05 });
    const agent = await register(board);
    const server = serve(board);
    const script = `
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
      const tokens = [];
      for (let i = 0; i < 20; i++) tokens.push(${
      JSON.stringify(guessedToken(0))
    }.slice(0, -3) + String(i).padStart(3, "0"));
      for (let i = 0; i < 20; i++) tokens.push("junk-" + i);
      window.statuses = [];
      window.done = (async () => {
        for (const t of tokens) {
          const r = await fetch(${JSON.stringify(`${server.url}/mcp`)}, {
            method: "POST",
            headers: {
              authorization: "Bearer " + t,
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
            },
            body,
          });
          window.statuses.push(r.status);
        }
      })();`;
    const attacker = otherSite(
      `<!doctype html><title>Another site</title><script>${script}</script>`,
    );
    let browser: Browser | null = null;
    try {
      browser = await launchBrowser();
      const page = await browser.newPage();
      await page.goto(attacker.url, { waitUntil: "load" });
      await page.waitForFunction("window.done && window.statuses.length === 40", null, {
        timeout: 20_000,
      });
      const statuses = await page.evaluate("window.statuses") as number[];
      // Every call reached the board: refused as bad credentials or, later, as rate limited.
      assert.ok(statuses.every((s) => s === 401 || s === 429), JSON.stringify(statuses));
      assert.ok(statuses.includes(429), "the cross-site allowance itself is limited");

      // A non-browser agent on the same network, with a key this instance never validated.
      const res = await fetch(`${server.url}/v1/me`, {
        headers: {
          authorization: `Bearer ${agent.key}`,
          accept: "application/json",
          "x-agent-protocol": "board/1",
        },
      });
      assert.equal(res.status, 200, await res.clone().text());
      await res.body?.cancel();
    } finally {
      await browser?.close();
      await attacker.shutdown();
      await server.shutdown();
    }
  },
});

Deno.test({
  name:
    "cross-site page in Chromium: writes, client registrations and batch extras it causes never spend the visitor network's own",
  ignore: skipBrowserTests(),
  fn: async () => {
    await using board = await testBoard();
    const [attackerAgent, visitorAgent] = [await register(board), await register(board)];
    const server = serve(board);
    const mcp = `${server.url}/mcp`;
    // The attacker's page uses its own valid key: 30 create_post calls (the network's writes
    // per minute), 10 client registrations (the network's registrations per minute), and
    // four batches of 100 messages (more than the network's 300 calls a minute).
    const script = `
      const key = ${JSON.stringify(attackerAgent.key)};
      const headers = {
        authorization: "Bearer " + key,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      };
      const call = (body) => fetch(${JSON.stringify(mcp)}, {
        method: "POST", headers, body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, text: await r.text() }));
      window.results = { posts: [], registrations: [], batches: [], junk: [] };
      window.done = (async () => {
        for (let i = 0; i < 30; i++) {
          const r = await call({ jsonrpc: "2.0", id: i, method: "tools/call", params: {
            name: "create_post",
            arguments: { title: "From another site " + i, body: "b", request_id: "cross-site-post-" + String(i).padStart(8, "0") },
          } });
          window.results.posts.push(r.status === 200 && !JSON.parse(r.text).result.isError);
        }
        for (let i = 0; i < 10; i++) {
          const r = await fetch(${JSON.stringify(`${server.url}/oauth/register`)}, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ client_name: "Page client", redirect_uris: ["https://elsewhere.example/cb"] }),
          });
          window.results.registrations.push(r.status);
        }
        const batch = (from) => Array.from({ length: 100 }, (_, i) =>
          ({ jsonrpc: "2.0", id: from + i, method: "tools/list" }));
        for (let b = 0; b < 4; b++) window.results.batches.push((await call(batch(b * 100))).status);
        for (let b = 0; b < 4; b++) {
          const r = await fetch(${JSON.stringify(mcp)}, {
            method: "POST",
            headers: { ...headers, authorization: "Bearer junk-token-" + b },
            body: JSON.stringify(batch(b * 100)),
          });
          window.results.junk.push(r.status);
        }
      })();`;
    const attacker = otherSite(
      `<!doctype html><title>Another site</title><script>${script}</script>`,
    );
    let browser: Browser | null = null;
    try {
      browser = await launchBrowser();
      const page = await browser.newPage();
      await page.goto(attacker.url, { waitUntil: "load" });
      await page.waitForFunction("window.done && window.results.junk.length === 4", null, {
        timeout: 60_000,
      });
      const results = await page.evaluate("window.results") as {
        posts: boolean[];
        registrations: number[];
        batches: number[];
        junk: number[];
      };
      // The visitor's own agent on the same network (a non-browser client) is untouched.
      const agentHeaders = {
        authorization: `Bearer ${visitorAgent.key}`,
        accept: "application/json",
        "x-agent-protocol": "board/1",
      };
      const own = await fetch(`${server.url}/v1/posts`, {
        method: "POST",
        headers: {
          ...agentHeaders,
          "content-type": "application/json",
          "idempotency-key": "visitor-own-post-0001",
        },
        body: JSON.stringify({ title: "My own post", body: "b" }),
      });
      assert.equal(own.status, 201, await own.clone().text());
      await own.body?.cancel();
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`${server.url}/v1/me`, { headers: agentHeaders });
        assert.equal(res.status, 200, `own call ${i + 1}: ${await res.clone().text()}`);
        await res.body?.cancel();
      }
      const reg = await fetch(`${server.url}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_name: "My client",
          redirect_uris: ["http://127.0.0.1:9/cb"],
        }),
      });
      assert.equal(reg.status, 201, await reg.clone().text());
      await reg.body?.cancel();
      // The page's own calls: through, then limited in its own allowance.
      assert.deepEqual(results.posts, Array(30).fill(true), "the page's 30 posts went through");
      assert.deepEqual(results.registrations, Array(10).fill(201));
      // 30 calls and two batches of 100 fit the cross-origin 300 a minute; then nothing does.
      assert.deepEqual(results.batches, [200, 200, 429, 429], "its own allowance is limited");
      assert.deepEqual(results.junk, [401, 401, 401, 401]);
    } finally {
      await browser?.close();
      await attacker.shutdown();
      await server.shutdown();
    }
  },
});
