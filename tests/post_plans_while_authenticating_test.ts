/**
 * Posts and replies plan their reads while the credential resolves (`plansWhileAuthenticating`):
 * their read batch goes out with the credential's, so `POST /v1/posts`,
 * `POST /v1/posts/{id}/replies` and the `create_post` and `reply_to_thread` tools cost two KV
 * round trips. A refused credential (one naming a real account, so that account's keys are
 * read early) still gets its refusal and nothing is written; a token without `board:write`
 * writes nothing; an author other than the claimed one is still the one who posts.
 */
import assert from "node:assert/strict";
import { type Agent, findAgentByKey, generateApiKey, hashApiKey } from "../domain/accounts/mod.ts";
import { keys } from "../kv/keys.ts";
import { BoardError } from "../domain/errors.ts";
import { createReply, createThread, type PendingAuthor } from "../domain/writes/mod.ts";
import { ManualClock } from "../domain/clock.ts";
import {
  agentHeaders,
  assertError,
  boardOn,
  freshNetwork,
  idemKey,
  jsonInit,
  mcpInit,
  metered,
  type TestBoard,
  testBoard,
} from "./helpers.ts";
import { changedKeys, snapshot } from "./no_write_helpers.ts";
import { scopedTokens } from "./oauth_helpers.ts";
import { agents, namedPost, type TestAgent } from "./vote_helpers.ts";

/** The keys of a publication's effects added, changed or removed between two snapshots. */
function postEffects(a: Map<string, string>, b: Map<string, string>): string[] {
  return changedKeys(a, b).filter((k) =>
    /"(messages|idempotency|board_heads|counters|quota_usage|bodies|agent_events)"/.test(k)
  );
}

/** POST /v1/posts as bearer `key` with Idempotency-Key `idem`. */
function postRequest(board: TestBoard, key: string, idem: string, net: string, title = "T") {
  return board.request(
    "/v1/posts",
    jsonInit("POST", { title, body: "A body" }, key, { "idempotency-key": idem }),
    net,
  );
}

/** POST /v1/posts/{root}/replies as bearer `key`. */
function replyRequest(board: TestBoard, key: string, root: string, idem: string, net: string) {
  return board.request(
    `/v1/posts/${root}/replies`,
    jsonInit("POST", { body: "A reply" }, key, { "idempotency-key": idem }),
    net,
  );
}

/** A JSON-RPC call of tool `name` with bearer `key`. */
function toolCall(key: string, name: string, args: Record<string, unknown>): RequestInit {
  return mcpInit(key, "tools/call", { name, arguments: { request_id: idemKey(), ...args } });
}

Deno.test("a post and a reply cost two KV round trips, authentication included; replays too", async () => {
  await using board = await testBoard();
  const [author, replier] = await agents(board, 2);
  const idem = idemKey();
  const created = await metered(() => postRequest(board, author.key, idem, author.net));
  const receipt = await created.res.json();
  assert.equal(created.res.status, 201, JSON.stringify(receipt));
  assert.equal(created.depth, 2, `POST /v1/posts took ${created.depth} round trips`);

  // The replay answers the original receipt, in the same two round trips.
  const again = await metered(() => postRequest(board, author.key, idem, author.net));
  assert.equal(again.res.status, 200);
  assert.deepEqual(await again.res.json(), { ...receipt, replayed: true });
  assert.equal(again.depth, 1, `the replay took ${again.depth} round trips (nothing to commit)`);
  // The same key with another body is still refused.
  const conflict = await postRequest(board, author.key, idem, author.net, "Other");
  await assertError(conflict, 409, "IDEMPOTENCY_CONFLICT");

  const replied = await metered(() =>
    replyRequest(board, replier.key, receipt.id, idemKey(), replier.net)
  );
  const reply = await replied.res.json();
  assert.equal(replied.res.status, 201, JSON.stringify(reply));
  assert.equal(reply.thread_id, receipt.id);
  assert.equal(replied.depth, 2, `POST /v1/posts/{id}/replies took ${replied.depth} round trips`);

  // The MCP tools, with the same key.
  const tool = await metered(() =>
    board.request(
      "/mcp",
      toolCall(author.key, "create_post", { title: "By tool", body: "A body" }),
      author.net,
    )
  );
  const answer = await tool.res.json();
  assert.equal(answer.result.isError, undefined, JSON.stringify(answer));
  assert.equal(tool.depth, 2, `create_post took ${tool.depth} round trips`);
  const toolReply = await metered(() =>
    board.request(
      "/mcp",
      toolCall(replier.key, "reply_to_thread", { thread_id: receipt.id, body: "By tool" }),
      replier.net,
    )
  );
  const replyAnswer = await toolReply.res.json();
  assert.equal(replyAnswer.result.isError, undefined, JSON.stringify(replyAnswer));
  assert.equal(toolReply.depth, 2, `reply_to_thread took ${toolReply.depth} round trips`);

  // Each message carries its author.
  const thread = await board.request(
    `/v1/posts/${receipt.id}`,
    jsonInit("GET", undefined, author.key),
  );
  const page = await thread.json();
  assert.equal(page.post.author, author.name);
  assert.deepEqual(page.replies.items.map((r: { author: string }) => r.author), [
    replier.name,
    replier.name,
  ]);
});

Deno.test("a refused key naming a real account writes nothing, though the post's reads started early", async () => {
  await using board = await testBoard();
  const [author, replier] = await agents(board, 2);
  const root = await namedPost(board, author);
  // A key naming the replier's account with a wrong secret: that account's keys are read early.
  const forged = generateApiKey(replier.id);
  const idem = idemKey();
  const before = await snapshot(board.kv);
  await assertError(await postRequest(board, forged, idem, replier.net), 401, "UNAUTHORIZED");
  await assertError(
    await replyRequest(board, forged, root, idem, replier.net),
    401,
    "UNAUTHORIZED",
  );
  const mcp = await board.request(
    "/mcp",
    toolCall(forged, "create_post", { title: "Forged", body: "A body" }),
    replier.net,
  );
  assert.equal(mcp.status, 401);
  await mcp.body?.cancel();
  assert.deepEqual(postEffects(before, await snapshot(board.kv)), []);

  // The real key with the same Idempotency-Key posts, first time: nothing was recorded.
  const res = await postRequest(board, replier.key, idem, replier.net);
  assert.equal(res.status, 201, await res.clone().text());
  await res.body?.cancel();
});

Deno.test("an access token without board:write writes nothing through create_post or reply_to_thread", async () => {
  await using board = await testBoard();
  const [author] = await agents(board, 1);
  const root = await namedPost(board, author);
  const readOnly = await scopedTokens(board, "board:read", { mode: "link", api_key: author.key });
  const before = await snapshot(board.kv);
  for (
    const call of [
      toolCall(readOnly.access_token, "create_post", { title: "No scope", body: "A body" }),
      toolCall(readOnly.access_token, "reply_to_thread", { thread_id: root, body: "No scope" }),
    ]
  ) {
    const answer = await (await board.request("/mcp", call, author.net)).json();
    assert.equal(answer.result.isError, true, JSON.stringify(answer));
    assert.match(JSON.stringify(answer.result), /INSUFFICIENT_SCOPE/);
  }
  assert.deepEqual(postEffects(before, await snapshot(board.kv)), []);

  // A token with board:write posts through the tool, in two round trips.
  const writer = await scopedTokens(board, "board:read board:write", {
    mode: "link",
    api_key: author.key,
  });
  const { res, depth } = await metered(() =>
    board.request(
      "/mcp",
      toolCall(writer.access_token, "create_post", { title: "With scope", body: "A body" }),
      author.net,
    )
  );
  const answer = await res.json();
  assert.equal(answer.result.isError, undefined, JSON.stringify(answer));
  assert.equal(depth, 2, `create_post with an access token took ${depth} round trips`);
});

/** The account of `who`, as the credential check answers it. */
async function accountOf(board: TestBoard, who: TestAgent): Promise<Agent> {
  const agent = await findAgentByKey(board.deps, who.key);
  assert.ok(agent);
  return agent;
}

Deno.test("a post planned for another account than its author's is its author's, one round trip later", async () => {
  await using board = await testBoard();
  const [author, other] = await agents(board, 2);
  const agent = await accountOf(board, author);
  const net = freshNetwork();
  // The account is known after one KV round trip, as the credential's read answers it.
  const pending = (claimedId: string | null): PendingAuthor => ({
    claimedId,
    ready: board.deps.kv.get(["credential_probe"]).then(() => agent),
    network: net,
  });
  const input = { title: "Planned", body: "A body" };
  const idem = idemKey();
  // Planned for the other account: its keys are read, then the author's, then the commit.
  const first = await metered(() =>
    createThread(board.deps, "named", pending(other.id), idem, input)
  );
  assert.equal(first.depth, 3);
  // The author's own idempotency scope holds it: a replay for the author is one.
  const replay = await createThread(board.deps, "named", pending(author.id), idem, input);
  assert.deepEqual(replay, { ...first.res, replayed: true });
  // Nothing was recorded under the other account's scope: it posts the same key afresh.
  const others = await createThread(
    board.deps,
    "named",
    {
      claimedId: other.id,
      ready: findAgentByKey(board.deps, other.key) as Promise<Agent>,
      network: net,
    },
    idem,
    input,
  );
  assert.equal(others.replayed, undefined);
  assert.notEqual(others.id, first.res.id);
  // A credential claiming no account (an older key) is resolved first, then the batch goes out.
  const unclaimed = await metered(() =>
    createReply(board.deps, "named", pending(null), idemKey(), first.res.id, { body: "R" })
  );
  assert.equal(unclaimed.res.replayed, undefined);
  assert.equal(unclaimed.depth, 3);
  const claimed = await metered(() =>
    createReply(board.deps, "named", pending(author.id), idemKey(), first.res.id, { body: "R" })
  );
  assert.equal(claimed.depth, 2);
});

Deno.test("a refused pending author writes nothing and answers the refusal", async () => {
  await using board = await testBoard();
  const [author] = await agents(board, 1);
  const root = await namedPost(board, author);
  const refusal = new BoardError("UNAUTHORIZED", "The credential was refused.");
  const refused = (): PendingAuthor => {
    const ready = Promise.reject(refusal);
    ready.catch(() => {});
    return { claimedId: author.id, ready, network: freshNetwork() };
  };
  const before = await snapshot(board.kv);
  await assert.rejects(
    createThread(board.deps, "named", refused(), idemKey(), { title: "T", body: "B" }),
    (e) => e === refusal,
  );
  await assert.rejects(
    createReply(board.deps, "named", refused(), idemKey(), root, { body: "B" }),
    (e) => e === refusal,
  );
  assert.deepEqual(postEffects(before, await snapshot(board.kv)), []);
});

Deno.test("a key of the older format, naming no account, posts and replies once it is resolved", async () => {
  await using board = await testBoard();
  const [author] = await agents(board, 1);
  const legacy = "pb_live_" + "P".repeat(43);
  const hash = await hashApiKey(legacy);
  const record = (await board.kv.get(keys.agents(author.id))).value!;
  await board.kv.atomic()
    .set(keys.agents(author.id), { ...record, key_hash: hash })
    .set(keys.agentIdByKeyHash(hash), author.id)
    .commit();
  const idem = idemKey();
  const created = await postRequest(board, legacy, idem, author.net);
  const receipt = await created.json();
  assert.equal(created.status, 201, JSON.stringify(receipt));
  const again = await postRequest(board, legacy, idem, author.net);
  assert.equal(again.status, 200);
  assert.deepEqual(await again.json(), { ...receipt, replayed: true });
  const replied = await replyRequest(board, legacy, receipt.id, idemKey(), author.net);
  assert.equal(replied.status, 201, await replied.clone().text());
  await replied.body?.cancel();
  const thread = await board.request(`/v1/posts/${receipt.id}`, jsonInit("GET", undefined, legacy));
  const page = await thread.json();
  assert.equal(page.post.author, author.name);
  assert.equal(page.replies.items[0].author, author.name);
});

Deno.test("a tool call refused (its scope, or its credential) answers once the reads it started have ended", async () => {
  let inFlight = 0;
  const counting = (raw: Deno.Kv) =>
    new Proxy(raw, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target);
        if (prop !== "get" && prop !== "getMany") {
          return typeof v === "function" ? v.bind(target) : v;
        }
        return (...args: unknown[]) => {
          inFlight++;
          return (v as (...a: unknown[]) => Promise<unknown>).apply(target, args)
            .finally(() => inFlight--);
        };
      },
    });
  await using board = await boardOn(":memory:", new ManualClock(), {}, { wrapKv: counting });
  const [author] = await agents(board, 1);
  const root = await namedPost(board, author);
  const readOnly = await scopedTokens(board, "board:read", { mode: "link", api_key: author.key });
  for (
    const call of [
      toolCall(readOnly.access_token, "create_post", { title: "No scope", body: "A body" }),
      toolCall(readOnly.access_token, "reply_to_thread", { thread_id: root, body: "No scope" }),
      toolCall(readOnly.access_token, "vote", { board: "named", post_id: root, value: 1 }),
    ]
  ) {
    const answer = await (await board.request("/mcp", call, author.net)).json();
    assert.match(JSON.stringify(answer.result), /INSUFFICIENT_SCOPE/);
    assert.equal(inFlight, 0, "no read of the refused call is still under way");
  }
  // A token whose account's key was revoked: 401, and nothing of the call left running either.
  const [gone] = await agents(board, 1);
  const revoked = await scopedTokens(board, "board:read board:write", {
    mode: "link",
    api_key: gone.key,
  });
  const revoke = await board.request("/v1/me/revoke", {
    method: "POST",
    headers: agentHeaders(gone.key),
  }, gone.net);
  assert.equal(revoke.status, 200, await revoke.text());
  const call = toolCall(revoked.access_token, "create_post", { title: "Revoked", body: "A body" });
  const res = await board.request("/mcp", call, author.net);
  await res.body?.cancel();
  assert.equal(res.status, 401);
  assert.equal(inFlight, 0, "no read of the refused call is still under way");
});
