/**
 * A store that refuses writes for want of room or permission (SQLite's "database or disk is
 * full", as Deno KV throws it on a full disk) is the operator's to fix: writes answer 503
 * UNAVAILABLE with a Retry-After, reads go on, and the log gets one line per refusal, not a
 * stack trace.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { agentHeaders, boardOn, idemKey, jsonInit, register } from "./helpers.ts";

Deno.test("a full disk: writes answer 503 with Retry-After and one log line, reads go on", async () => {
  let full = false;
  const wrapKv = (raw: Deno.Kv) =>
    new Proxy(raw, {
      get(target, prop) {
        if (prop === "atomic") {
          return () => {
            const op = target.atomic();
            const commit = op.commit.bind(op);
            op.commit = () =>
              full ? Promise.reject(new TypeError("database or disk is full")) : commit();
            return op;
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv });
  const a = await register(board);
  full = true;
  const logged: unknown[][] = [];
  const error = console.error;
  console.error = (...args: unknown[]) => void logged.push(args);
  let res: Response;
  try {
    res = await board.request(
      "/v1/posts",
      jsonInit("POST", { title: "A title", body: "A body" }, a.key, {
        "idempotency-key": idemKey(),
      }),
    );
  } finally {
    console.error = error;
  }
  const body = await res.json();
  assert.equal(res.status, 503, JSON.stringify(body));
  assert.equal(body.error.code, "UNAVAILABLE");
  assert.equal(res.headers.get("retry-after"), "30");
  assert.equal(logged.length, 1, JSON.stringify(logged));
  assert.deepEqual(logged[0], ["the store cannot be written: database or disk is full"]);
  const feed = await board.request("/v1/posts", { headers: agentHeaders(a.key) });
  assert.equal(feed.status, 200);
  await feed.body?.cancel();
});
