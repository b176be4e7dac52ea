/**
 * Compressed responses: real clients (curl --compressed, Node's fetch, Python's urllib,
 * python requests where the interpreter has it, and Chromium) against the real server get gzip
 * or brotli bodies that decode to the very JSON or HTML an uncompressed request gets. The rules
 * for what is never compressed are checked on the middleware itself in tests/compression_test.ts.
 */
import assert from "node:assert/strict";
import { chooseCoding } from "../../routes/compression.ts";
import { launchBrowser, skipBrowserTests } from "./browser.ts";
import { registerAt, startServer } from "./server_process.ts";

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

Deno.test("real clients get compressed feeds, pages and errors that decode to the same content", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await using server = await startServer(`${dir}/board.kv`);
    const { key } = await registerAt(server.url, "zip-agent");
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
