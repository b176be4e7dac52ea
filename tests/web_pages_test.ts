import assert from "node:assert/strict";
import { ERROR_STATUS } from "../domain/errors.ts";
import { testBoard } from "./helpers.ts";

Deno.test("website pages send the security headers and escape nothing unsafely", async (t) => {
  await using board = await testBoard();
  for (
    const path of ["/", "/docs", "/docs/api", "/docs/connect", "/skill.md", "/assets/site.css"]
  ) {
    await t.step(path, async () => {
      const res = await board.request(path, { headers: { accept: "text/html" } });
      assert.equal(res.status, 200, path);
      const csp = res.headers.get("content-security-policy") ?? "";
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.ok(!/script-src/.test(csp), "no script is allowed at all");
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      assert.equal(res.headers.get("x-frame-options"), "DENY");
      assert.ok(res.headers.get("referrer-policy"));
      const text = await res.text();
      assert.ok(!/<script/i.test(text), "pages carry no script");
      if (path === "/" || path.startsWith("/docs")) {
        assert.ok(text.startsWith("<!DOCTYPE html>"), "standards mode");
      }
    });
  }
});

Deno.test("/docs has an anchor for every error code that error objects link to", async () => {
  await using board = await testBoard();
  const html = await (await board.request("/docs")).text();
  for (const code of Object.keys(ERROR_STATUS)) {
    const anchor = `error-${code.toLowerCase().replace(/_/g, "-")}`;
    assert.ok(html.includes(`id="${anchor}"`), anchor);
  }
  const res = await board.request("/v1/posts", { headers: { accept: "application/json" } });
  const body = await res.json();
  const anchor = body.docs.split("#")[1];
  assert.ok(html.includes(`id="${anchor}"`));
});

Deno.test("/skill.md is Markdown with the board's base URL filled in", async () => {
  await using board = await testBoard();
  const res = await board.request("/skill.md");
  assert.match(res.headers.get("content-type") ?? "", /text\/markdown/);
  const text = await res.text();
  assert.ok(text.includes("http://board.test/v1/agents"));
  assert.ok(!text.includes("{base_url}"));
  assert.match(text, /Idempotency-Key/);
  assert.match(text, /untrusted/);
});

Deno.test("documents served as pages show the board's base URL where they say {base_url}", async () => {
  await using board = await testBoard();
  for (const name of ["skill", "mcp"]) {
    const html = await (await board.request(`/docs/${name}`)).text();
    assert.ok(!html.includes("{base_url}"), `/docs/${name} shows the placeholder`);
  }
  const skill = await (await board.request("/docs/skill")).text();
  assert.ok(skill.includes("POST http://board.test/v1/agents"));
  assert.ok(skill.includes("<code>http://board.test/mcp</code>"));
  const mcp = await (await board.request("/docs/mcp")).text();
  assert.ok(mcp.includes("<code>http://board.test/mcp</code> speaks MCP"));
});

Deno.test("/docs/{name} refuses path tricks", async () => {
  await using board = await testBoard();
  for (const name of ["..%2Fdeno", "..deno", "a.b", "API", "nope"]) {
    const res = await board.request(`/docs/${name}`);
    assert.equal(res.status, 404, name);
    await res.body?.cancel();
  }
});

Deno.test("the home page and /docs link to the connect-your-client page, which renders", async () => {
  await using board = await testBoard();
  const home = await (await board.request("/")).text();
  assert.match(home, /<a href="\/docs\/connect">Connect your client<\/a>/);
  assert.match(await (await board.request("/docs")).text(), /href="\/docs\/connect"/);
  const page = await (await board.request("/docs/connect")).text();
  assert.match(page, /<h1[^>]*>(<a [^>]*>)?Connect your client(<\/a>)?<\/h1>/);
  assert.match(page, /claude mcp add --transport http/);
});

Deno.test("a tag written as text in a document is shown as text, never parsed as markup", async () => {
  await using board = await testBoard();
  // docs/benchmarks.md names "<style>" in a table cell: as markup, it swallowed the rest of
  // the page (the remaining rows, later sections, the footer) into a style element.
  const bench = await (await board.request("/docs/benchmarks")).text();
  assert.doesNotMatch(bench, /<style>/);
  assert.match(bench, /url\( in &lt;style&gt; split by CDATA/);
  assert.match(bench, /<footer class="site">/);
  // docs/website.md says "in reply to <name>": as markup, the word vanished.
  const website = await (await board.request("/docs/website")).text();
  assert.match(website, /in reply to &lt;name&gt;/);
});

Deno.test("pages link the stylesheet under an address that names its content, kept a year there", async () => {
  await using board = await testBoard();
  const html = await (await board.request("/", { headers: { accept: "text/html" } })).text();
  const href = html.match(/<link rel="stylesheet" href="([^"]+)"/)?.[1] ?? "";
  assert.match(href, /^\/assets\/site\.css\?v=[0-9a-f]{12}$/);
  const named = await board.request(href);
  const css = new Uint8Array(await named.arrayBuffer());
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", css));
  const version = Array.from(digest.slice(0, 6), (b) => b.toString(16).padStart(2, "0")).join("");
  assert.equal(href.split("=")[1], version, "the version is the content's hash");
  assert.equal(named.headers.get("cache-control"), "public, max-age=31536000, immutable");
  for (const other of ["/assets/site.css", "/assets/site.css?v=000000000000"]) {
    const res = await board.request(other);
    assert.equal(res.status, 200, other);
    assert.equal(res.headers.get("cache-control"), "public, max-age=3600", other);
    await res.body?.cancel();
  }
});
