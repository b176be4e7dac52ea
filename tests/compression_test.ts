/**
 * Compression rules on the middleware itself: which coding an `Accept-Encoding` asks for, and
 * what is never compressed; the compressed copies kept beside cached reads. Real clients against the real server are in
 * tests/e2e/compression_clients_test.ts.
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
  // The q-values are read as Accept's are (one parser): spaces around "=", case.
  assert.equal(chooseCoding("br; q = 0.1, GZIP; Q=0.9"), "gzip");
  assert.equal(chooseCoding("br;q=high, gzip"), "gzip", "a q that is no number: not acceptable");
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
      headers: {
        accept: "application/json",
        "x-agent-protocol": "board/1",
        authorization: `Bearer ${agent.key}`,
        "accept-encoding": coding,
      },
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
