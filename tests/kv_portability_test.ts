import assert from "node:assert/strict";
import { BackupRefused, exportKv, importKv, StoreChanged } from "../cli/backup_format.ts";
import { isKvConnectUrl, isKvFile, openKv } from "../kv/open.ts";
import { AtomicLimitError, transact } from "../kv/tx.ts";
import { post, register, reply, testBoard } from "./helpers.ts";
import { sourceFiles } from "./source_files.ts";
import { keys } from "../kv/keys.ts";
import { startKvConnectServer } from "./kv_connect/server.ts";

Deno.test("openKv() passes a KV Connect URL to Deno.openKv unchanged and needs the token variable", async () => {
  const url = "https://kv.example.internal/v1/database/1234";
  const seen: (string | undefined)[] = [];
  const fake = async (p?: string) => {
    seen.push(p);
    return await Deno.openKv(":memory:");
  };
  const before = Deno.env.get("DENO_KV_ACCESS_TOKEN");
  try {
    Deno.env.delete("DENO_KV_ACCESS_TOKEN");
    await assert.rejects(() => openKv(url, fake), /DENO_KV_ACCESS_TOKEN/);
    Deno.env.set("DENO_KV_ACCESS_TOKEN", "token-for-test");
    const kv = await openKv(url, fake);
    kv.close();
    assert.deepEqual(seen, [url]);
    assert.ok(isKvConnectUrl(url));
    assert.ok(!isKvConnectUrl("./data/board.kv"));
    assert.ok(isKvFile("./data/board.kv"));
    assert.ok(!isKvFile(url) && !isKvFile(":memory:") && !isKvFile(undefined));
    // No path at all is the platform default store (Deno Deploy).
    const kv2 = await openKv(undefined, fake);
    kv2.close();
    assert.deepEqual(seen, [url, undefined]);
  } finally {
    if (before === undefined) Deno.env.delete("DENO_KV_ACCESS_TOKEN");
    else Deno.env.set("DENO_KV_ACCESS_TOKEN", before);
  }
});

/** A checked write, a read and a delete through `openKv` on the KV Connect store at `url`. */
async function liveStoreRoundTrip(url: string | undefined) {
  const kv = await openKv(url);
  try {
    const key = ["board_live_test", crypto.randomUUID()];
    const res = await kv.atomic().check({ key, versionstamp: null }).set(key, 1).commit();
    assert.ok(res.ok);
    assert.equal((await kv.get(key)).value, 1);
    const again = await kv.atomic().check({ key, versionstamp: null }).set(key, 2).commit();
    assert.ok(!again.ok, "a check on a key written since fails");
    await kv.delete(key);
    assert.equal((await kv.get(key)).versionstamp, null);
  } finally {
    kv.close();
  }
}

Deno.test({
  name: "live KV Connect store (runs when BOARD_TEST_KV_URL is set)",
  ignore: !Deno.env.get("BOARD_TEST_KV_URL"),
  fn: () => liveStoreRoundTrip(Deno.env.get("BOARD_TEST_KV_URL")),
});

Deno.test("the same round trip on the KV Connect test server (tests/kv_connect/server.ts)", async () => {
  await using server = await startKvConnectServer();
  const before = Deno.env.get("DENO_KV_ACCESS_TOKEN");
  try {
    Deno.env.set("DENO_KV_ACCESS_TOKEN", server.token);
    await liveStoreRoundTrip(server.url);
  } finally {
    if (before === undefined) Deno.env.delete("DENO_KV_ACCESS_TOKEN");
    else Deno.env.set("DENO_KV_ACCESS_TOKEN", before);
  }
});

Deno.test("kv import into the KV Connect test server: commits of more than 64 KiB with bytes values", async () => {
  // The shape of a board's backup: bytes values (term filters) among text of some size.
  await using source = await Deno.openKv(":memory:");
  for (let i = 0; i < 40; i++) await source.set(["search_filters", i], new Uint8Array(64).fill(i));
  for (let i = 0; i < 20; i++) await source.set(["bodies", "named", i], "text ".repeat(800));
  const lines: string[] = [];
  const n = await exportKv(source, (l) => void lines.push(l));
  await using server = await startKvConnectServer();
  const before = Deno.env.get("DENO_KV_ACCESS_TOKEN");
  try {
    Deno.env.set("DENO_KV_ACCESS_TOKEN", server.token);
    const target = await Deno.openKv(server.url);
    try {
      assert.equal(await importKv(target, () => lines.join("").split("\n")), n);
      const back = [];
      for await (const e of target.list({ prefix: [] })) back.push([e.key, e.value]);
      const src = [];
      for await (const e of source.list({ prefix: [] })) src.push([e.key, e.value]);
      assert.deepEqual(back, src);
    } finally {
      target.close();
    }
  } finally {
    if (before === undefined) Deno.env.delete("DENO_KV_ACCESS_TOKEN");
    else Deno.env.set("DENO_KV_ACCESS_TOKEN", before);
  }
});

Deno.test("the code never uses KV features Deno Deploy or KV Connect lack (queues, watch)", async () => {
  const offenders: string[] = [];
  for await (const { path, text } of sourceFiles()) {
    for (const needle of [".enqueue(", "listenQueue(", ".watch(", "Deno.openKv("]) {
      if (text.includes(needle) && !(needle === "Deno.openKv(" && path === "kv/open.ts")) {
        offenders.push(`${path}: ${needle}`);
      }
    }
  }
  assert.deepEqual(offenders, []);
});

Deno.test("transact() refuses an atomic beyond the portable limits", async (t) => {
  await using kv = await Deno.openKv(":memory:");
  await t.step("11 checks", async () => {
    await assert.rejects(
      () =>
        transact(kv, async (tx) => {
          await tx.getMany(Array.from({ length: 11 }, (_, i) => ["k", i]));
          tx.set(["out"], 1);
        }),
      AtomicLimitError,
    );
  });
  await t.step("1001 mutations", async () => {
    await assert.rejects(
      () =>
        transact(kv, (tx) => {
          for (let i = 0; i < 1001; i++) tx.set(["m", i], i);
          return Promise.resolve();
        }),
      AtomicLimitError,
    );
  });
  await t.step("a value over 64 KiB", async () => {
    await assert.rejects(
      () => transact(kv, (tx) => Promise.resolve(void tx.set(["big"], "x".repeat(70_000)))),
      AtomicLimitError,
    );
  });
  await t.step("a value over 64 KiB as KV stores it, though its UTF-8 is half that", async () => {
    // One character above U+00FF makes V8 store the whole string at two bytes per unit.
    const stored = "x".repeat(32_766) + "😀";
    await assert.rejects(
      () => transact(kv, (tx) => Promise.resolve(void tx.set(["big"], { text: stored }))),
      AtomicLimitError,
    );
    const fits = { text: "x".repeat(32_750) + "😀" };
    await transact(kv, (tx) => Promise.resolve(void tx.set(["big"], fits)));
    assert.deepEqual((await kv.get(["big"])).value, fits);
  });
  await t.step("10 checks and 1000 mutations pass", async () => {
    await transact(kv, async (tx) => {
      await tx.getMany(Array.from({ length: 10 }, (_, i) => ["k", i]));
      // The 1000th mutation is the read-version bump a versioned handle adds (kv/versioned_kv.ts).
      for (let i = 0; i < 999; i++) tx.set(["m", i], i);
    });
    assert.equal((await kv.get(["m", 998])).value, 998);
  });
});

Deno.test("Tx: the last set or delete of a key wins, counts once, and own() sees it", async () => {
  await using kv = await Deno.openKv(":memory:");
  await kv.set(["gone"], 1);
  await transact(kv, (tx) => {
    for (let i = 0; i < 1500; i++) tx.set(["k"], i); // one mutation, not 1,500
    assert.deepEqual(tx.own(["k"]), { value: 1499 });
    tx.set(["gone"], 2).delete(["gone"]);
    assert.deepEqual(tx.own(["gone"]), { value: null });
    assert.equal(tx.own(["never"]), undefined);
    return Promise.resolve();
  });
  assert.equal((await kv.get(["k"])).value, 1499);
  assert.equal((await kv.get(["gone"])).versionstamp, null);
});

Deno.test("kv export/import round-trips the whole store", async () => {
  await using board = await testBoard();
  const a = await register(board);
  const p = await post(board, a.key, { title: "backup me", body: "ü 😀" });
  await reply(board, a.key, p.id, "and me");
  await board.kv.set(["backup_test", 1n, new Uint8Array([1, 2])], {
    big: 12345678901234567890n,
    bytes: new Uint8Array([0, 255]),
    when: new Date(1000),
    nothing: undefined,
  });
  await board.kv.set(["backup_test", "u64"], new Deno.KvU64(7n));
  const lines: string[] = [];
  const n = await exportKv(board.kv, (l) => void lines.push(l));
  assert.ok(n > 10);
  await using target = await Deno.openKv(":memory:");
  assert.equal(await importKv(target, () => lines.join("").split("\n")), n);
  const src = [];
  for await (const e of board.kv.list({ prefix: [] })) src.push([e.key, e.value]);
  const dst = [];
  for await (const e of target.list({ prefix: [] })) dst.push([e.key, e.value]);
  assert.deepEqual(dst, src);
});

Deno.test("kv export of a store written meanwhile writes no end line: the file would mix states", async () => {
  await using board = await testBoard();
  const a = await register(board);
  for (let i = 0; i < 3; i++) await post(board, a.key, { title: `before ${i}` });
  // A post lands while the export is part-way through its listing: after the board heads were
  // read, before the messages were.
  let posted = false;
  const during = new Proxy(board.kv, {
    get(target, prop) {
      if (prop !== "list") return Reflect.get(target, prop, target);
      return (selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
        const inner = target.list(selector, options);
        return (async function* () {
          for await (const e of inner) {
            yield e;
            if (!posted && e.key[0] === "bodies") {
              posted = true;
              await post(board, a.key, { title: "during the export" });
            }
          }
        })();
      };
    },
  });
  const lines: string[] = [];
  await assert.rejects(
    () => exportKv(during, (l) => void lines.push(l)),
    (e: Error) => e instanceof StoreChanged && /changed while it was read/.test(e.message),
  );
  assert.ok(posted);
  assert.ok(!lines.some((l) => l.startsWith('{"end"')), "no end line: an import refuses the file");
  // Also as a file made before end lines existed (as the refusal of a file without one suggests).
  await using target = await Deno.openKv(":memory:");
  await assert.rejects(
    () => importKv(target, () => lines.join("").split("\n"), { endLine: false }),
    (e: Error) =>
      e instanceof BackupRefused && /store changed while the export read/.test(e.message),
  );
  for await (const e of target.list({ prefix: [] })) assert.fail(`wrote ${e.key}`);
  // With the writes stopped, the export is whole, and its board head covers every message.
  lines.length = 0;
  const n = await exportKv(board.kv, (l) => void lines.push(l));
  const entries = lines.slice(0, n).map((l) => JSON.parse(l));
  const head = entries.find((e) => e.key[0] === "board_heads" && e.key[1] === "named").value.seq;
  const seqs = entries.filter((e) => e.key[0] === "messages" && e.key[1] === "named");
  assert.ok(seqs.every((e) => e.key[2] <= head));
});

Deno.test("kv import commits within the atomic limits: a backup of long keys imports whole", async () => {
  await using kv = await Deno.openKv(":memory:");
  // The idempotency records of 520 posts sent with 128-character keys (the longest allowed):
  // 190 bytes a key, 80 KB of keys in a little over 400 of them.
  const agent = crypto.randomUUID();
  const record = { print: "0".repeat(64), seq: 1, id: crypto.randomUUID(), at: 1 };
  for (let i = 0; i < 520; i++) {
    const key = `${"k".repeat(120)}${String(i).padStart(8, "0")}`;
    await kv.set(keys.idempotency("named", agent, key), { ...record, seq: i + 1 });
  }
  const lines: string[] = [];
  const n = await exportKv(kv, (l) => void lines.push(l));
  await using target = await Deno.openKv(":memory:");
  assert.equal(await importKv(target, () => lines.join("").split("\n")), n);
  const count = async (store: Deno.Kv) => {
    let c = 0;
    for await (const _ of store.list({ prefix: [] })) c++;
    return c;
  };
  assert.equal(await count(target), n);
});

Deno.test("kv import commits within the atomic limits: a backup of long English bodies with curly quotes imports whole", async () => {
  await using kv = await Deno.openKv(":memory:");
  // The body entries of 120 posts near the 8,192-byte limit: ASCII text with one character
  // above U+00FF is stored at two bytes a character, twice its UTF-8 length.
  const rest = "The reviewer said \u201cthis is fine\u201d and moved on to the next part. ".repeat(
    110,
  )
    .slice(0, 7900);
  for (let i = 1; i <= 120; i++) {
    await kv.set(keys.bodies("named", i), { rest, terms: "reviewer fine", topic: null });
  }
  const lines: string[] = [];
  const n = await exportKv(kv, (l) => void lines.push(l));
  await using target = await Deno.openKv(":memory:");
  assert.equal(await importKv(target, () => lines.join("").split("\n")), n);
  let count = 0;
  for await (const _ of target.list({ prefix: [] })) count++;
  assert.equal(count, n);
});

Deno.test("kv import refuses a backup cut short or changed, or a store not empty, writing nothing", async () => {
  await using board = await testBoard();
  const a = await register(board);
  await post(board, a.key, { title: "backup me", body: "whole or not at all" });
  const lines: string[] = [];
  const n = await exportKv(board.kv, (l) => void lines.push(l));
  const empty = async (kv: Deno.Kv) => {
    for await (const _ of kv.list({ prefix: [] })) return false;
    return true;
  };
  const cases: [string, string[], RegExp][] = [
    ["cut at a line end", lines.slice(0, n - 3), /no end line/],
    ["cut inside a line", [...lines.slice(0, 4), lines[4].slice(0, 20)], /line 5 is not JSON/],
    [
      "an entry left out",
      [...lines.slice(0, 2), ...lines.slice(3)],
      /says \d+ entries, the file holds/,
    ],
    [
      "a line that is no entry",
      [...lines.slice(0, 2), "{}\n", ...lines.slice(2)],
      /line 3 is neither/,
    ],
    ["lines after the end", [...lines, lines[0]], /after the end line/],
    [
      "a line twice, the count raised to match",
      [...lines.slice(0, n), lines[1], JSON.stringify({ end: { entries: n + 1 } }) + "\n"],
      /line \d+ repeats the key of line 2/,
    ],
  ];
  for (const [what, cut, why] of cases) {
    await using target = await Deno.openKv(":memory:");
    await assert.rejects(
      () => importKv(target, () => cut.join("").split("\n")),
      (e: Error) => e instanceof BackupRefused && why.test(e.message),
      what,
    );
    assert.ok(await empty(target), `${what}: nothing written`);
  }
  // An export made before end lines: accepted only when asked for.
  await using older = await Deno.openKv(":memory:");
  const withoutEnd = () => lines.slice(0, n).join("").split("\n");
  await assert.rejects(() => importKv(older, withoutEnd), /no end line/);
  assert.equal(await importKv(older, withoutEnd, { endLine: false }), n);
  // A store that holds entries: an import would mix two boards' sequences.
  await assert.rejects(
    () => importKv(older, () => lines.join("").split("\n")),
    (e: Error) => e instanceof BackupRefused && /already holds entries/.test(e.message),
  );
});

Deno.test("kv import refuses, writing nothing, a line whose entry KV could not store", async () => {
  await using board = await testBoard();
  const a = await register(board);
  await post(board, a.key, { title: "backup me", body: "every line storable" });
  const lines: string[] = [];
  const n = await exportKv(board.kv, (l) => void lines.push(l));
  /** The backup with its second line replaced, the end line still matching. */
  const withLine = (entry: string) => [lines[0], entry + "\n", ...lines.slice(2)];
  const cases: [string, string, RegExp][] = [
    ["bytes that are not base64", `{"key":["x"],"value":{"$bytes":"!!!!"}}`, /does not decode/],
    ["a bigint that is no number", `{"key":["x"],"value":{"$bigint":"12x"}}`, /does not decode/],
    ["an empty key", `{"key":[],"value":1}`, /key is empty/],
    ["an object in a key", `{"key":[{"a":1}],"value":1}`, /part KV keys cannot hold/],
    [
      "undefined in a key",
      `{"key":["x",{"$undefined":true}],"value":1}`,
      /part KV keys cannot hold \(undefined\)/,
    ],
    ["a key over 2 KB", JSON.stringify({ key: ["x".repeat(3000)], value: 1 }), /key is \d+ bytes/],
    ["a value over 64 KiB", JSON.stringify({ key: ["x"], value: "x".repeat(70_000) }), /value/],
  ];
  for (const [what, entry, why] of cases) {
    await using target = await Deno.openKv(":memory:");
    await assert.rejects(
      () => importKv(target, () => withLine(entry).join("").split("\n")),
      (e: Error) => e instanceof BackupRefused && /line 2 /.test(e.message) && why.test(e.message),
      what,
    );
    for await (const e of target.list({ prefix: [] })) assert.fail(`${what}: wrote ${e.key}`);
  }
  assert.ok(n > 2);
});

Deno.test("kv import stopped part-way leaves a store that a new import and an export refuse, by name", async () => {
  await using board = await testBoard();
  const a = await register(board);
  await post(board, a.key, { title: "backup me", body: "whole or not at all" });
  const lines: string[] = [];
  const n = await exportKv(board.kv, (l) => void lines.push(l));
  const whole = () => lines.join("").split("\n");
  // The process dies with part of the backup written (here: after its first lines were read).
  let passes = 0;
  const dying = function* () {
    const all = whole();
    for (const [i, line] of all.entries()) {
      if (passes === 2 && i === 5) throw new Error("killed");
      yield line;
    }
  };
  await using target = await Deno.openKv(":memory:");
  await assert.rejects(() => importKv(target, () => (passes++, dying())), /killed/);
  let written = 0;
  for await (const _ of target.list({ prefix: [] })) written++;
  assert.ok(written > 0 && written < n, "part of the backup is in the store");
  const partOfABackup = (e: Error) =>
    e instanceof BackupRefused &&
    /holds part of a backup: an import of \d+ entries/.test(e.message);
  await assert.rejects(() => importKv(target, whole), partOfABackup, "a new import");
  await assert.rejects(() => exportKv(target, () => {}), partOfABackup, "an export");
  // A whole import leaves nothing of its own behind.
  await using fresh = await Deno.openKv(":memory:");
  assert.equal(await importKv(fresh, whole), n);
  await exportKv(fresh, () => {});
});

Deno.test("kv import refuses a store another writer commits to between its check and its first commit", async (t) => {
  await using board = await testBoard();
  const a = await register(board);
  await post(board, a.key, { title: "backup me", body: "into an empty store only" });
  const lines: string[] = [];
  const n = await exportKv(board.kv, (l) => void lines.push(l));
  const firstKey = JSON.parse(lines[0]).key as Deno.KvKey;
  /**
   * `kv`, but `write` commits (as another process would) just before the import's first commit,
   * or just after it with `after`.
   */
  const writerAtFirstCommit = (
    kv: Deno.Kv,
    write: () => Promise<unknown>,
    after = false,
  ): Deno.Kv =>
    new Proxy(kv, {
      get(target, prop) {
        if (prop !== "atomic") {
          const v = Reflect.get(target, prop, target);
          return typeof v === "function" ? v.bind(target) : v;
        }
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          return Object.assign(op, {
            commit: async () => {
              const w = write;
              write = () => Promise.resolve();
              if (!after) await w();
              const res = await commit();
              if (after) await w();
              return res;
            },
          });
        };
      },
    });
  const stored = async (kv: Deno.Kv) => {
    const all = [];
    for await (const e of kv.list({ prefix: [] })) all.push([e.key, e.value]);
    return all;
  };
  for (
    const [what, key] of [
      ["a key of its own", ["backup_race_test"]],
      ["the backup's first key", firstKey],
    ] as const
  ) {
    await t.step(`a write of ${what}`, async () => {
      await using raw = await Deno.openKv(":memory:");
      const target = writerAtFirstCommit(raw, () => raw.set(key, "the other writer's"));
      await assert.rejects(
        () => importKv(target, () => lines.join("").split("\n")),
        (e: Error) => e instanceof BackupRefused && /another writer/.test(e.message),
      );
      assert.deepEqual(await stored(raw), [[key, "the other writer's"]], "nothing imported");
    });
  }
  await t.step(
    "a write replacing the backup's first key just after it landed is kept",
    async () => {
      await using raw = await Deno.openKv(":memory:");
      const write = () => raw.set(firstKey, "the other writer's");
      const target = writerAtFirstCommit(raw, write, true);
      await assert.rejects(
        () => importKv(target, () => lines.join("").split("\n")),
        (e: Error) => e instanceof BackupRefused && /another writer/.test(e.message),
      );
      // The import takes back only its own entry: the other writer's value stays.
      assert.deepEqual(await stored(raw), [[firstKey, "the other writer's"]]);
    },
  );
  await t.step("no other writer: the whole backup", async () => {
    await using target = await Deno.openKv(":memory:");
    assert.equal(await importKv(target, () => lines.join("").split("\n")), n);
  });
});

Deno.test("utf8Length(): the byte count TextEncoder produces, without encoding", async () => {
  const { utf8Length } = await import("../domain/text.ts");
  const encoder = new TextEncoder();
  const samples = [
    "",
    "ascii",
    "é",
    "日本語",
    "😀",
    "a😀b",
    "\ud800",
    "x\udc00y",
    "\ud83d",
    "\ud83dz",
    "€".repeat(3000),
  ];
  for (const s of samples) {
    assert.equal(utf8Length(s), encoder.encode(s).length, JSON.stringify(s.slice(0, 8)));
  }
});
