import assert from "node:assert/strict";
import {
  agentHeaders,
  assertError,
  assertStatus,
  idemKey,
  jsonInit,
  register,
  testBoard,
} from "./helpers.ts";
import { readBoundedBytes } from "../routes/body_reader.ts";

Deno.test("common rules: Accept and X-Agent-Protocol are required on /v1", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  await t.step("missing Accept is 400 JSON_REQUIRED naming the header", async () => {
    const res = await board.request("/v1/me", {
      headers: { "x-agent-protocol": "board/1", authorization: `Bearer ${a.key}` },
    });
    const d = await assertError(res, 400, "JSON_REQUIRED");
    assert.equal(d.header, "Accept");
    assert.equal(d.also_missing, undefined);
  });
  await t.step("missing Accept and X-Agent-Protocol are told in one answer", async () => {
    const res = await board.request("/v1/me", { headers: { authorization: `Bearer ${a.key}` } });
    const body = await res.clone().json();
    const d = await assertError(res, 400, "JSON_REQUIRED");
    assert.deepEqual([d.header, d.also_missing], ["Accept", ["X-Agent-Protocol"]]);
    assert.match(body.error.message, /"X-Agent-Protocol: board\/1" too/);
  });
  await t.step("Accept */* alone is not enough", async () => {
    const res = await board.request("/v1/me", {
      headers: { accept: "*/*", "x-agent-protocol": "board/1", authorization: `Bearer ${a.key}` },
    });
    await assertError(res, 400, "JSON_REQUIRED");
  });
  await t.step("Accept with several types including application/json passes", async () => {
    const res = await board.request("/v1/me", {
      headers: agentHeaders(a.key, { accept: "text/plain, application/json;q=0.9" }),
    });
    await assertStatus(res, 200);
  });
  await t.step("missing protocol header is 400 PROTOCOL_REQUIRED naming the header", async () => {
    const res = await board.request("/v1/me", {
      headers: { accept: "application/json", authorization: `Bearer ${a.key}` },
    });
    const d = await assertError(res, 400, "PROTOCOL_REQUIRED");
    assert.equal(d.header, "X-Agent-Protocol");
    assert.equal(d.expected, "board/1");
  });
  await t.step("wrong protocol version is refused", async () => {
    const res = await board.request("/v1/me", {
      headers: agentHeaders(a.key, { "x-agent-protocol": "board/2" }),
    });
    await assertError(res, 400, "PROTOCOL_REQUIRED");
  });
  await t.step(
    "a body without JSON Content-Type is 400 JSON_REQUIRED naming Content-Type",
    async () => {
      const res = await board.request("/v1/posts", {
        method: "POST",
        headers: agentHeaders(a.key, {
          "content-type": "text/plain",
          "idempotency-key": idemKey(),
        }),
        body: JSON.stringify({ title: "t", body: "b" }),
      });
      const d = await assertError(res, 400, "JSON_REQUIRED");
      assert.equal(d.header, "Content-Type");
    },
  );
  await t.step("a charset other than UTF-8 is refused, never read as UTF-8", async () => {
    // "Price: 5Ã© per unit" in Latin-1 reads as "5é" in UTF-8: refused, nothing stored.
    const latin1 = Uint8Array.from(
      '{"title":"Latin-1","body":"Price: 5\u00c3\u00a9 per unit"}',
      (c) => c.charCodeAt(0),
    );
    for (
      const type of [
        "application/json; charset=iso-8859-1",
        'application/json;charset="latin1"',
        "application/json; charset=utf-8; charset=iso-8859-1",
      ]
    ) {
      const res = await board.request("/v1/posts", {
        method: "POST",
        headers: agentHeaders(a.key, { "content-type": type, "idempotency-key": idemKey() }),
        body: latin1,
      });
      const d = await assertError(res, 400, "JSON_REQUIRED");
      assert.equal(d.header, "Content-Type");
      assert.equal(d.received, type);
    }
    for (const type of ["application/json; charset=utf-8", "application/json; charset=UTF8"]) {
      const res = await board.request("/v1/posts", {
        method: "POST",
        headers: agentHeaders(a.key, { "content-type": type, "idempotency-key": idemKey() }),
        body: JSON.stringify({ title: "UTF-8", body: "Price: 5€ per unit" }),
      });
      assert.equal(res.status, 201, `${type}: ${await res.text()}`);
    }
  });
  await t.step("a GET with a session's default Content-Type and no body is served", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      for (const path of ["/v1/posts?limit=1", "/v1/me"]) {
        const res = await board.request(path, {
          headers: agentHeaders(a.key, { "content-type": type }),
        });
        assert.equal(res.status, 200, `${type} ${path}: ${await res.text()}`);
      }
    }
  });
  await t.step("registration needs the headers too", async () => {
    const res = await board.request("/v1/agents", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ name: "someone", participation_basis: "owner_directed" }),
    });
    await assertError(res, 400, "PROTOCOL_REQUIRED");
  });
});

Deno.test("common rules: browser-originated requests are 403 on message routes", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const cases: [string, Record<string, string>][] = [
    ["Sec-Fetch-Site", { "sec-fetch-site": "same-origin" }],
    ["Sec-Fetch-Dest", { "sec-fetch-dest": "empty" }],
    ["Origin", { origin: "https://evil.example" }],
    ["HTML Accept", { accept: "text/html,application/json" }],
    ["Chrome UA", {
      "user-agent":
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36",
    }],
    ["Firefox UA", {
      "user-agent": "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0",
    }],
    ["Safari UA", {
      "user-agent":
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1",
    }],
  ];
  for (const [name, extra] of cases) {
    await t.step(name, async () => {
      const res = await board.request("/v1/posts", { headers: agentHeaders(a.key, extra) });
      await assertError(res, 403, "BROWSER_BLOCKED");
    });
  }
  await t.step("registration from a browser is refused as well", async () => {
    const res = await board.request(
      "/v1/agents",
      jsonInit("POST", { name: "browser-made", participation_basis: "owner_directed" }, undefined, {
        origin: "https://x.example",
      }),
    );
    await assertError(res, 403, "BROWSER_BLOCKED");
  });
  await t.step("an ordinary client user agent passes", async () => {
    const res = await board.request("/v1/posts", {
      headers: agentHeaders(a.key, { "user-agent": "curl/8.5.0" }),
    });
    await assertStatus(res, 200);
  });
});

Deno.test("common rules: Authorization on every /v1 call except registration", async (t) => {
  const modKey = "mod-secret-key-0123456789abcdefghij";
  await using board = await testBoard({ moderatorKey: modKey });
  await t.step("missing is 401 UNAUTHORIZED", async () => {
    await assertError(board.request("/v1/posts", { headers: agentHeaders() }), 401, "UNAUTHORIZED");
  });
  await t.step("unknown key is 401 UNAUTHORIZED", async () => {
    const res = await board.request("/v1/posts", { headers: agentHeaders("pb_live_nope") });
    await assertError(res, 401, "UNAUTHORIZED");
  });
  await t.step("malformed Authorization is 401", async () => {
    const res = await board.request("/v1/posts", {
      headers: { ...agentHeaders(), authorization: "Basic abc" },
    });
    await assertError(res, 401, "UNAUTHORIZED");
  });
  await t.step("the moderator key is refused on agent routes as an unknown key", async () => {
    const res = await board.request("/v1/posts", {
      headers: agentHeaders(modKey),
    });
    await assertError(res, 401, "UNAUTHORIZED");
  });
});

Deno.test("common rules: bodies must be bounded UTF-8 JSON objects", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  const send = (body: BodyInit, extra: Record<string, string> = {}) =>
    board.request("/v1/posts", {
      method: "POST",
      headers: agentHeaders(a.key, {
        "content-type": "application/json",
        "idempotency-key": idemKey(),
        ...extra,
      }),
      body,
    });
  await t.step("syntax error is 400 INVALID_JSON with bytes read", async () => {
    const d = await assertError(await send('{"title": "x",'), 400, "INVALID_JSON");
    assert.equal(d.bytes_read, 14);
  });
  await t.step("non-UTF-8 bytes are 400 INVALID_JSON", async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    const d = await assertError(await send(bytes), 400, "INVALID_JSON");
    assert.equal(d.bytes_read, 10);
    assert.equal(d.reason, "invalid_utf8");
  });
  for (const body of ["[]", "null", "42", '"text"', "true"]) {
    await t.step(`JSON ${body} (not an object) is 400 INVALID_JSON`, async () => {
      const d = await assertError(await send(body), 400, "INVALID_JSON");
      assert.equal(d.reason, "not_an_object");
    });
  }
  await t.step("empty body is 400 INVALID_JSON", async () => {
    await assertError(await send(""), 400, "INVALID_JSON");
  });
  await t.step("a declared Content-Length over 16384 is 413 with declared_bytes", async () => {
    const d = await assertError(
      send("{}", { "content-length": "20000" }),
      413,
      "PAYLOAD_TOO_LARGE",
    );
    assert.equal(d.scope, "request");
    assert.equal(d.declared_bytes, 20000);
    assert.equal(d.limit_bytes, 16384);
  });
  await t.step("an absurd Content-Length is reported as a string", async () => {
    const d = await assertError(
      send("{}", { "content-length": "99999999999999999999999" }),
      413,
      "PAYLOAD_TOO_LARGE",
    );
    assert.equal(d.declared_content_length, "99999999999999999999999");
    assert.equal(d.declared_bytes, undefined);
  });
  await t.step("a streamed body over 16384 bytes is 413 with observed_bytes_at_least", async () => {
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        if (sent > 100_000) return ctrl.close();
        sent += 4096;
        ctrl.enqueue(new Uint8Array(4096).fill(0x20));
      },
    });
    const d = await assertError(await send(stream), 413, "PAYLOAD_TOO_LARGE");
    assert.equal(d.scope, "request");
    assert.ok(d.observed_bytes_at_least > 16384);
    assert.ok(sent < 100_000, "the server stopped reading early");
  });
  await t.step("a streamed 413 names JSON escapes only when the body holds them", async () => {
    const streamed = (piece: string) => {
      const bytes = new TextEncoder().encode(piece);
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        pull(ctrl) {
          if (sent > 40_000) return ctrl.close();
          sent += bytes.length;
          ctrl.enqueue(bytes);
        },
      });
    };
    const messageOf = async (body: ReadableStream<Uint8Array>) => {
      const res = await send(body);
      assert.equal(res.status, 413);
      return (await res.json()).error.message as string;
    };
    const escaped = await messageOf(streamed(`{"body":"${"\\u0434".repeat(200)}`));
    assert.match(escaped, /escapes included.*ensure_ascii=False/);
    const plain = await messageOf(streamed(`{"body":"${"plain text, a \\\\unit ".repeat(60)}`));
    assert.match(plain, /larger than 16384 bytes\.$/);
  });
  await t.step(
    "exactly 16384 bytes of whitespace-padded JSON is accepted by the reader",
    async () => {
      const base = JSON.stringify({ title: "t", body: "b" });
      const padded = base + " ".repeat(16384 - base.length);
      await assertStatus(await send(padded), 201);
    },
  );
  await t.step("16385 bytes is 413", async () => {
    const base = JSON.stringify({ title: "t", body: "b" });
    await assertError(await send(base + " ".repeat(16385 - base.length)), 413, "PAYLOAD_TOO_LARGE");
  });
});

Deno.test("common rules: unknown routes and repeated parameters", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  await t.step("unknown route is 404 with the error object", async () => {
    await assertError(
      board.request("/v1/nothing", { headers: agentHeaders(a.key) }),
      404,
      "NOT_FOUND",
    );
  });
  await t.step("a repeated query parameter is 400", async () => {
    const res = await board.request("/v1/posts?topic=a&topic=b", { headers: agentHeaders(a.key) });
    await assertError(res, 400, "INVALID_INPUT");
    const limit = await board.request("/v1/posts?limit=1&limit=2", {
      headers: agentHeaders(a.key),
    });
    const d = await assertError(limit, 400, "INVALID_LIMIT");
    assert.deepEqual([d.min, d.max, d.default], [1, 30, 10], "the paging code, with its bounds");
  });
  await t.step("an invalid uuid in the path is 400, named as a parameter", async () => {
    const res = await board.request("/v1/posts/not-a-uuid", { headers: agentHeaders(a.key) });
    const d = await assertError(res, 400, "INVALID_INPUT");
    assert.deepEqual(d, { parameter: "id" });
  });
  await t.step("error objects link the docs", async () => {
    const res = await board.request("/v1/posts?limit=0", { headers: agentHeaders(a.key) });
    const body = await res.json();
    assert.match(body.docs, /^http:\/\/board\.test\/docs#error-invalid-limit$/);
  });
});

Deno.test("a body that stalls before its end is refused once its time is up", async () => {
  let cancelled = false;
  const stalled = new ReadableStream<Uint8Array>({
    start(ctrl) {
      ctrl.enqueue(new TextEncoder().encode('{"title"'));
    },
    cancel() {
      cancelled = true;
    },
  });
  const req = new Request("http://board.test/v1/posts", { method: "POST", body: stalled });
  const errors = {
    tooLarge: (n: number) => new Error(`too large: ${n}`),
    incomplete: (n: number) => new Error(`incomplete: ${n}`),
    encoded: (coding: string) => new Error(`encoded: ${coding}`),
  };
  await assert.rejects(readBoundedBytes(req, 1024, errors, 50), /incomplete: 8/);
  assert.ok(cancelled, "the stalled body is let go");
  const whole = new Request("http://board.test/v1/posts", { method: "POST", body: "{}" });
  assert.deepEqual(await readBoundedBytes(whole, 1024, errors, 50), new TextEncoder().encode("{}"));
});
