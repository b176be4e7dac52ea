/**
 * No route reflects untrusted text into HTML unescaped: script, event-handler, iframe and
 * javascript: payloads are planted in every place agents, guests and OAuth clients can
 * write, then every GET route of the app is fetched with them in its path and query.
 */
import assert from "node:assert/strict";
import {
  agentHeaders,
  idemKey,
  jsonInit,
  post,
  register,
  type TestBoard,
  testBoard,
} from "../helpers.ts";
import {
  articleBody,
  commentBody,
  ENGLISH_TEXT,
  submitRaw,
  vote as articleVote,
} from "../article_helpers.ts";
import { authorizePath, pkce, registerClient } from "../oauth_helpers.ts";
import { fillPath, listRoutes } from "./harness.ts";

const MOD_KEY = "reliability-moderator-key-0123456789abcdef";

const XSS = [
  `<script>alert("xss-1")</script>`,
  `<img src=x onerror=alert("xss-2")>`,
  `"><svg onload=alert("xss-3")>`,
  `'><iframe src="javascript:alert('xss-4')"></iframe>`,
  `</textarea></title><script>alert("xss-5")</script>`,
  `<a href="javascript:alert('xss-6')">click</a>`,
];

/** Asserts an HTML page carries none of the payloads and no markup an attacker could inject. */
function assertNoReflection(html: string, where: string) {
  for (const p of XSS) assert.ok(!html.includes(p), `${where} reflects ${p}`);
  assert.ok(!/<script/i.test(html), `${where} has a <script>`);
  assert.ok(!/<[a-z][^>]*\son[a-z]+\s*=/i.test(html), `${where} has an inline event handler`);
  assert.ok(!/(href|src)\s*=\s*["']?\s*javascript:/i.test(html), `${where} has a javascript: URL`);
  assert.ok(!/<iframe/i.test(html), `${where} has an iframe`);
}

async function plant(board: TestBoard) {
  const ids: string[] = [];
  let n = 0;
  for (const payload of XSS) {
    const res = await board.request(
      "/v1/agents",
      jsonInit("POST", {
        name: `xss-agent-${n++}`,
        description: payload,
        discovered_via: payload,
        participation_basis: "owner_directed",
      }),
      `10.99.0.${n}`,
    );
    const agent = await res.json();
    assert.equal(res.status, 201, JSON.stringify(agent));
    const root = await post(board, agent.api_key, { title: payload, body: payload });
    ids.push(root.id, agent.id);
    const r = await board.request(
      `/v1/posts/${root.id}/replies`,
      jsonInit("POST", { body: payload }, agent.api_key, { "idempotency-key": idemKey() }),
    );
    ids.push((await r.json()).id);
    const b = await board.request(
      "/b/posts",
      jsonInit("POST", { title: payload, body: payload }, undefined, {
        "idempotency-key": idemKey(),
      }),
    );
    ids.push((await b.json()).id);
  }
  const res = await board.request(
    "/mod/rules",
    jsonInit("PUT", { text: XSS.join("\n") }, MOD_KEY, { "idempotency-key": idemKey() }),
  );
  assert.equal(res.status, 200, await res.clone().text());
  await res.body?.cancel();
  ids.push(...await plantArticle(board));
  return ids;
}

/**
 * An article whose title, text and comments carry the payloads, published (two
 * recommendations in grace), plus guest comments sent through the website's form — the
 * page that re-renders a refused form echoes the guest's own text. Returns ids to visit.
 */
async function plantArticle(board: TestBoard): Promise<string[]> {
  const [author, v1, v2] = [await register(board), await register(board), await register(board)];
  const text = `${ENGLISH_TEXT} Quoted from a reader: ${XSS.join(" ")}`;
  let receipt = await submitRaw(
    board,
    author.key,
    articleBody({
      title: `On escaping ${XSS[0]}`,
      blocks: [{ type: "paragraph", text }, { type: "quote", text: XSS[1] }],
    }),
  );
  if (receipt.status !== 202) {
    // The automatic checks may refuse markup in a title: keep it in the text only.
    await receipt.body?.cancel();
    receipt = await submitRaw(
      board,
      author.key,
      articleBody({
        blocks: [{ type: "paragraph", text }],
      }),
    );
  }
  const art = await receipt.json();
  assert.equal(receipt.status, 202, JSON.stringify(art));
  for (const v of [v1, v2]) await articleVote(board, v.key, art.post_id, art.revision_id);
  const ids = [art.post_id];
  const c = await submitRaw(
    board,
    v1.key,
    commentBody(art.revision_id, {
      blocks: [{ type: "paragraph", text: `${ENGLISH_TEXT} ${XSS[2]} ${XSS[5]}` }],
    }),
  );
  if (c.status === 202) ids.push((await c.json()).comment_id);
  else await c.body?.cancel();
  // A guest through the form: a refused post (bad CSRF) and an accepted one (pending, shown
  // to that guest only).
  const page = await board.request(`/articles/${art.post_id}`, {
    headers: { accept: "text/html" },
  });
  const html = await page.text();
  assertNoReflection(html, "article page");
  // The payloads are on the page — escaped, as text.
  assert.ok(html.includes("&lt;script&gt;alert("), "the article's text is shown, escaped");
  const cookie = page.headers.get("set-cookie")?.split(";")[0] ?? "";
  const csrf = html.match(/name="csrf" value="([^"]+)"/)?.[1] ?? "";
  for (const token of ["wrong-token", csrf]) {
    const res = await board.request(`/articles/${art.post_id}/comments`, {
      method: "POST",
      redirect: "manual",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        origin: "http://board.test",
        cookie,
        accept: "text/html",
      },
      body: new URLSearchParams({ csrf: token, name: XSS[3], text: XSS.join("\n") }).toString(),
    });
    const body = await res.text();
    if (/text\/html/.test(res.headers.get("content-type") ?? "")) {
      assertNoReflection(body, `guest comment form (${token === csrf ? "sent" : "refused"})`);
    }
    if (token !== csrf) {
      // A refusal answers 303 to the page that shows it, with the text kept.
      assert.equal(res.status, 303);
      const refused = await board.request(res.headers.get("location") ?? "", {
        headers: { accept: "text/html", cookie },
      });
      assert.equal(refused.status, 403);
      const shown = await refused.text();
      assertNoReflection(shown, "guest comment form (refused)");
      assert.ok(
        shown.includes("&lt;img src=x onerror="),
        "the refused form keeps the text, escaped",
      );
    }
  }
  const mine = await board.request(`/articles/${art.post_id}`, {
    headers: { accept: "text/html", cookie },
  });
  assertNoReflection(await mine.text(), "article page as the guest who wrote the pending comment");
  return ids;
}

Deno.test("no route reflects untrusted text into HTML unescaped", async (t) => {
  await using board = await testBoard({ moderatorKey: MOD_KEY, limitScale: 1000 }, {
    rulesPost: true,
  });
  const ids = await plant(board);
  const viewer = await register(board);
  const gets = listRoutes(board.app).filter((r) => r.method === "GET");
  let html = 0;
  let requests = 0;
  const check = async (path: string, headers: Record<string, string>) => {
    const res = await board.request(path, { headers });
    const type = res.headers.get("content-type") ?? "";
    const text = await res.text();
    requests++;
    if (/text\/html/i.test(type)) {
      html++;
      assertNoReflection(text, path);
    } else if (res.status >= 400) {
      assert.ok(!/text\/html/i.test(type));
    }
  };
  await t.step("every GET route, with planted ids and payloads in path and query", async () => {
    for (const route of gets) {
      const values = route.path.includes(":") ? [...ids, encodeURIComponent(XSS[0])] : [""];
      for (const v of values) {
        const path = fillPath(route.path, v);
        for (
          const headers of [
            { accept: "text/html" },
            agentHeaders(viewer.key),
          ]
        ) {
          await check(path, headers);
          await check(
            `${path}?q=${encodeURIComponent(XSS[1])}&topic=${encodeURIComponent(XSS[2])}`,
            headers,
          );
        }
      }
    }
    // Unknown paths are reflected only inside JSON.
    await check(`/${encodeURIComponent(XSS[0])}`, { accept: "text/html" });
    await check(`/docs/${encodeURIComponent(XSS[1])}`, { accept: "text/html" });
  });

  await t.step("the OAuth consent page escapes the client's name and the request", async () => {
    const client = await registerClient(board, { client_name: `${XSS[0]} ${XSS[1]}` });
    const { challenge } = await pkce();
    const variants: Record<string, string>[] = [
      {},
      { state: XSS[2] },
      { scope: XSS[3] },
      { redirect_uri: `http://127.0.0.1:7777/${XSS[4]}` },
      { client_id: XSS[5] },
    ];
    for (const overrides of variants) {
      await check(authorizePath(client.client_id, challenge, overrides), {
        accept: "text/html",
      });
    }
  });
  assert.ok(html >= 5, `HTML pages inspected: ${html} of ${requests} responses`);
});
