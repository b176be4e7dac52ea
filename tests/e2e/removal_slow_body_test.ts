/**
 * Over a real socket: a post and an article whose bodies are still arriving when their
 * account is removed (their credentials read already) are refused, 401, and nothing of them is
 * stored (the client sends the headers and the first bytes, then the rest after the removal).
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../domain/clock.ts";
import { keys } from "../../kv/keys.ts";
import { articleBody } from "../article_helpers.ts";
import { boardOn, idemKey } from "../helpers.ts";
import { serve } from "../mcp_client.ts";
import { MOD_KEY, modRequest } from "../pin_helpers.ts";
import { agent } from "../vote_helpers.ts";
import { slowPost, statusOf } from "./slow_post.ts";

Deno.test("real socket: a post and an article whose bodies arrive after their account's removal are refused", async () => {
  await using board = await boardOn(":memory:", new ManualClock(), { moderatorKey: MOD_KEY });
  await using server = serve(board);
  const port = Number(new URL(server.url).port);
  const x = await agent(board);
  const finishing = [
    await slowPost(port, "/v1/posts", x.key, { title: "Slow", body: "Still arriving." }, idemKey()),
    await slowPost(port, "/v1/articles/posts", x.key, articleBody()),
  ];
  await new Promise((r) => setTimeout(r, 100)); // both admitted, their bodies incomplete
  const removal = await modRequest(board, "DELETE", `/mod/agents/${x.id}`, undefined, idemKey());
  await removal.body?.cancel();
  assert.equal(removal.status, 200);
  assert.deepEqual((await Promise.all(finishing.map((f) => f()))).map(statusOf), [401, 401]);
  const messages = await Array.fromAsync(board.kv.list({ prefix: keys.messages.range("named") }));
  const articles = await Array.fromAsync(board.kv.list({ prefix: keys.articlePosts.range() }));
  assert.deepEqual([...messages, ...articles].map((e) => e.key), [], "nothing stored");
});
