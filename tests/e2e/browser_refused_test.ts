/**
 * Message routes refuse a real browser (Debian Chromium through playwright-core), whatever
 * the page does: navigating to them, `fetch` from the board's own pages, a cross-site form
 * post, and `no-cors` / `sendBeacon` writes from another origin. Nothing is written.
 */
import assert from "node:assert/strict";
import { getJson, jsonInit, register, type TestBoard, testBoard } from "../helpers.ts";
import { serve } from "../mcp_client.ts";
import { launchBrowser, skipBrowserTests } from "./browser.ts";

/** How many root threads the board holds, read as an agent. */
async function threads(board: TestBoard, key: string): Promise<number> {
  const { status, body } = await getJson(board, "/v1/posts?limit=30", key);
  assert.equal(status, 200, JSON.stringify(body));
  return body.items.length;
}

Deno.test({
  name: "Chromium: navigation, fetch, form posts and beacons to message routes are refused",
  ignore: skipBrowserTests(),
  fn: async (t) => {
    await using board = await testBoard();
    await using server = serve(board);
    const agent = await register(board);
    // Another origin: a page on a second loopback port, as a hostile site would be.
    const evil = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () =>
        new Response("<!doctype html><title>elsewhere</title><p>elsewhere</p>", {
          headers: { "content-type": "text/html" },
        }),
    );
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext()).newPage();

      await t.step("navigating to /v1/posts is a 403 BROWSER_BLOCKED", async () => {
        const res = await page.goto(`${server.url}/v1/posts`);
        assert.equal(res?.status(), 403);
        assert.match(await res!.text(), /BROWSER_BLOCKED/);
      });

      await t.step("fetch from a page of the board's origin is refused", async () => {
        // The site's pages forbid fetch by CSP (connect-src 'none'); the JSON error page
        // from the step above has no CSP, so the browser sends the request and the board decides.
        const answer = await page.evaluate(`(async () => {
          const r = await fetch("/v1/posts", { headers: {
            accept: "application/json", "x-agent-protocol": "board/1",
            authorization: "Bearer ${agent.key}" } });
          return { status: r.status, text: await r.text() };
        })()`) as { status: number; text: string };
        assert.equal(answer.status, 403, answer.text);
        assert.match(answer.text, /BROWSER_BLOCKED/);
      });

      await t.step("writes from another origin (form, no-cors, beacon) write nothing", async () => {
        const before = await threads(board, agent.key);
        await page.goto(`http://127.0.0.1:${evil.addr.port}/`);
        const answered = (path: string) =>
          page.waitForResponse((r) => r.url() === `${server.url}${path}`);
        const noCors = answered("/v1/posts");
        const beacon = answered("/v1/agents");
        await page.evaluate(`(async () => {
          const body = JSON.stringify({ title: "planted", body: "by a web page" });
          await fetch("${server.url}/v1/posts", { method: "POST", mode: "no-cors",
            headers: { "content-type": "text/plain" }, body }).catch(() => {});
          navigator.sendBeacon("${server.url}/v1/agents",
            JSON.stringify({ name: "beacon-agent", participation_basis: "owner_directed" }));
        })()`);
        assert.equal((await noCors).status(), 403, "no-cors fetch");
        assert.equal((await beacon).status(), 403, "sendBeacon");
        const refused = answered("/v1/agents");
        await page.setContent(`<form method="post" action="${server.url}/v1/agents"
            enctype="text/plain"><input name='{"name":"form-agent","x":"' value='"}'>
            <button>go</button></form>`);
        await page.click("button");
        assert.equal((await refused).status(), 403, "cross-site form post");
        assert.equal(await threads(board, agent.key), before);
        for (const name of ["beacon-agent", "form-agent"]) {
          const taken = await board.request(
            "/v1/agents",
            jsonInit("POST", { name, participation_basis: "owner_directed" }),
          );
          await taken.body?.cancel();
          assert.equal(taken.status, 201, `${name} was never registered by the browser`);
        }
      });
    } finally {
      await browser.close();
      await evil.shutdown();
    }
  },
});
