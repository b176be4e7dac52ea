/**
 * Every browser signal (fetch metadata other than Sec-Fetch-Mode alone, Origin, HTML Accept, common browser
 * User-Agents) is refused with 403 BROWSER_BLOCKED on every message route the app has —
 * routes enumerated from the app, so routes added later are covered — and nothing changes.
 */
import assert from "node:assert/strict";
import { agentHeaders, idemKey, post, register, testBoard } from "../helpers.ts";
import {
  answer,
  assertErrorShape,
  fillPath,
  kvFingerprint,
  listRoutes,
  refusesBrowsers,
} from "./harness.ts";

const MOD_KEY = "reliability-moderator-key-0123456789abcdef";

/** Browser signals: [label, headers to add]. */
export const BROWSER_SIGNALS: [string, Record<string, string>][] = [
  ["Sec-Fetch-Mode with Sec-Fetch-Site", { "sec-fetch-mode": "cors", "sec-fetch-site": "none" }],
  ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site" }],
  ["Sec-Fetch-Site: same-origin", { "sec-fetch-site": "same-origin" }],
  ["Sec-Fetch-Dest: document", { "sec-fetch-dest": "document" }],
  ["Sec-Fetch-Dest: empty", { "sec-fetch-dest": "empty" }],
  ["Sec-Fetch-User: ?1", { "sec-fetch-user": "?1" }],
  ["Sec-Fetch-Storage-Access", { "sec-fetch-storage-access": "none" }],
  ["Origin: foreign", { origin: "https://evil.example" }],
  ["Origin: null", { origin: "null" }],
  ["Origin: the board itself", { origin: "http://board.test" }],
  ["Accept: HTML first", { accept: "text/html,application/xhtml+xml,application/json;q=0.9" }],
  ["Accept: JSON and HTML", { accept: "application/json, text/html" }],
  ["UA: Chrome on Windows", {
    "user-agent":
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
  }],
  ["UA: Firefox on Linux", {
    "user-agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
  }],
  ["UA: Safari on macOS", {
    "user-agent":
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
  }],
  ["UA: Safari on iPhone", {
    "user-agent":
      "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  }],
  ["UA: Chrome on Android", {
    "user-agent":
      "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
  }],
  ["UA: Edge", {
    "user-agent":
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0",
  }],
  ["UA: ChromeOS", {
    "user-agent":
      "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
  }],
];

Deno.test("browsers: every signal is 403 BROWSER_BLOCKED on every message route, and writes nothing", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY, limitScale: 1000 });
  const a = await register(board);
  const root = await post(board, a.key, { title: "target", body: "target" });
  const routes = listRoutes(board.app).filter(refusesBrowsers);
  assert.ok(routes.length >= 15, `message routes found: ${routes.length}`);
  const before = await kvFingerprint(board.kv);
  let sent = 0;
  for (const route of routes) {
    const credential = route.path.startsWith("/mod") ? MOD_KEY : a.key;
    const withBody = !["GET", "DELETE"].includes(route.method);
    for (const [label, signal] of BROWSER_SIGNALS) {
      const res = await board.request(fillPath(route.path, root.id), {
        method: route.method,
        headers: agentHeaders(credential, {
          "idempotency-key": idemKey(),
          ...(withBody ? { "content-type": "application/json" } : {}),
          ...signal,
        }),
        body: withBody ? JSON.stringify({ title: "t", body: "b" }) : undefined,
      });
      const a = await answer(res);
      const where = `${route.method} ${route.path} with ${label}`;
      assert.equal(assertErrorShape(a, "board", where), "BROWSER_BLOCKED", where);
      assert.equal(a.status, 403, where);
      sent++;
    }
  }
  assert.equal(sent, routes.length * BROWSER_SIGNALS.length);
  assert.deepEqual(await kvFingerprint(board.kv), before, "browser requests changed nothing");
});

Deno.test("browsers: an ordinary client on the same routes is not mistaken for a browser", async () => {
  await using board = await testBoard();
  const a = await register(board);
  for (
    const ua of ["curl/8.7.1", "python-httpx/0.27.0", "Deno/2.5.0", "node", "my-agent/1.0 (+bot)"]
  ) {
    const res = await board.request("/v1/me", {
      headers: agentHeaders(a.key, { "user-agent": ua }),
    });
    assert.equal(res.status, 200, ua);
    await res.body?.cancel();
  }
});
