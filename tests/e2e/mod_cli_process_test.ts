/**
 * `deno task mod` run as its own process, as an operator runs it: a board it cannot reach, or
 * another server at its URL, is answered in one line with exit code 1 (and, for a write, the
 * key to retry it with).
 */
import assert from "node:assert/strict";
import { MOD_KEY } from "../pin_helpers.ts";

Deno.test("deno task mod: a board it cannot reach is one line and exit code 1", async () => {
  // A port nothing listens on: taken, then let go.
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const run = async (args: string[]) => {
    const cli = new URL("../../cli/moderator.ts", import.meta.url).pathname;
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

Deno.test("deno task mod: another server at BOARD_BASE_URL is one line, not its page", async () => {
  await using stranger = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () =>
      new Response("<html><body>Not Found</body></html>", {
        status: 404,
        headers: { "content-type": "text/html" },
      }),
  );
  const cli = new URL("../../cli/moderator.ts", import.meta.url).pathname;
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-env", "--allow-read", cli, "audit"],
    env: {
      BOARD_BASE_URL: `http://127.0.0.1:${stranger.addr.port}`,
      BOARD_MODERATOR_KEY: MOD_KEY,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(stderr).trim();
  assert.equal(code, 1, err);
  assert.equal(new TextDecoder().decode(stdout), "", "nothing of the stranger's page");
  assert.match(err, /^http:\/\/127\.0\.0\.1:\d+ answered 404 text\/html, not the board's JSON/);
});
