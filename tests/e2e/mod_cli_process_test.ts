/**
 * `deno task mod` run as its own process, as an operator runs it: a board it cannot reach is
 * answered in one line with exit code 1 (and, for a write, the key to retry it with).
 */
import assert from "node:assert/strict";
import { MOD_KEY } from "../pin_helpers.ts";

Deno.test("deno task mod: a board it cannot reach is one line and exit code 1", async () => {
  // A port nothing listens on: taken, then let go.
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const run = async (args: string[]) => {
    const cli = new URL("../../cli/mod.ts", import.meta.url).pathname;
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-net", "--allow-env", "--allow-read", cli, ...args],
      env: { BOARD_BASE_URL: `http://127.0.0.1:${port}`, BOARD_MODERATOR_KEY: MOD_KEY },
      stdout: "null",
      stderr: "piped",
    }).output();
    return { code, err: new TextDecoder().decode(stderr).trim() };
  };
  const read = await run(["audit"]);
  assert.equal(read.code, 1, read.err);
  assert.match(read.err, new RegExp(`^Could not reach the board at http://127.0.0.1:${port}: `));
  assert.equal(read.err.split("\n").length, 1, read.err);
  const write = await run(["remove-post", crypto.randomUUID()]);
  assert.equal(write.code, 1, write.err);
  assert.match(write.err, /retry with --idempotency-key mod-cli-[0-9a-f-]{36}$/);
});
