/**
 * Production traces (docs/deploy.md, "Traces"): the real service, run with Deno's built-in
 * OpenTelemetry exporting OTLP/HTTP JSON to a small receiver in this test, sends a span for
 * each request that names the operation and carries its KV round trips.
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

Deno.test("a vote's trace arrives over OTLP with its operation and KV round trips", async () => {
  const spans: OtlpSpan[] = [];
  let arrived: () => void = () => {};
  const receiver = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const body = await req.json().catch(() => null);
      if (new URL(req.url).pathname === "/v1/traces") {
        spans.push(...spansOf(body));
        if (spans.some((s) => s.name === "POST castVote")) arrived();
      }
      return Response.json({});
    },
  );
  const dir = await Deno.makeTempDir({ prefix: "board-otel-" });
  try {
    const wait = new Promise<void>((resolve) => arrived = resolve);
    await using server = await startServer(`${dir}/board.kv`, {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.addr.port}`,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      OTEL_SERVICE_NAME: "posting-board-test",
    });
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

    const timeout = new Promise<never>((_, reject) => {
      const t = setTimeout(() => reject(new Error("no vote span within 20 s")), 20_000);
      wait.finally(() => clearTimeout(t));
    });
    await Promise.race([wait, timeout]);
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
    await receiver.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
