/**
 * `deno task kv:export` and `kv:import` (cli/backup.ts) run as their own processes, as an
 * operator runs them: what they refuse is one line on stderr and exit code 1, and leaves the
 * store as it was.
 */
import assert from "node:assert/strict";

const cli = new URL("../../cli/backup.ts", import.meta.url).pathname;

/** Runs the backup CLI with the permissions of its tasks (deno.json); exit code and stderr. */
async function backup(args: string[], env: Record<string, string>) {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-env", "--allow-read", "--allow-write", "--allow-net", cli, ...args],
    env: { BOARD_SECRET: "", BOARD_ENV: "", ...env },
    stdout: "null",
    stderr: "piped",
  }).output();
  return { code, err: new TextDecoder().decode(stderr).trim() };
}

Deno.test("kv:export naming the store itself (or a file of its own) as the backup refuses, the store kept", async () => {
  const dir = await Deno.makeTempDir();
  const store = `${dir}/board.kv`;
  try {
    {
      await using kv = await Deno.openKv(store);
      for (let i = 0; i < 10; i++) await kv.set(["backup_cli_test", i], `entry ${i}`);
    }
    // `kv:export [file]` read as "the store to export", and the same in other spellings.
    for (const target of [store, `${dir}/../${dir.split("/").pop()}/board.kv`, `${store}-wal`]) {
      const r = await backup(["export", target], { BOARD_KV: store });
      assert.equal(r.code, 1, r.err);
      assert.match(r.err, /^kv:export: \S+ is the store BOARD_KV names, or one of its files: /);
      assert.equal(r.err.split("\n").length, 1, r.err);
    }
    await using kv = await Deno.openKv(store);
    let kept = 0;
    for await (const _ of kv.list({ prefix: ["backup_cli_test"] })) kept++;
    assert.equal(kept, 10, "the store is whole");
    const ok = await backup(["export", `${dir}/backup.ndjson`], { BOARD_KV: store });
    assert.equal(ok.code, 0, ok.err);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kv:export into a link or a file kept private writes where it leads, with its permissions", async () => {
  const dir = await Deno.makeTempDir();
  const store = `${dir}/board.kv`;
  try {
    {
      await using kv = await Deno.openKv(store);
      await kv.set(["backup_cli_test"], "entry");
    }
    await Deno.mkdir(`${dir}/vault`);
    // A backup only its owner may read, reached through a link.
    const kept = `${dir}/vault/kept.ndjson`;
    await Deno.writeTextFile(kept, "");
    await Deno.chmod(kept, 0o600);
    await Deno.symlink("vault/kept.ndjson", `${dir}/latest.ndjson`);
    // A link to a file not made yet.
    await Deno.symlink(`${dir}/vault/first.ndjson`, `${dir}/first.ndjson`);
    for (const [link, written] of [["latest", kept], ["first", `${dir}/vault/first.ndjson`]]) {
      const r = await backup(["export", `${dir}/${link}.ndjson`], { BOARD_KV: store });
      assert.equal(r.code, 0, r.err);
      assert.ok((await Deno.lstat(`${dir}/${link}.ndjson`)).isSymlink, `${link} stays a link`);
      assert.match(await Deno.readTextFile(written), /\{"end":\{"entries":1\}\}\n$/);
    }
    assert.equal((await Deno.stat(kept)).mode! & 0o777, 0o600);
    // Named as it is, too.
    const direct = await backup(["export", kept], { BOARD_KV: store });
    assert.equal(direct.code, 0, direct.err);
    assert.equal((await Deno.stat(kept)).mode! & 0o777, 0o600, "kept private");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kv:export and kv:import on a store that cannot be opened say so in one line", async () => {
  // A KV Connect URL nothing listens on: a port taken, then let go.
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(probe.addr as Deno.NetAddr).port}`;
  probe.close();
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/backup.ndjson`;
    await Deno.writeTextFile(file, '{"key":["x"],"value":1}\n{"end":{"entries":1}}\n');
    for (const args of [["export", `${dir}/out.ndjson`], ["import", file]]) {
      const r = await backup(args, { BOARD_KV: url, DENO_KV_ACCESS_TOKEN: "token" });
      assert.equal(r.code, 1, r.err);
      assert.match(
        r.err,
        new RegExp(`^kv:${args[0]}: the store ${url} \\(BOARD_KV\\) cannot be opened: `),
      );
      assert.equal(r.err.split("\n").length, 1, r.err);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
