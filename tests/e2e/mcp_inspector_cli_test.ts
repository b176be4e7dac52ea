/**
 * The MCP Inspector CLI (`@modelcontextprotocol/inspector-cli`, pinned in
 * tests/e2e/node_clients, installed by tests/e2e/node_deps.ts) against the board on loopback,
 * run as a person runs it (`mcp-inspector-cli --cli <url> --method … --header …`): with an
 * OAuth bearer token and with an API key, it lists the tools, calls a read and a write.
 */
import assert from "node:assert/strict";
import { register, testBoard } from "../helpers.ts";
import { serve } from "../mcp_client.ts";
import { connect } from "../oauth_helpers.ts";
import { nodeModulesDir } from "./node_deps.ts";
import { runTool, toolOutput } from "./run_tool.ts";

const TIMEOUT_MS = 60_000;
const PACKAGE = "node_modules/@modelcontextprotocol/inspector-cli";

/**
 * The CLI's own name and version are read from `../package.json`, checked relative to the
 * working directory but imported relative to the module: it works when run from its
 * `build` directory (as `npx` in a project of its own would find it), so it is run there.
 */
function run(dir: string, args: string[]) {
  return runTool("node", [`${dir}/${PACKAGE}/build/cli.js`, "--cli", ...args], {
    cwd: `${dir}/${PACKAGE}/build`,
    timeoutMs: TIMEOUT_MS,
  });
}

/** Runs the Inspector CLI against `url` with `Authorization: Bearer <bearer>`; parses its JSON. */
async function inspector(dir: string, url: string, bearer: string, args: string[]) {
  const r = await run(dir, [
    url,
    "--transport",
    "http",
    "--header",
    `Authorization: Bearer ${bearer}`,
    ...args,
  ]);
  assert.equal(r.code, 0, toolOutput(r));
  return JSON.parse(r.stdout);
}

/** A tool result's JSON (structured content, else its text). */
function toolJson(result: { structuredContent?: unknown; content: { text: string }[] }) {
  return (result.structuredContent ?? JSON.parse(result.content[0].text)) as Record<
    string,
    unknown
  >;
}

Deno.test("the MCP Inspector CLI with an OAuth bearer token and with an API key", async (t) => {
  const dir = await nodeModulesDir(); // npm ci on a fresh machine
  await using board = await testBoard();
  await using server = serve(board);
  const url = `${server.url}/mcp`;
  const agent = await register(board);
  const { tokens } = await connect(board, { mode: "link", api_key: agent.key });

  for (const [label, bearer] of [["OAuth token", tokens.access_token], ["API key", agent.key]]) {
    await t.step(`${label}: tools/list, a read and a write`, async () => {
      const listed = await inspector(dir, url, bearer, ["--method", "tools/list"]);
      const names = (listed.tools as { name: string }[]).map((tool) => tool.name);
      assert.ok(names.includes("get_my_agent") && names.includes("create_post"), String(names));
      const me = toolJson(
        await inspector(dir, url, bearer, [
          "--method",
          "tools/call",
          "--tool-name",
          "get_my_agent",
        ]),
      );
      assert.equal(me.id, agent.id);
      const created = await inspector(dir, url, bearer, [
        "--method",
        "tools/call",
        "--tool-name",
        "create_post",
        "--tool-arg",
        `title=Posted by the Inspector (${label})`,
        "body=A write from the MCP Inspector CLI.",
        `request_id=inspector-${crypto.randomUUID()}`,
      ]);
      assert.notEqual(created.isError, true, JSON.stringify(created));
      const receipt = toolJson(created);
      const thread = await board.request(`/v1/posts/${receipt.id}`, {
        headers: {
          authorization: `Bearer ${agent.key}`,
          accept: "application/json",
          "x-agent-protocol": "board/1",
        },
      });
      const body = await thread.json();
      assert.equal(thread.status, 200, JSON.stringify(body));
      assert.equal(body.post.agent_id, agent.id);
    });
  }

  await t.step("a bad bearer is refused (the CLI exits non-zero)", async () => {
    const r = await run(dir, [
      url,
      "--transport",
      "http",
      "--header",
      `Authorization: Bearer pb_at_${"A".repeat(43)}`,
      "--method",
      "tools/list",
    ]);
    assert.notEqual(r.code, 0, toolOutput(r));
  });
});
