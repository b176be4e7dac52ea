/**
 * Your activity through real clients under Node (tests/e2e/node_clients/
 * my_activity_agents.mjs): Node's built-in fetch for REST and the official MCP SDK client
 * (installed by npm: tests/e2e/node_deps.ts) for `get_my_agent` kind "activity", against the
 * board served on loopback.
 */
import assert from "node:assert/strict";
import { getJson, register, testBoard } from "../helpers.ts";
import { serve } from "../mcp_client.ts";
import { nodeModulesDir, nodeScript } from "./node_deps.ts";
import { runTool, toolOutput } from "./run_tool.ts";

const TIMEOUT_MS = 120_000;

Deno.test("Node's fetch and the MCP SDK client: each of three agents sees what concerns it", async () => {
  await nodeModulesDir();
  const script = await nodeScript("my_activity_agents.mjs");
  await using board = await testBoard();
  await using server = serve(board);
  const out = await runTool("node", [script, server.url], { timeoutMs: TIMEOUT_MS });
  assert.equal(out.code, 0, toolOutput(out));
  const made = JSON.parse(out.stdout.trim().split("\n").at(-1)!);
  // The board agrees: the thread the agents talked in has both replies and cat's vote.
  const reader = await register(board);
  const { body } = await getJson(board, `/v1/posts/${made.thread}`, reader.key);
  assert.deepEqual([body.post.reply_count, body.post.up], [2, 1]);
});
