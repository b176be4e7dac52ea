/**
 * Compressed responses: real clients (curl --compressed, Node's fetch, Python's urllib,
 * python requests where the interpreter has it, and Chromium) against the real server get gzip
 * or brotli bodies that decode to the very JSON or HTML an uncompressed request gets; the rules for what
 * is never compressed are checked on the middleware itself.
 */
import assert from "node:assert/strict";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { Hono } from "hono";
import {
  chooseCoding,
  CompressedCopies,
  compressResponses,
  MIN_COMPRESS_BYTES,
} from "../routes/compression.ts";
import { post, register, testBoard } from "./helpers.ts";
import { launchBrowser, skipBrowserTests } from "./e2e/browser.ts";
import { startServer } from "./e2e/server_process.ts";

const AGENT = { accept: "application/json", "x-agent-protocol": "board/1" };

async function run(cmd: string, args: string[], stdin?: string): Promise<string> {
  const child = new Deno.Command(cmd, {
    args,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) throw new Error(`${cmd} failed: ${new TextDecoder().decode(out.stderr)}`);
  return text;
}

/** Headers (lower-cased names) and body of a `curl -D -` dump. */
function splitCurl(dump: string): { headers: Map<string, string>; body: string } {
  const at = dump.indexOf("\r\n\r\n");
  const headers = new Map<string, string>();
  for (const line of dump.slice(0, at).split("\r\n").slice(1)) {
    const i = line.indexOf(":");
    headers.set(line.slice(0, i).toLowerCase(), line.slice(i + 1).trim());
  }
  return { headers, body: dump.slice(at + 4) };
}

Deno.test("Accept-Encoding: brotli when rated at least as high as gzip, gzip otherwise, q=0 refuses", () => {
  assert.equal(chooseCoding(null), null);
  assert.equal(chooseCoding(""), null);
  assert.equal(chooseCoding("identity"), null);
  assert.equal(chooseCoding("gzip"), "gzip");
  assert.equal(chooseCoding("deflate, gzip, br, zstd"), "br");
  assert.equal(chooseCoding("gzip, deflate, br"), "br");
  assert.equal(chooseCoding("br;q=0.5, gzip"), "gzip");
  assert.equal(chooseCoding("br;q=0, gzip;q=0.2"), "gzip");
  assert.equal(chooseCoding("gzip;q=0, br;q=0"), null);
  assert.equal(chooseCoding("*"), "br");
  assert.equal(chooseCoding("*;q=0.1, br;q=0"), "gzip");
  assert.equal(chooseCoding("x-gzip"), "gzip");
});

Deno.test("the middleware leaves tiny, binary, streamed, encoded, no-store HTML and HEAD answers alone", async () => {
  const big = JSON.stringify({ text: "word ".repeat(MIN_COMPRESS_BYTES) });
  const app = new Hono();
  app.use(compressResponses);
  app.get("/big", (c) => c.json(JSON.parse(big)));
  app.get("/tiny", (c) => c.json({ ok: true }));
  app.get(
    "/png",
    () => new Response(new Uint8Array(4096), { headers: { "content-type": "image/png" } }),
  );
  app.get(
    "/sse",
    () => new Response(`data: ${big}\n\n`, { headers: { "content-type": "text/event-stream" } }),
  );
  app.get("/encoded", () =>
    new Response(big, {
      headers: { "content-type": "application/json", "content-encoding": "identity" },
    }));
  app.get("/private-page", (c) => {
    c.header("Cache-Control", "no-store");
    return c.html(`<p>${big}</p>`);
  });
  app.get("/page", (c) => c.html(`<p>${big}</p>`));
  // A response whose headers cannot be changed (as `fetch` returns them).
  app.get("/frozen", async () => await fetch(`data:application/json,${encodeURIComponent(big)}`));
  const get = (path: string, method = "GET") =>
    app.request(path, { method, headers: { "accept-encoding": "gzip" } });

  const res = await get("/big");
  assert.equal(res.headers.get("content-encoding"), "gzip");
  assert.equal(res.headers.get("vary"), "Accept-Encoding");
  const raw = new Uint8Array(await res.arrayBuffer());
  assert.equal(Number(res.headers.get("content-length")), raw.length);
  assert.ok(raw.length < big.length / 10, `${raw.length} bytes`);
  assert.equal(gunzipSync(raw).toString(), big);

  const frozen = await get("/frozen");
  assert.equal(frozen.headers.get("content-encoding"), "gzip");
  assert.equal(frozen.headers.get("vary"), "Accept-Encoding");
  assert.equal(gunzipSync(new Uint8Array(await frozen.arrayBuffer())).toString(), big);

  const page = await get("/page");
  assert.equal(page.headers.get("content-encoding"), "gzip");
  assert.equal(gunzipSync(new Uint8Array(await page.arrayBuffer())).toString(), `<p>${big}</p>`);

  for (const path of ["/tiny", "/png", "/sse", "/private-page"]) {
    const r = await get(path);
    assert.equal(r.headers.get("content-encoding"), null, path);
    await r.body?.cancel();
  }
  const encoded = await get("/encoded");
  assert.equal(encoded.headers.get("content-encoding"), "identity");
  assert.equal(await encoded.text(), big);
  const head = await get("/big", "HEAD");
  assert.equal(head.headers.get("content-encoding"), null);
  await head.body?.cancel();
  // Binary types get no Vary (their answer never depends on Accept-Encoding).
  const png = await get("/png");
  assert.equal(png.headers.get("vary"), null);
  await png.body?.cancel();
  // Without Accept-Encoding the body goes out as it is, but the answer still says it varies.
  const plain = await app.request("/big");
  assert.equal(plain.headers.get("content-encoding"), null);
  assert.equal(plain.headers.get("vary"), "Accept-Encoding");
  assert.equal(await plain.text(), big);
});

Deno.test("real clients get compressed feeds, pages and errors that decode to the same content", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await using server = await startServer(`${dir}/board.kv`);
    const reg = await fetch(`${server.url}/v1/agents`, {
      method: "POST",
      headers: { ...AGENT, "content-type": "application/json" },
      body: JSON.stringify({ name: "zip-agent", participation_basis: "owner_directed" }),
    });
    assert.equal(reg.status, 201);
    const key = (await reg.json()).api_key as string;
    const auth = { ...AGENT, authorization: `Bearer ${key}` };
    for (let i = 0; i < 6; i++) {
      const p = await fetch(`${server.url}/v1/posts`, {
        method: "POST",
        headers: {
          ...auth,
          "content-type": "application/json",
          "idempotency-key": `zip-${i}-0000000000`,
        },
        body: JSON.stringify({
          title: `Compressed ${i}`,
          body: `Body ${i}: ${"lorem ipsum ".repeat(40)}`,
        }),
      });
      assert.equal(p.status, 201);
      await p.body?.cancel();
    }
    const feedUrl = `${server.url}/v1/posts?limit=30`;
    const headerArgs = Object.entries(auth).flatMap(([k, v]) => ["-H", `${k}: ${v}`]);

    // curl without --compressed: no Accept-Encoding, identity body.
    const plain = splitCurl(await run("curl", ["-s", "-D", "-", ...headerArgs, feedUrl]));
    assert.equal(plain.headers.get("content-encoding"), undefined);
    assert.equal(plain.headers.get("vary"), "Accept-Encoding");
    const expected = JSON.parse(plain.body);
    assert.equal(expected.items.length, 7); // six posts and the rules thread
    const plainBytes = new TextEncoder().encode(plain.body).length;
    // An answer left uncompressed keeps its fixed length (it is not turned into a stream).
    assert.equal(plain.headers.get("content-length"), String(plainBytes));
    assert.equal(plain.headers.get("transfer-encoding"), undefined);
    assert.ok(plainBytes > 4000, `${plainBytes} bytes`);

    // curl --compressed offers deflate, gzip, br (and zstd): it gets brotli, and decodes it.
    const br = splitCurl(
      await run("curl", ["-s", "--compressed", "-D", "-", ...headerArgs, feedUrl]),
    );
    assert.equal(br.headers.get("content-encoding"), "br");
    assert.deepEqual(JSON.parse(br.body), expected);
    // The wire size: what curl received before decoding.
    const wire = (accept: string) =>
      run("curl", [
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{size_download}",
        "-H",
        `accept-encoding: ${accept}`,
        ...headerArgs,
        feedUrl,
      ]);
    const brBytes = Number(await wire("br"));
    const gzipBytes = Number(await wire("gzip"));
    assert.ok(brBytes < plainBytes / 4, `br ${brBytes} of ${plainBytes}`);
    assert.ok(gzipBytes < plainBytes / 3, `gzip ${gzipBytes} of ${plainBytes}`);

    // curl asking for gzip only.
    const gz = splitCurl(
      await run("curl", [
        "-s",
        "--compressed",
        "-H",
        "accept-encoding: gzip",
        "-D",
        "-",
        ...headerArgs,
        feedUrl,
      ]),
    );
    assert.equal(gz.headers.get("content-encoding"), "gzip");
    assert.deepEqual(JSON.parse(gz.body), expected);

    // Node's fetch (undici) offers gzip and deflate, and decodes. It sends Sec-Fetch-Mode,
    // which /v1 refuses as a browser's; it reads the public OpenAPI document instead.
    const specUrl = `${server.url}/openapi.json`;
    const spec = JSON.parse(splitCurl(await run("curl", ["-s", "-D", "-", specUrl])).body);
    const node = JSON.parse(
      await run("node", [
        "-e",
        `fetch(${JSON.stringify(specUrl)}).then(async (r) => {
          console.log(JSON.stringify({ encoding: r.headers.get("content-encoding"), body: await r.json() }));
        });`,
      ]),
    );
    assert.equal(node.encoding, "gzip");
    assert.deepEqual(node.body, spec);

    // python: urllib (the standard library) sends no Accept-Encoding unless told and hands over
    // the raw gzip bytes; requests, where the interpreter has it (it is not in the standard
    // library), offers the codings it decodes with no header set, and decodes them itself.
    const py = JSON.parse(
      await run("python3", [
        "-c",
        `
import gzip, json, sys, urllib.request
url, headers = sys.argv[1], json.loads(sys.argv[2])
try:
    import requests
    r = requests.get(url, headers=headers)
    got = [r.request.headers.get("Accept-Encoding"), r.headers.get("Content-Encoding"), r.json()]
except ImportError:
    got = None
req = urllib.request.Request(url, headers={**headers, "Accept-Encoding": "gzip"})
with urllib.request.urlopen(req) as u:
    raw = u.read()
    enc = u.headers.get("Content-Encoding")
print(json.dumps({"requests": got,
                  "urllib": [enc, len(raw), json.loads(gzip.decompress(raw))]}))
`,
        feedUrl,
        JSON.stringify(auth),
      ]),
    );
    if (py.requests !== null) {
      // requests offers what it can decode on its own (gzip and deflate; br with brotli).
      const [offered, coding, body] = py.requests;
      assert.notEqual(chooseCoding(offered), null, `requests offered ${offered}`);
      assert.deepEqual([coding, body], [chooseCoding(offered), expected]);
    }
    assert.equal(py.urllib[0], "gzip");
    assert.ok(py.urllib[1] < plainBytes / 3);
    assert.deepEqual(py.urllib[2], expected);

    // An HTML page for people: compressed for a browser-like Accept-Encoding.
    const html = splitCurl(await run("curl", ["-s", "--compressed", "-D", "-", `${server.url}/`]));
    assert.match(html.headers.get("content-type") ?? "", /^text\/html/);
    assert.equal(html.headers.get("content-encoding"), "br");
    assert.match(html.body, /<html/i);

    // A small error object stays as it is.
    const err = splitCurl(
      await run("curl", [
        "-s",
        "--compressed",
        "-D",
        "-",
        ...headerArgs,
        `${server.url}/v1/nowhere`,
      ]),
    );
    assert.equal(err.headers.get("content-encoding"), undefined);
    assert.equal(JSON.parse(err.body).error.code, "NOT_FOUND");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "Chromium gets pages and JSON compressed as it asks, and decodes them",
  ignore: skipBrowserTests(),
  fn: async () => {
    const dir = await Deno.makeTempDir();
    const browser = await launchBrowser();
    try {
      await using server = await startServer(`${dir}/board.kv`);
      const specUrl = `${server.url}/openapi.json`;
      const spec = JSON.parse(splitCurl(await run("curl", ["-s", "-D", "-", specUrl])).body);
      const page = await (await browser.newContext()).newPage();
      const res = await page.goto(`${server.url}/`);
      assert.equal(res?.status(), 200);
      assert.match(await page.content(), /<html/i);
      assert.ok((await page.title()).length > 0, "the decoded page has a title");
      // Navigating to the JSON document: Chromium decodes what it gets.
      const json = await page.goto(specUrl);
      assert.equal(json?.status(), 200);
      assert.deepEqual(JSON.parse((await json!.body()).toString()), spec);

      for (const answer of [res!, json!]) {
        const asked = (await answer.request().allHeaders())["accept-encoding"] ?? "";
        // What Chromium itself offered decides the coding (it offers brotli only to some origins).
        const coding = chooseCoding(asked);
        assert.notEqual(coding, null, `Chromium offered ${asked}`);
        const got = (await answer.allHeaders())["content-encoding"];
        assert.equal(got, coding, `${answer.url()}: asked ${asked}`);
      }
    } finally {
      await browser.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("cached reads keep their compressed copies, keyed by the text, within a byte budget", async (t) => {
  const text = JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ i, t: "x" })) });
  await t.step("the same text in the same coding is compressed once", () => {
    const copies = new CompressedCopies(1_000_000);
    const first = copies.get(text, "gzip");
    assert.equal(copies.get(text, "gzip"), first, "the kept copy is served again");
    assert.equal(new TextDecoder().decode(gunzipSync(first)), text);
    assert.notEqual(copies.get(text, "br"), first, "each coding has its own copy");
    assert.notEqual(copies.get(text + " ", "gzip"), first, "another text is another copy");
  });
  await t.step("past the budget the least recently used copies go first", () => {
    const copies = new CompressedCopies(text.length * 2 * 2 + 2_000);
    const a = copies.get(text, "gzip");
    const b = copies.get(text + " ", "gzip");
    copies.get(text, "gzip"); // a is now the most recently used
    copies.get(text + "  ", "gzip"); // over budget: b goes
    assert.equal(copies.get(text, "gzip"), a);
    assert.notEqual(copies.get(text + " ", "gzip"), b);
  });
});

Deno.test("a cached feed read answers gzip and brotli from its kept copy, same content", async () => {
  await using board = await testBoard();
  const agent = await register(board);
  for (let i = 0; i < 12; i++) {
    await post(board, agent.key, {
      title: `Post number ${i} about compression`,
      topic: "general",
      body: "Some words to make the feed page longer than a kilobyte. ".repeat(4),
    });
  }
  const read = (coding: string) =>
    board.request("/v1/posts?limit=30", {
      headers: { ...AGENT, authorization: `Bearer ${agent.key}`, "accept-encoding": coding },
    });
  const plain = await (await read("identity")).text();
  const gz = await read("gzip");
  assert.equal(gz.headers.get("content-encoding"), "gzip");
  assert.match(gz.headers.get("vary") ?? "", /Accept-Encoding/i);
  const gzBytes = new Uint8Array(await gz.arrayBuffer());
  assert.equal(new TextDecoder().decode(gunzipSync(gzBytes)), plain);
  const again = new Uint8Array(await (await read("gzip")).arrayBuffer());
  assert.deepEqual(again, gzBytes, "the same bytes again");
  const br = await read("br");
  assert.equal(br.headers.get("content-encoding"), "br");
  assert.equal(
    new TextDecoder().decode(brotliDecompressSync(new Uint8Array(await br.arrayBuffer()))),
    plain,
  );
});
