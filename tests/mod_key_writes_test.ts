/**
 * `/mod` writes run while the moderator key's wrong-key window is read: the action reads
 * beside it, but writes and records nothing until the window admitted the request. So a full
 * window answers its 429 and writes nothing, even for an action that read ahead and would have
 * been refused (a refusal is recorded in the audit trail only once the key passed), and a wrong
 * key answers its 401 having written only its slot of the window.
 */
import assert from "node:assert/strict";
import {
  assertError,
  freshNetwork,
  idemKey,
  register,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { changedKeys, snapshot } from "./no_write_helpers.ts";
import { MOD_KEY, modRequest } from "./pin_helpers.ts";
import { anonymousPost, namedPost } from "./vote_helpers.ts";

const WRONG = "wrong-moderator-key-0123456789abcdef";

/** Every audited `/mod` write, on targets that exist and on some that do not. */
async function writes(board: TestBoard) {
  const author = await register(board);
  const root = await namedPost(board, { ...author, net: freshNetwork() }, "Moderated");
  const bRoot = await anonymousPost(board);
  const missing = crypto.randomUUID();
  return [
    { name: "remove a post", send: ["DELETE", `/mod/posts/${bRoot}?board=b`] },
    { name: "remove a missing post", send: ["DELETE", `/mod/posts/${missing}`] },
    {
      name: "official pin",
      send: ["POST", "/mod/pins", { board: "named", thread_id: root, pinned: true }],
    },
    { name: "replace the rules", send: ["PUT", "/mod/rules", { text: "Be kind." }] },
    {
      name: "decide a missing article",
      send: ["POST", `/mod/articles/${missing}/decision`, { action: "restrict", reason: "x" }],
    },
    {
      name: "decide a missing comment",
      send: ["POST", `/mod/comments/${missing}/decision`, { action: "reject", reason: "x" }],
    },
    { name: "move the clock", send: ["POST", "/mod/clock", { advance_seconds: 1 }] },
    { name: "remove an account", send: ["DELETE", `/mod/agents/${author.id}`] },
  ] as const;
}

Deno.test("/mod writes: a full wrong-key window answers 429 and nothing is written", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY, testClock: true }, {
    rulesPost: true,
  });
  const probes = await writes(board);
  // The default network (the one modRequest sends from) presents ten wrong keys.
  for (let i = 0; i < 10; i++) {
    await assertError(
      await modRequest(board, "GET", "/mod/audit", undefined, undefined, `${WRONG}-${i}`),
      401,
      "UNAUTHORIZED",
    );
  }
  for (const key of [MOD_KEY, WRONG]) {
    for (const { name, send: [method, path, body] } of probes) {
      const before = await snapshot(board.kv);
      const res = await modRequest(board, method, path, body, idemKey(), key);
      const details = await assertError(res, 429, "RATE_LIMITED");
      assert.equal(details.limit_name, "network_moderator_key_failures_per_minute", name);
      assert.ok(Number(res.headers.get("retry-after")) >= 1, name);
      assert.deepEqual(
        changedKeys(before, await snapshot(board.kv)),
        [],
        `${name}: nothing written`,
      );
    }
  }
  // Nothing was recorded: the audit trail holds no action.
  board.clock.advance(61);
  const audit = await modRequest(board, "GET", "/mod/audit");
  assert.equal(audit.status, 200);
  assert.deepEqual((await audit.json()).items, []);
});

Deno.test("/mod writes: a wrong key answers 401 and writes only its slot of the window", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY, testClock: true }, {
    rulesPost: true,
  });
  for (const { name, send: [method, path, body] } of await writes(board)) {
    const before = await snapshot(board.kv);
    const res = await modRequest(board, method, path, body, idemKey(), WRONG);
    await assertError(res, 401, "UNAUTHORIZED");
    assert.deepEqual(
      changedKeys(before, await snapshot(board.kv)),
      [JSON.stringify(["rate_windows", "moderator_key_failures", "127.0.0.1"])],
      name,
    );
    board.clock.advance(61); // the window empties: every probe is a first wrong key
  }
});

Deno.test("/mod writes: the right key acts, and a refusal is recorded once the key passed", async () => {
  await using board = await testBoard({ moderatorKey: MOD_KEY, testClock: true }, {
    rulesPost: true,
  });
  const probes = await writes(board);
  const statuses: Record<string, number> = {};
  for (const { name, send: [method, path, body] } of probes) {
    const res = await modRequest(board, method, path, body, idemKey());
    statuses[name] = res.status;
    await res.body?.cancel();
  }
  assert.deepEqual(statuses, {
    "remove a post": 200,
    "remove a missing post": 404,
    "official pin": 200,
    "replace the rules": 200,
    "decide a missing article": 404,
    "decide a missing comment": 404,
    "move the clock": 200,
    "remove an account": 200,
  });
  const audit = await (await modRequest(board, "GET", "/mod/audit")).json();
  assert.equal(audit.items.length, probes.length, "every action is in the audit trail");
  assert.equal(
    audit.items.filter((r: { outcome: string }) => r.outcome === "error").length,
    3,
    "the refusals are recorded",
  );
});
