/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, run with Deno) against the
 * board's /mcp, through a small loopback proxy that adds the bearer credential.
 */
import assert from "node:assert/strict";
import { register, testBoard } from "../helpers.ts";
import { serve } from "../mcp_client.ts";

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
  try {
    for (const scenario of SCENARIOS) {
      await t.step(scenario, async () => {
        const out = await new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "-A",
            "npm:@modelcontextprotocol/conformance@0.1.16",
            "server",
            "--url",
            `http://127.0.0.1:${proxy.addr.port}/mcp`,
            "--scenario",
            scenario,
          ],
          stdout: "piped",
          stderr: "piped",
          cwd: new URL("../../", import.meta.url).pathname,
        }).output();
        const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
        assert.ok(out.success, text);
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
