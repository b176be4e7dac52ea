/**
 * The browser rule against the header sets real clients send (captured by
 * tests/client_headers/capture.ts): every agent HTTP client is admitted on /v1, every
 * Chromium request — navigation, fetch, form posts, no-cors, sendBeacon, images — is
 * 403 BROWSER_BLOCKED and writes nothing, even where Chromium leaves out Sec-Fetch-*.
 */
import assert from "node:assert/strict";
import { namesJson, ranksHtmlFirst } from "../routes/accept.ts";
import { browserSignal } from "../routes/guards.ts";
import { loadFixtures, replayInit } from "./client_headers/fixtures.ts";
import { agentHeaders, assertError, idemKey, register, testBoard } from "./helpers.ts";

const fixtures = loadFixtures();
const chromium = fixtures.get("chromium.json")!;
const agents = [...fixtures.entries()].filter(([file]) => file !== "chromium.json");

Deno.test("client headers: the fixtures cover the agent clients and Chromium's ways in", () => {
  for (
    const file of [
      "node_fetch.json",
      "deno_fetch.json",
      "python_urllib.json",
      "python_requests.json",
      "python_httpx.json",
      "python_aiohttp.json",
      "curl.json",
      "go_net_http.json",
      "bun_fetch.json",
    ]
  ) {
    assert.ok(fixtures.has(file), file);
  }
  for (const file of ["node_fetch.json", "deno_fetch.json", "python_urllib.json", "curl.json"]) {
    assert.equal(fixtures.get(file)!.source, "captured", file);
  }
  const labels = chromium.requests.map((r) => r.label).join("\n");
  for (
    const way of ["navigation", "fetch POST, same origin", "cross-site", "form post", "no-cors"]
  ) {
    assert.match(labels, new RegExp(way), way);
  }
  assert.match(labels, /sendBeacon/);
  // Node's fetch sends sec-fetch-mode on every request: the case the rule must admit.
  const node = fixtures.get("node_fetch.json")!.requests[0].headers;
  assert.ok(node.some(([k, v]) => k.toLowerCase() === "sec-fetch-mode" && v === "cors"));
});

Deno.test("client headers: every agent HTTP client reads and writes on /v1", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  for (const [file, fixture] of agents) {
    for (const req of fixture.requests) {
      await t.step(`${fixture.client} (${fixture.source}): ${req.label}`, async () => {
        assert.equal(browserSignal(new Headers(req.headers)), null, file);
        const res = await board.request(
          req.path,
          replayInit(req, { key: a.key, idempotencyKey: idemKey() }),
        );
        const text = await res.text();
        assert.equal(res.status, req.method === "POST" ? 201 : 200, `${file}: ${text}`);
      });
    }
  }
});

Deno.test("client headers: every Chromium request is refused and writes nothing", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const feed = async () =>
    await (await board.request(
      "/v1/posts",
      replayInit(
        agents[0][1].requests[0],
        { key: a.key, idempotencyKey: idemKey() },
      ),
    )).text();
  const before = await feed();
  const sec = (name: string) => name.startsWith("sec-fetch-");
  for (const req of chromium.requests) {
    await t.step(req.label, async () => {
      for (const drop of [() => false, sec]) {
        // Without Sec-Fetch-* too: Chromium omits them towards plain-http remote hosts.
        const res = await board.request(
          req.path,
          replayInit(req, { key: a.key, idempotencyKey: idemKey() }, drop),
        );
        const body = await res.json();
        assert.equal(res.status, 403, JSON.stringify(body));
        assert.equal(body.error.code, "BROWSER_BLOCKED");
      }
    });
  }
  assert.equal(await feed(), before, "no browser request wrote anything");
});

Deno.test("browser rule: Sec-Fetch-Mode alone is not a browser; each real signal is", () => {
  const h = (init: Record<string, string>) => browserSignal(new Headers(init));
  assert.equal(h({ "sec-fetch-mode": "cors" }), null);
  assert.equal(h({ "sec-fetch-mode": "no-cors", "user-agent": "node" }), null);
  assert.equal(h({ "sec-fetch-mode": "cors", "sec-fetch-site": "none" }), "header sec-fetch-site");
  assert.equal(h({ "sec-fetch-dest": "empty" }), "header sec-fetch-dest");
  assert.equal(h({ "sec-fetch-user": "?1" }), "header sec-fetch-user");
  assert.equal(h({ "sec-fetch-storage-access": "none" }), "header sec-fetch-storage-access");
  assert.equal(h({ origin: "null" }), "header origin");
  assert.equal(h({ accept: "text/html" }), "html accept");
  assert.equal(
    h({ "user-agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 HeadlessChrome/156" }),
    "browser user-agent",
  );
});

Deno.test("browser rule: an Accept is a browser's only when it ranks HTML at least as high as JSON", () => {
  assert.equal(ranksHtmlFirst("text/html,application/xhtml+xml,*/*;q=0.8"), true);
  assert.equal(ranksHtmlFirst("application/json, text/html"), true);
  assert.equal(ranksHtmlFirst("application/xhtml+xml;q=0.9, application/json;q=0.9"), true);
  assert.equal(ranksHtmlFirst("application/json, text/html;q=0.5"), false);
  assert.equal(ranksHtmlFirst("application/json"), false);
  assert.equal(ranksHtmlFirst("*/*"), false);
  assert.equal(ranksHtmlFirst("text/html;q=0, application/json"), false);
  assert.equal(ranksHtmlFirst(""), false);
});

Deno.test("Accept: JSON named with q=0 is JSON refused (JSON_REQUIRED), any other q names it", async () => {
  assert.equal(namesJson("application/json"), true);
  assert.equal(namesJson("text/plain, application/json;q=0.1"), true);
  assert.equal(namesJson("application/json;q=0"), false);
  assert.equal(namesJson("application/json;q=0.000, */*"), false);
  assert.equal(namesJson("*/*"), false);
  await using board = await testBoard();
  const a = await register(board);
  for (const accept of ["application/json;q=0", "application/json;q=0, */*"]) {
    const res = await board.request("/v1/me", {
      headers: { ...agentHeaders(a.key), accept },
    });
    const details = await assertError(res, 400, "JSON_REQUIRED");
    assert.equal(details.received, accept);
  }
});
