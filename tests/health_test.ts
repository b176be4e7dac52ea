/** GET /healthz: 200 while the store answers, 503 with Retry-After when it does not. */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import type { Config } from "../domain/deps.ts";
import { boardOn, getsThrough, testBoard } from "./helpers.ts";

Deno.test("GET /healthz: 200 and no-store while the store answers", async () => {
  await using board = await testBoard();
  const res = await board.request("/healthz");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.deepEqual(await res.json(), { status: "ok", store: "ok" });
});

Deno.test("GET /healthz: 503 UNAVAILABLE with Retry-After when the store does not answer", async () => {
  let failing = false;
  await using board = await boardOn(":memory:", new ManualClock(), {}, {
    wrapKv: getsThrough((get) => failing ? Promise.reject(new Error("store down")) : get()),
  });
  failing = true;
  const res = await board.request("/healthz");
  const body = await res.json();
  assert.equal(res.status, 503, JSON.stringify(body));
  assert.equal(body.error.code, "UNAVAILABLE");
  assert.equal(res.headers.get("retry-after"), "1");
});

/** `GET /healthz` on a board (with `overrides`) whose store reads hang: 503 within seconds. */
async function assertProbeAnswersWhileReadsHang(overrides: Partial<Config>) {
  // A KV Connect store whose server is down: Deno's client keeps retrying, the read hangs
  // (until the end of the test, when the store comes back: the handle's own deadline, longer
  // than the probe's, then has nothing left to wait for).
  let hanging = false;
  const comeBack: (() => void)[] = [];
  await using board = await boardOn(":memory:", new ManualClock(), overrides, {
    wrapKv: getsThrough((get) =>
      hanging ? new Promise((r) => comeBack.push(() => r(get()))) : get()
    ),
  });
  hanging = true;
  const started = Date.now();
  let limit: ReturnType<typeof setTimeout> | undefined;
  const res = await Promise.race([
    board.request("/healthz"),
    new Promise<never>((_, reject) => {
      limit = setTimeout(() => reject(new Error("no answer within 10 s")), 10_000);
    }),
  ]).finally(() => clearTimeout(limit));
  const body = await res.json();
  assert.equal(res.status, 503, JSON.stringify(body));
  assert.equal(body.error.code, "UNAVAILABLE");
  assert.equal(res.headers.get("retry-after"), "1");
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.ok(Date.now() - started < 5_000, `${Date.now() - started} ms`);
  for (const back of comeBack) back();
}

Deno.test("GET /healthz: 503 UNAVAILABLE within seconds when a store read never comes back", async () => {
  await assertProbeAnswersWhileReadsHang({});
});

Deno.test("GET /healthz: 503 within seconds when the store hangs, with the test clock on too", async () => {
  // Every other request first reads the test clock's stored shift, under the longer deadline
  // of every KV call; the probe reads no clock and keeps its own deadline.
  await assertProbeAnswersWhileReadsHang({ testClock: true });
});
