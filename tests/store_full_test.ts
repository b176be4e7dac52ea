/**
 * A store that refuses writes for want of room or permission (SQLite's "database or disk is
 * full", as Deno KV throws it on a full disk) is the operator's to fix: writes answer 503
 * UNAVAILABLE with a Retry-After, reads go on, and the log gets one line per refusal, not a
 * stack trace; the website answers a page saying it cannot save.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../domain/clock.ts";
import { agentHeaders, boardOn, idemKey, jsonInit, register } from "./helpers.ts";
import { Guest, publishedArticle } from "./website_helpers.ts";

/** A store handle whose commits fail as a full disk makes them, while `full.on`. */
function fillable(message = "database or disk is full") {
  const full = { on: false };
  const wrapKv = (raw: Deno.Kv) =>
    new Proxy(raw, {
      get(target, prop) {
        if (prop === "atomic") {
          return () => {
            const op = target.atomic();
            const commit = op.commit.bind(op);
            op.commit = () => full.on ? Promise.reject(new TypeError(message)) : commit();
            return op;
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  return { full, wrapKv };
}

/** Runs `work` with console.error recorded; answers its result and what was logged. */
async function logging<T>(work: () => Promise<T>): Promise<[T, unknown[][]]> {
  const logged: unknown[][] = [];
  const error = console.error;
  console.error = (...args: unknown[]) => void logged.push(args);
  try {
    return [await work(), logged];
  } finally {
    console.error = error;
  }
}

/**
 * A board whose store refuses writes with `message` once it is "full", an agent on it, and a
 * post sent then (its answer, parsed body and the lines logged meanwhile).
 */
async function postOnRefusingStore(message?: string) {
  const { full, wrapKv } = fillable(message);
  const board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv });
  const a = await register(board);
  full.on = true;
  const [res, logged] = await logging(() =>
    board.request(
      "/v1/posts",
      jsonInit("POST", { title: "A title", body: "A body" }, a.key, {
        "idempotency-key": idemKey(),
      }),
    )
  );
  return { board, a, res, body: await res.json(), logged };
}

Deno.test("a full disk: writes answer 503 with Retry-After and one log line, reads go on", async () => {
  const { board, a, res, body, logged } = await postOnRefusingStore();
  await using _ = board;
  assert.equal(res.status, 503, JSON.stringify(body));
  assert.equal(body.error.code, "UNAVAILABLE");
  assert.equal(res.headers.get("retry-after"), "30");
  assert.equal(logged.length, 1, JSON.stringify(logged));
  assert.deepEqual(logged[0], ["the store cannot be written: database or disk is full"]);
  const feed = await board.request("/v1/posts", { headers: agentHeaders(a.key) });
  assert.equal(feed.status, 200);
  await feed.body?.cancel();
});

Deno.test("a full disk: a guest's comment gets a page saying the site cannot save, one log line", async () => {
  const { full, wrapKv } = fillable();
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv });
  const article = await publishedArticle(board);
  const guest = new Guest(board);
  await guest.get(`/articles/${article.id}`);
  full.on = true;
  const [sent, logged] = await logging(() =>
    guest.post(`/articles/${article.id}/comments`, { text: "A thoughtful comment." })
  );
  assert.equal(sent.posted.status, 503);
  assert.match(sent.posted.headers.get("content-type") ?? "", /text\/html/);
  assert.match(sent.html, /cannot save right now/);
  assert.deepEqual(logged, [["the store cannot be written: database or disk is full"]]);
});

Deno.test("a store turned read-only while running: writes answer 503, one log line", async () => {
  // Deno KV's words for a store file it can no longer write.
  const { board, res, body, logged } = await postOnRefusingStore(
    "Can not write to a read-only database",
  );
  await using _ = board;
  assert.equal(res.status, 503, JSON.stringify(body));
  assert.equal(body.error.code, "UNAVAILABLE");
  assert.deepEqual(logged, [[
    "the store cannot be written: Can not write to a read-only database",
  ]]);
});
