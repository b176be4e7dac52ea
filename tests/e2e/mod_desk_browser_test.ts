/**
 * The moderator desk end to end: the real service (main.ts, a child process with the test
 * clock on) and Debian Chromium. A moderator signs in (after a wrong key), approves one held
 * guest comment and rejects another, grants an article appeal, removes an account through
 * its confirmation step and reads the audit entries; a form on another site posting to the
 * desk is refused; after the service clock moves past the session's 30 minutes, the desk
 * asks for the key again and a stale form changes nothing.
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { agentHeaders, freshNetwork, idemKey, register, type TestBoard } from "../helpers.ts";
import { authorAction, submit } from "../article_helpers.ts";
import { MOD_KEY, modRequest } from "../pin_helpers.ts";
import { Guest, publishedArticle } from "../website_helpers.ts";
import { focusedId, launchBrowser, skipBrowserTests } from "./browser.ts";
import { startServer } from "./server_process.ts";

/**
 * The test helpers' board interface over real HTTP: `network` becomes an `X-Forwarded-For`
 * hop (the server runs with BOARD_TRUST_PROXY=1), so each helper agent has its own network.
 */
function overHttp(url: string): TestBoard {
  const request = (path: string, init: RequestInit = {}, network?: string) => {
    const headers = new Headers(init.headers);
    if (network) headers.set("x-forwarded-for", network);
    return fetch(`${url}${path}`, { ...init, headers });
  };
  return { request } as unknown as TestBoard;
}

async function modJson(board: TestBoard, method: string, path: string, body?: unknown) {
  const res = await modRequest(board, method, path, body, method === "GET" ? undefined : idemKey());
  const json = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  return json;
}

async function pendingIds(board: TestBoard): Promise<string[]> {
  return (await modJson(board, "GET", "/mod/comments/pending")).items.map((c: { id: string }) =>
    c.id
  );
}

/** The decision form of one queue item (held comment id, or article id for an appeal). */
function decisionForm(page: Page, id: string) {
  return page.locator(`form:has(#reason-${id})`);
}

async function decide(page: Page, id: string, button: string, reason: string) {
  await page.locator(`#reason-${id}`).fill(reason);
  await Promise.all([
    page.waitForURL(/\/mod\/desk/),
    decisionForm(page, id).getByRole("button", { name: button }).click(),
  ]);
}

Deno.test({
  name: "moderator desk in Chromium: sign-in, decisions, appeal, removal, audit; refusals",
  ignore: skipBrowserTests(),
  fn: async (t) => {
    const dir = await Deno.makeTempDir();
    await using server = await startServer(`${dir}/board.kv`, {
      BOARD_MODERATOR_KEY: MOD_KEY,
      BOARD_TEST_CLOCK: "1",
      BOARD_TRUST_PROXY: "1",
    });
    const board = overHttp(server.url);

    // A published article with three held guest comments (each has a link).
    const article = await publishedArticle(board);
    const held: string[] = [];
    for (const topic of ["polling", "backoff", "etags"]) {
      held.push(
        await new Guest(board, freshNetwork()).comment(
          article.id,
          `More on ${topic} at https://example.com/${topic} for anyone curious.`,
        ),
      );
    }
    // An article rejected by a moderator whose author appealed.
    const appealed = await submit(board, article.author.key, {
      title: "A rejected article its author appealed",
    });
    await modJson(board, "POST", `/mod/articles/${appealed.post_id}/decision`, {
      action: "reject",
      reason: "Looks off topic",
    });
    const appeal = await authorAction(
      board,
      article.author.key,
      `/v1/articles/posts/${appealed.post_id}/appeal`,
      { revision_id: appealed.revision_id, reason: "It is about the board's own article flow." },
    );
    assert.equal(appeal.status, 200, await appeal.text());
    const doomed = await register(board, "e2e-spam-source");

    // A page on another site (localhost is another site than 127.0.0.1) with a form aimed at
    // the desk: the moderator is tricked into pressing its button.
    let crossSiteFields = "";
    const attacker = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () =>
        new Response(
          `<!doctype html><title>Win a prize</title><form method="post" action="${server.url}/mod/desk">${crossSiteFields}<button>Claim</button></form>`,
          { headers: { "content-type": "text/html; charset=utf-8" } },
        ),
    );

    let browser: Browser | null = null;
    try {
      browser = await launchBrowser();
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);

      await t.step("without a session the desk asks for the key", async () => {
        await page.goto(`${server.url}/mod/desk`);
        assert.equal(new URL(page.url()).pathname, "/mod/desk/sign-in");
        assert.equal(await page.title(), "Sign in · Moderator desk · Posting Board");
      });

      await t.step("a wrong key: refused at the field, focused, not kept", async () => {
        await page.getByLabel("Moderator key").fill("a-wrong-key-that-is-long-enough-000000");
        const [res] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === "POST"),
          page.getByRole("button", { name: "Sign in" }).click(),
        ]);
        assert.equal(res.status(), 401, await res.text());
        await page.waitForLoadState("load");
        assert.match(await page.getByRole("alert").innerText(), /not the moderator key/);
        const field = page.getByLabel("Moderator key");
        assert.equal(await field.getAttribute("aria-invalid"), "true");
        assert.equal(await field.inputValue(), "");
        assert.equal(await focusedId(page, "mod-key"), "mod-key");
      });

      await t.step(
        "the right key: the queue; the browser holds only an HttpOnly cookie",
        async () => {
          await page.getByLabel("Moderator key").fill(MOD_KEY);
          await Promise.all([
            page.waitForURL(`${server.url}/mod/desk`),
            page.getByRole("button", { name: "Sign in" }).click(),
          ]);
          assert.equal(
            await page.getByRole("heading", { level: 1 }).innerText(),
            "Moderation queue",
          );
          const cookies = await context.cookies();
          const session = cookies.find((c) => c.name === "board_mod");
          assert.ok(session, JSON.stringify(cookies));
          assert.equal(session.httpOnly, true);
          assert.equal(session.sameSite, "Strict");
          assert.ok(
            session.expires > Date.now() / 1000 && session.expires < Date.now() / 1000 + 1801,
          );
          for (const c of cookies) assert.ok(!c.value.includes(MOD_KEY), c.name);
          assert.equal(await page.evaluate("document.cookie"), "");
          assert.ok(!(await page.content()).includes(MOD_KEY));
          for (const id of held) assert.equal(await page.locator(`#reason-${id}`).count(), 1);
        },
      );

      await t.step("Enter in a reason field decides nothing: a decision is a button", async () => {
        const field = page.locator(`#reason-${held[0]}`);
        await field.fill("Spam, reject it");
        // Implicit submission would press the form's first button, Approve, at once.
        const posted = page.waitForRequest((r) => r.method() === "POST", { timeout: 1_000 })
          .then(() => true, () => false);
        await field.press("Enter");
        assert.equal(await posted, false, "Enter sent the decision form");
        assert.equal(page.url(), `${server.url}/mod/desk`);
        assert.deepEqual(await pendingIds(board), held);
      });

      await t.step("approve one held comment and reject another", async () => {
        await decide(page, held[0], "Approve", "A helpful link");
        assert.match(page.url(), /\/mod\/desk\?done=\d+$/);
        assert.match(
          await page.getByRole("status").innerText(),
          /Done \(#\d+ in the audit trail\): The comment was approved\./,
        );
        await decide(page, held[1], "Reject", "Link farm");
        assert.match(
          await page.getByRole("status").innerText(),
          /Done \(#\d+ in the audit trail\): The comment was rejected\./,
        );
        assert.deepEqual(await pendingIds(board), [held[2]]);
        const publicPage = await (await fetch(`${server.url}/articles/${article.id}`)).text();
        assert.ok(publicPage.includes(`id="c-${held[0]}"`), "the approved comment is public");
        assert.ok(!publicPage.includes(`id="c-${held[1]}"`), "the rejected comment is not");
      });

      await t.step("decide an article review: grant the open appeal", async () => {
        assert.equal(
          await page.getByRole("heading", { name: "A rejected article its author appealed" })
            .count(),
          1,
        );
        await decide(page, appealed.post_id, "Grant (restore)", "On topic after all");
        assert.match(
          await page.getByRole("status").innerText(),
          /The appeal was granted: the article was restored\./,
        );
        const appeals = await modJson(board, "GET", "/mod/articles/appeals");
        assert.deepEqual(appeals.items, []);
      });

      await t.step("remove an account through its confirmation step", async () => {
        await page.getByRole("link", { name: "Remove an account" }).click();
        await page.getByLabel("Account name or id").fill(doomed.name);
        await page.getByRole("button", { name: "Find the account" }).click();
        assert.equal(
          await page.getByRole("heading", { level: 2 }).innerText(),
          `Confirm: remove ${doomed.name}?`,
        );
        await page.getByLabel("Type the account's name to confirm").fill("e2e-spam");
        const [refused] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === "POST"),
          page.getByRole("button", { name: `Remove ${doomed.name}` }).click(),
        ]);
        assert.equal(refused.status(), 400);
        await page.waitForLoadState("load");
        const me = await board.request("/v1/me", { headers: agentHeaders(doomed.key) });
        assert.equal(me.status, 200, "still there after a wrong confirmation");
        await me.body?.cancel();
        await page.getByLabel("Type the account's name to confirm").fill(doomed.name);
        await Promise.all([
          page.waitForURL(/\/mod\/desk\/audit\?done=\d+$/),
          page.getByRole("button", { name: `Remove ${doomed.name}` }).click(),
        ]);
        const gone = await board.request("/v1/me", { headers: agentHeaders(doomed.key) });
        assert.ok([401, 403].includes(gone.status), `removed: ${gone.status}`);
        await gone.body?.cancel();
      });

      await t.step("the audit trail shows every action, newest first", async () => {
        const rows = await page.locator("tbody tr td:nth-child(3)").allInnerTexts();
        assert.deepEqual(rows.slice(0, 5), [
          "remove_agent",
          "article_decision",
          "comment_decision",
          "comment_decision",
          "article_decision",
        ]);
        const json = await modJson(board, "GET", "/mod/audit?limit=5");
        assert.deepEqual(json.items.map((r: { action: string }) => r.action), rows.slice(0, 5));
      });

      await t.step("a form on another site posting to the desk is refused", async () => {
        await page.goto(`${server.url}/mod/desk`);
        const csrf = await page.locator(`form:has(#reason-${held[2]}) input[name=csrf]`)
          .getAttribute("value");
        // Even with the page's own token (as if it had leaked), the post is refused.
        crossSiteFields = Object.entries({
          csrf: csrf ?? "",
          idempotency_key: `cross-site-${crypto.randomUUID()}`,
          target: "comment",
          id: held[2],
          decision: "approve",
          reason: "forged",
        }).map(([k, v]) => `<input type="hidden" name="${k}" value="${v}">`).join("");
        const before = (await modJson(board, "GET", "/mod/audit")).items.length;
        await page.goto(`http://localhost:${attacker.addr.port}/`);
        const [res] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === "POST"),
          page.getByRole("button", { name: "Claim" }).click(),
        ]);
        assert.equal(res.status(), 403);
        assert.deepEqual(await pendingIds(board), [held[2]]);
        assert.equal((await modJson(board, "GET", "/mod/audit")).items.length, before);
      });

      await t.step(
        "an expired session: the desk asks for the key; a stale form does nothing",
        async () => {
          await page.goto(`${server.url}/mod/desk`);
          await page.locator(`#reason-${held[2]}`).fill("Approved too late");
          await modJson(board, "POST", "/mod/clock", { advance_seconds: 30 * 60 + 1 });
          await Promise.all([
            page.waitForURL(/\/mod\/desk\/sign-in\?ended=action$/),
            decisionForm(page, held[2]).getByRole("button", { name: "Approve" }).click(),
          ]);
          assert.match(
            await page.getByRole("alert").innerText(),
            /session had ended .* the action you sent was not carried out/,
          );
          assert.deepEqual(await pendingIds(board), [held[2]]);
          await page.goto(`${server.url}/mod/desk`);
          assert.equal(new URL(page.url()).pathname, "/mod/desk/sign-in");
        },
      );
      await context.close();
    } finally {
      await browser?.close();
      await attacker.shutdown();
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
