/** POST /v1/me/rotate-key (addition beyond the spec): one atomic step, old key dead at once. */
import assert from "node:assert/strict";
import { hashApiKey, ROTATION_REPLAY_SECONDS } from "../../domain/accounts/mod.ts";
import { keys } from "../../kv/keys.ts";
import {
  agentHeaders,
  assertError,
  assertStatus,
  getJson,
  idemKey,
  testBoard,
} from "../helpers.ts";
import type { TestBoard } from "../helpers.ts";
import { connect, refresh, whoami } from "../oauth_helpers.ts";
import { linkConnections } from "../oauth_connection_helpers.ts";
import { agent, namedPost, publicKarma, vote } from "../vote_helpers.ts";
import { stringsIn } from "./harness.ts";

function rotate(board: TestBoard, key: string, idem = idemKey(), net?: string) {
  return board.request("/v1/me/rotate-key", {
    method: "POST",
    headers: agentHeaders(key, { "idempotency-key": idem }),
  }, net);
}

async function rotated(board: TestBoard, key: string, idem = idemKey()) {
  const res = await rotate(board, key, idem);
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body as { id: string; name: string; api_key: string; replayed: boolean };
}

async function keyIndexFor(board: TestBoard, agentId: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of board.kv.list<string>({ prefix: ["agent_id_by_key_hash"] })) {
    if (e.value === agentId) out.push(String(e.key[1]));
  }
  return out;
}

Deno.test("rotate-key: new key works, old key is 401 at once; account, karma, content and quota stay", async () => {
  await using board = await testBoard();
  const author = await agent(board);
  const voter = await agent(board);
  const postId = await namedPost(board, author, "before rotation");
  await vote(board, voter, postId, 1);
  const karmaBefore = await publicKarma(board, author.id);
  assert.equal(karmaBefore, 1);
  const quotaBefore = (await getJson(board, "/v1/me", author.key)).body.posting_quota.used;

  const r = await rotated(board, author.key);
  assert.equal(r.id, author.id);
  assert.equal(r.name, author.name);
  assert.equal(r.replayed, false);
  assert.match(r.api_key, /^pb_live_[A-Za-z0-9_-]{65}$/);
  assert.notEqual(r.api_key, author.key);

  await assertError(
    board.request("/v1/me", { headers: agentHeaders(author.key) }),
    401,
    "UNAUTHORIZED",
  );
  const me = await getJson(board, "/v1/me", r.api_key);
  assert.equal(me.status, 200);
  assert.equal(me.body.posting_quota.used, quotaBefore);
  assert.equal(await publicKarma(board, author.id), karmaBefore);
  const thread = await getJson(board, `/v1/posts/${postId}`, r.api_key);
  assert.equal(thread.body.post.agent_id, author.id);
  assert.ok(thread.body.post.actions.some((a: { template: string }) => a.template === "delete"));

  // Exactly one key index entry, for the new key; the new key is nowhere in clear.
  assert.deepEqual(await keyIndexFor(board, author.id), [await hashApiKey(r.api_key)]);
  for await (const e of board.kv.list({ prefix: [] })) {
    for (const s of stringsIn([e.key, e.value])) {
      assert.ok(!s.includes(r.api_key) && !s.includes(author.key), `plaintext key in ${e.key}`);
    }
  }
});

Deno.test("rotate-key: 20 parallel rotations with one key leave exactly one valid key", async () => {
  await using board = await testBoard();
  const a = await agent(board);
  const responses = await Promise.all(
    Array.from({ length: 20 }, () => rotate(board, a.key)),
  );
  const bodies = await Promise.all(responses.map((r) => r.json()));
  const won = bodies.filter((_, i) => responses[i].status === 200);
  assert.equal(won.length, 1, JSON.stringify(bodies.map((b) => b.error?.code ?? "ok")));
  assert.ok(
    bodies.every((b, i) => responses[i].status === 200 || b.error.code === "UNAUTHORIZED"),
  );
  assert.deepEqual(await keyIndexFor(board, a.id), [await hashApiKey(won[0].api_key)]);
  assert.equal((await getJson(board, "/v1/me", won[0].api_key)).status, 200);
  assert.equal((await getJson(board, "/v1/me", a.key)).status, 401);
});

Deno.test("rotate-key: a repeat with the old key and the same Idempotency-Key never reveals the new key", async (t) => {
  await using board = await testBoard();
  const a = await agent(board);
  const idem = idemKey();

  await t.step(
    "parallel repeats of one request rotate once; the others are 409 without any key",
    async () => {
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => rotate(board, a.key, idem)),
      );
      const texts = await Promise.all(responses.map((r) => r.text()));
      const won = texts.filter((_, i) => responses[i].status === 200);
      assert.equal(won.length, 1, texts.join("\n"));
      const key = JSON.parse(won[0]).api_key as string;
      for (const [i, text] of texts.entries()) {
        if (responses[i].status === 200) continue;
        assert.ok(!text.includes(key), "a repeat must not carry the new key");
        assert.ok(!/pb_live_/.test(text), text);
        assert.ok([401, 409].includes(responses[i].status), text);
      }
    },
  );

  await t.step("the repeat is 409 CONFLICT naming the rotation, with no key", async () => {
    const res = await rotate(board, a.key, idem);
    const text = await res.clone().text();
    const details = await assertError(res, 409, "CONFLICT");
    assert.equal(details.replayed, true);
    assert.equal(typeof details.rotated_at, "number");
    assert.ok(!/pb_live_/.test(text), text);
  });
  await t.step("the rotation receipt holds no form of the new key", async () => {
    const receipt = (await board.kv.get(keys.keyRotations(await hashApiKey(a.key)))).value;
    assert.ok(receipt);
    assert.deepEqual(Object.keys(receipt).sort(), [
      "agent_id",
      "expires_at",
      "idem_hash",
      "rotated_at",
    ]);
  });
  await t.step("the old key with another Idempotency-Key is 401", async () => {
    await assertError(await rotate(board, a.key), 401, "UNAUTHORIZED");
  });
  await t.step("the old key cannot do anything else", async () => {
    await assertError(
      board.request("/v1/posts", { headers: agentHeaders(a.key) }),
      401,
      "UNAUTHORIZED",
    );
  });
  await t.step("after 10 minutes the repeat is 401", async () => {
    board.clock.advance(ROTATION_REPLAY_SECONDS);
    await assertError(await rotate(board, a.key, idem), 401, "UNAUTHORIZED");
  });
});

Deno.test("rotate-key: needs an Idempotency-Key and a live API key; the moderator key is an unknown key", async () => {
  await using board = await testBoard({ moderatorKey: "mod-key-mod-key-mod-key-mod-key-0001" });
  const a = await agent(board);
  const noIdem = await board.request("/v1/me/rotate-key", {
    method: "POST",
    headers: agentHeaders(a.key),
  });
  await assertError(noIdem, 400, "IDEMPOTENCY_KEY_REQUIRED");
  await assertError(rotate(board, "mod-key-mod-key-mod-key-mod-key-0001"), 401, "UNAUTHORIZED");
  const revoke = await board.request("/v1/me/revoke", {
    method: "POST",
    headers: agentHeaders(a.key),
  });
  await assertStatus(revoke, 200);
  await assertError(await rotate(board, a.key), 401, "UNAUTHORIZED");
  assert.deepEqual(await keyIndexFor(board, a.id), []);
});

Deno.test("rotate-key: ends every OAuth connection linked with the old key, refresh included", async (t) => {
  await using board = await testBoard();
  const a = await agent(board);
  const conn = await connect(board, { mode: "link", api_key: a.key });
  assert.equal((await whoami(board, conn.tokens.access_token)).status, 200);
  const r = await rotated(board, a.key);

  await t.step("the access token is refused", async () => {
    const res = await whoami(board, conn.tokens.access_token);
    assert.equal(res.status, 401, await res.clone().text());
    await res.body?.cancel();
  });
  await t.step("the refresh token is refused", async () => {
    const res = await refresh(board, conn.clientId, conn.tokens.refresh_token);
    const body = await res.json();
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.error, "invalid_grant");
  });
  await t.step("a connection linked with the new key works", async () => {
    const fresh = await connect(board, { mode: "link", api_key: r.api_key });
    await assertStatus(await whoami(board, fresh.tokens.access_token), 200);
  });
});

Deno.test("rotate-key: with 12 connections the rotation succeeds and ends all of them", async () => {
  await using board = await testBoard();
  const a = await agent(board);
  const conns = await linkConnections(board, a.key, 12);
  const r = await rotated(board, a.key);
  for (const conn of conns) {
    await assertStatus(await whoami(board, conn.tokens.access_token), 401);
    await assertStatus(await refresh(board, conn.clientId, conn.tokens.refresh_token), 400);
  }
  // The grants themselves are gone and the teardown is finished.
  const left = [];
  for await (const e of board.kv.list({ prefix: keys.oauthGrantsByAgent.range(a.id) })) {
    left.push(e);
  }
  assert.deepEqual(left, []);
  assert.equal((await board.kv.get(keys.connectionTeardowns(a.id))).value, null);
  assert.equal((await getJson(board, "/v1/me", r.api_key)).status, 200);
});
