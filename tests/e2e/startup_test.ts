/**
 * The real entry point (main.ts, as `deno task start` runs it) refuses to start without
 * BOARD_SECRET, with a short BOARD_SECRET, with a short moderator key or with a KV Connect
 * store and no access token, with a clear message and no stack trace.
 */
import assert from "node:assert/strict";
import { freePort, registerAt, startServer } from "./server_process.ts";
import { exportKv, importKv } from "../../cli/backup_format.ts";
import { openKv } from "../../kv/open.ts";

const mainPath = new URL("../../main.ts", import.meta.url).pathname;

/**
 * Runs main.ts with `env` (and `args`, and `permissions`: all by default) until it exits; its
 * exit code and stderr.
 */
async function runMain(env: Record<string, string>, args: string[] = [], permissions = ["-A"]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, mainPath, ...args],
    env: {
      PORT: String(freePort()),
      BOARD_HOSTNAME: "127.0.0.1",
      BOARD_KV: ":memory:",
      BOARD_SECRET: "",
      BOARD_MODERATOR_KEY: "",
      BOARD_ENV: "",
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
    // A server that does start is stopped (and the test fails on its exit code).
    signal: AbortSignal.timeout(30_000),
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

/** The start was refused with exit code 1 and one line matching `said`, not a stack trace. */
function refusedInOneLine(r: { code: number; stderr: string }, said: RegExp) {
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, said);
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /Uncaught|at file:/, "a message, not a stack trace");
}

Deno.test("main.ts without BOARD_SECRET refuses to start (outside deno task dev)", async () => {
  const r = await runMain({});
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^The board cannot start: BOARD_SECRET is not set\./);
  assert.match(r.stderr, /deno task dev/);
  assert.doesNotMatch(r.stderr, /Uncaught|at file:/, "a message, not a stack trace");
});

Deno.test("main.ts with a moderator key under 32 characters refuses to start", async () => {
  const r = await runMain({
    BOARD_SECRET: "startup-test-secret-0123456789abcdef",
    BOARD_MODERATOR_KEY: "too-short-key",
  });
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^The board cannot start: BOARD_MODERATOR_KEY is 13 characters long; it must be at least 32/,
  );
});

Deno.test("main.ts with BOARD_SECRET under 32 characters refuses to start", async () => {
  const r = await runMain({ BOARD_SECRET: "x", BOARD_ENV: "production" });
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^The board cannot start: BOARD_SECRET is 1 characters long; it must be at least 32/,
  );
  assert.doesNotMatch(r.stderr, /Uncaught|at file:/, "a message, not a stack trace");
});

Deno.test("main.ts with a KV Connect store and no access token refuses to start", async () => {
  const r = await runMain({
    BOARD_SECRET: "startup-test-secret-0123456789abcdef",
    BOARD_KV: "https://kv.internal.example:4512",
    DENO_KV_ACCESS_TOKEN: "",
  });
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^The board cannot start: BOARD_KV is a KV Connect URL: set DENO_KV_ACCESS_TOKEN/,
  );
  assert.doesNotMatch(r.stderr, /Uncaught|at file:/, "a message, not a stack trace");
});

Deno.test("main.ts with a malformed variable, or an address it cannot listen on, says which in one line", async () => {
  const secret = "startup-test-secret-0123456789abcdef";
  // A store path below a file: no folder can be made there.
  const file = await Deno.makeTempFile();
  for (
    const [env, said] of [
      [
        { PORT: "99999" },
        /^The board cannot start: PORT must be a whole number from 0 to 65535; it is "99999"\./,
      ],
      [
        { BOARD_BASE_URL: "board.example" },
        /^The board cannot start: BOARD_BASE_URL must be the board's public URL/,
      ],
      [
        { BOARD_TRUST_PROXY: "maybe" },
        /^The board cannot start: BOARD_TRUST_PROXY must be 1 \(on\) or 0 \(off\)/,
      ],
      [
        { BOARD_KV: `${file}/board.kv` },
        /^The board cannot start: the store \S+\/board\.kv \(BOARD_KV\) cannot be opened: /,
      ],
      [
        { BOARD_HOSTNAME: "no-such-host.invalid" },
        /^The board cannot start: cannot listen on no-such-host\.invalid:\d+ \(.+\); check BOARD_HOSTNAME and PORT\./,
      ],
    ] as const
  ) {
    const r = await runMain({ BOARD_SECRET: secret, ...env });
    assert.equal(r.code, 1, JSON.stringify(env));
    assert.match(r.stderr, said);
    assert.doesNotMatch(r.stderr, /Uncaught|at file:/, "a message, not a stack trace");
  }
  await Deno.remove(file);
});

Deno.test("main.ts as deno task dev runs it, on a store outside ./data, names the task that may write there", async () => {
  // The permissions of the dev task (deno.json), without its file watcher.
  const tasks = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)))
    .tasks;
  const permissions = (tasks.dev as string).split(" ").filter((w) => /^--allow-/.test(w));
  assert.ok(permissions.includes("--allow-write=./data"), tasks.dev);
  const dir = await Deno.makeTempDir();
  try {
    const r = await runMain({ BOARD_KV: `${dir}/board.kv` }, ["--dev"], permissions);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /cannot be opened: this process may not read or write there \(`deno task dev` writes under \.\/data only; `deno task start` writes anywhere\)/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Makes a store file one this process cannot write: read-only to its owner, and, for root
 * (whom file modes do not stop), immutable. Returns an undo, or null where neither holds.
 */
async function makeReadOnly(file: string): Promise<(() => Promise<void>) | null> {
  if (Deno.uid() !== 0) {
    await Deno.chmod(file, 0o444);
    return () => Deno.chmod(file, 0o644);
  }
  const chattr = (flag: string) =>
    new Deno.Command("chattr", { args: [flag, file], stderr: "null", stdout: "null" }).output()
      .then((o) => o.success, () => false);
  return await chattr("+i") ? async () => void await chattr("-i") : null;
}

Deno.test("main.ts on a store file it cannot write refuses to start, naming it", async (t) => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/board.kv`;
  // A board that has run: its start-up records are there, so a start writes nothing itself.
  const server = await startServer(file);
  await registerAt(server.url, "written-before");
  await server.stop();
  const undo = await makeReadOnly(file);
  try {
    if (!undo) {
      console.warn("skipped: no way to make a file read-only here (root without chattr)");
      return;
    }
    await t.step("the store is read-only", async () => {
      refusedInOneLine(
        await runMain({ BOARD_SECRET: "startup-test-secret-0123456789abcdef", BOARD_KV: file }),
        /^The board cannot start: the store \S+\/board\.kv \(BOARD_KV\) cannot be written: /,
      );
    });
  } finally {
    await undo?.();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main.ts on a store an import left part-way refuses to start, naming it", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/board.kv`;
  try {
    // A backup of a board, and its import into `file` cut off after the first lines were read
    // (the process killed, a lost session).
    const lines: string[] = [];
    {
      await using source = await Deno.openKv(":memory:");
      for (let i = 0; i < 20; i++) await source.set(["startup_test", i], `entry ${i}`);
      await exportKv(source, (l) => void lines.push(l));
    }
    let passes = 0;
    const cutOff = function* () {
      for (const [i, line] of lines.join("").split("\n").entries()) {
        if (passes === 2 && i === 5) throw new Error("killed");
        yield line;
      }
    };
    const kv = await openKv(file);
    await assert.rejects(() => importKv(kv, () => (passes++, cutOff())), /killed/);
    kv.close();
    refusedInOneLine(
      await runMain({ BOARD_SECRET: "startup-test-secret-0123456789abcdef", BOARD_KV: file }),
      /^The board cannot start: the store \S+\/board\.kv \(BOARD_KV\) holds part of a backup: an import of 20 entries started at \S+ did not finish \(import the backup again into a new, empty store/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
