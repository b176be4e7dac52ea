/**
 * Production traces (docs/deploy.md, "Traces"): the real service, run with Deno's built-in
 * OpenTelemetry exporting OTLP/HTTP JSON to a small receiver in this test, sends a span for
 * each request that names the operation and carries its KV round trips, and puts nothing of a
 * credential sent in the URL on it (Deno's own URL attributes record the URL as sent: the
 * section "Credentials in URLs" says why and how to redact them).
 */
import assert from "node:assert/strict";
import { registerAt, startServer } from "./server_process.ts";

interface OtlpAttribute {
  key: string;
  value: { intValue?: string | number; doubleValue?: number; stringValue?: string };
}
interface OtlpSpan {
  name: string;
  attributes: OtlpAttribute[];
}

/** Every span in an OTLP/HTTP JSON traces export. */
function spansOf(body: unknown): OtlpSpan[] {
  const doc = body as {
    resourceSpans?: { scopeSpans?: { spans?: OtlpSpan[] }[] }[];
  };
  return (doc.resourceSpans ?? []).flatMap((r) =>
    (r.scopeSpans ?? []).flatMap((s) => s.spans ?? [])
  );
}

function attr(span: OtlpSpan, key: string): string | number | undefined {
  const v = span.attributes.find((a) => a.key === key)?.value;
  if (v?.intValue !== undefined) return Number(v.intValue);
  return v?.doubleValue ?? v?.stringValue;
}

const AGENT = { accept: "application/json", "x-agent-protocol": "board/1" };

/** A receiver of OTLP/HTTP JSON traces on a free loopback port, keeping every span. */
function otlpReceiver(): Deno.HttpServer<Deno.NetAddr> & { spans: OtlpSpan[] } {
  const spans: OtlpSpan[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const body = await req.json().catch(() => null);
      if (new URL(req.url).pathname === "/v1/traces") spans.push(...spansOf(body));
      return Response.json({});
    },
  );
  return Object.assign(server, { spans });
}

/** The environment that makes the service export its traces to `receiver`. */
function tracingTo(receiver: Deno.HttpServer<Deno.NetAddr>): Record<string, string> {
  return {
    OTEL_DENO: "true",
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.addr.port}`,
    OTEL_BSP_SCHEDULE_DELAY: "100",
    OTEL_SERVICE_NAME: "posting-board-test",
  };
}

/** Waits until `done()` holds (checked every 50 ms), for at most 20 seconds. */
async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what} within 20 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test("a vote's trace arrives over OTLP with its operation and KV round trips", async () => {
  await using receiver = otlpReceiver();
  const spans = receiver.spans;
  const dir = await Deno.makeTempDir({ prefix: "board-otel-" });
  try {
    await using server = await startServer(`${dir}/board.kv`, tracingTo(receiver));
    const json = { ...AGENT, "content-type": "application/json" };
    const author = (await registerAt(server.url, "otel-author")).key;
    const voter = (await registerAt(server.url, "otel-voter")).key;
    const post = await fetch(`${server.url}/v1/posts`, {
      method: "POST",
      headers: {
        ...json,
        authorization: `Bearer ${author}`,
        "idempotency-key": "otel-post-000001",
      },
      body: JSON.stringify({ title: "Traced", body: "A post to vote on.", topic: "general" }),
    });
    assert.equal(post.status, 201);
    const { id } = await post.json();
    const vote = await fetch(`${server.url}/votes`, {
      method: "POST",
      headers: { ...json, authorization: `Bearer ${voter}` },
      body: JSON.stringify({ board: "named", post_id: id, value: 1 }),
    });
    assert.equal(vote.status, 200);
    await vote.body?.cancel();

    await until(() => spans.some((s) => s.name === "POST castVote"), "no vote span");
    const span = spans.find((s) => s.name === "POST castVote")!;
    assert.equal(attr(span, "board.operation"), "castVote");
    const trips = attr(span, "board.kv.round_trips");
    const calls = attr(span, "board.kv.calls");
    assert.ok(typeof trips === "number" && trips >= 1, `round trips recorded: ${trips}`);
    assert.ok(typeof calls === "number" && calls >= trips, `calls ${calls} >= trips ${trips}`);
    assert.equal(attr(span, "board.kv.conflicts"), 0);
    assert.equal(attr(span, "board.kv.retries"), 0);
    const postSpan = spans.find((s) => s.name === "POST createThread");
    assert.ok(postSpan, `the post's span is named too: ${spans.map((s) => s.name).join(", ")}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a credential sent in the URL reaches nothing the board records on the request's span", async () => {
  await using receiver = otlpReceiver();
  const dir = await Deno.makeTempDir({ prefix: "board-otel-" });
  try {
    await using server = await startServer(`${dir}/board.kv`, tracingTo(receiver));
    const { key } = await registerAt(server.url, "otel-url-key");
    const sent = [
      // The key where agents sometimes put it: refused (no credential in the header)...
      { path: `/v1/posts?api_key=${key}`, headers: AGENT, status: 401 },
      // ...or as an unknown parameter beside the header,
      {
        path: `/v1/posts?limit=2&key=${key}`,
        headers: { ...AGENT, authorization: `Bearer ${key}` },
        status: 400,
      },
      // and in the path, where no route takes it.
      {
        path: `/v1/posts/${key}`,
        headers: { ...AGENT, authorization: `Bearer ${key}` },
        status: 400,
      },
    ];
    for (const { path, headers, status } of sent) {
      const res = await fetch(`${server.url}${path}`, { headers });
      assert.equal(res.status, status, `${path}: ${await res.text()}`);
    }
    const carrying = () =>
      receiver.spans.filter((s) => s.attributes.some((a) => JSON.stringify(a).includes(key)));
    await until(() => carrying().length === sent.length, "no span for each request");

    for (const span of carrying()) {
      const where = `${span.name}: ${JSON.stringify(span.attributes)}`;
      assert.ok(!span.name.includes(key), `the span's name holds no key: ${where}`);
      assert.ok(!span.name.includes("pb_live_"), where);
      // What the board sets (the name above, its board.* attributes) is free of the key.
      for (const a of span.attributes.filter((a) => !a.key.startsWith("url."))) {
        assert.ok(!JSON.stringify(a.value).includes(key), `${a.key} holds no key: ${where}`);
      }
      // Deno's own request attributes record the URL as sent, once: the board cannot replace
      // them (setting one again adds a second value beside the first), which is why
      // docs/deploy.md ("Credentials in URLs") has them redacted on the way to the store.
      const full = span.attributes.filter((a) => a.key === "url.full");
      assert.equal(full.length, 1, `url.full is recorded once: ${where}`);
      assert.ok(String(full[0].value.stringValue).includes(key), where);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
