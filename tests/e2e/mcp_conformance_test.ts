/**
 * The MCP conformance suite (@modelcontextprotocol/conformance) against the board's /mcp,
 * through a small loopback proxy that adds the bearer credential.
 *
 * The suite is installed by npm (tests/e2e/node_deps.ts) and run by Deno from that
 * node_modules with a Deno cache of its own. Not `deno run npm:…` in the shared cache: on a
 * fresh machine Deno 2.9.6 deadlocks there (no CPU, no output, forever) loading the suite's
 * `require()` of an ES module (async-function's "module-sync" export, under express) once the
 * test process has already filled the cache's CommonJS analysis for the same packages. (The
 * suite needs Node 22's `fs.globSync`, so Node 20 cannot run it.) Each run is bounded in time.
 */
import assert from "node:assert/strict";
import { register, testBoard } from "../helpers.ts";
import { serve } from "../mcp_client.ts";
import { nodeModulesDir } from "./node_deps.ts";
import { runTool, toolOutput } from "./run_tool.ts";

const SCENARIOS = ["server-initialize", "ping", "tools-list"];

Deno.test("MCP conformance: server-initialize, ping, tools-list", async (t) => {
  await using board = await testBoard();
  await using server = serve(board);
  const a = await register(board);
  const proxy = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const headers = new Headers(req.headers);
    headers.set("authorization", `Bearer ${a.key}`);
    headers.delete("host");
    const body = req.method === "GET" || req.method === "HEAD"
      ? undefined
      : await req.arrayBuffer();
    return await fetch(`${server.url}${url.pathname}${url.search}`, {
      method: req.method,
      headers,
      body,
    });
  });
  const dir = await nodeModulesDir();
  const cli = `${dir}/node_modules/@modelcontextprotocol/conformance/dist/index.js`;
  try {
    for (const scenario of SCENARIOS) {
      await t.step(scenario, async () => {
        const url = `http://127.0.0.1:${proxy.addr.port}/mcp`;
        const out = await runTool(
          Deno.execPath(),
          ["run", "-A", cli, "server", "--url", url, "--scenario", scenario],
          { cwd: dir, env: { DENO_DIR: `${dir}/.deno-dir` }, timeoutMs: 90_000 },
        );
        const text = out.stdout + out.stderr;
        assert.equal(out.code, 0, toolOutput(out));
        const result = text.match(/Passed: (\d+)\/(\d+), (\d+) failed/);
        assert.ok(result, text);
        assert.equal(result[1], result[2], text);
        assert.ok(Number(result[2]) > 0, "the scenario ran at least one check");
        assert.equal(result[3], "0", text);
      });
    }
  } finally {
    await proxy.shutdown();
  }
});
