/**
 * `deno task test:unit` is the fast inner loop: every test file outside the folders that
 * `tests/unit/set.ts` leaves out (tests/e2e, tests/cross_process, tests/reliability) runs the
 * app in this process, through `app.request()` or an in-process `Deno.serve`. This test keeps it so:
 * it follows the imports of every file in that set and fails on one that reaches code that
 * starts another process (`Deno.Command`, a worker, a browser through playwright), as the
 * real-server, browser and external-client harnesses of tests/e2e do. Such a test belongs in
 * one of the left-out folders; `deno task test` still runs it.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { OUT_OF_PROCESS, shardFiles, SHARDS, TEST_FILE, unitTestFiles } from "./unit/set.ts";

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), ".."));

/** What starts another process or a browser. */
const STARTS_A_PROCESS: [RegExp, string][] = [
  [/\bDeno\s*\.\s*Command\b/, "Deno.Command"],
  [/\bDeno\s*\.\s*run\s*\(/, "Deno.run"],
  [/\bnew\s+Worker\s*\(/, "a worker"],
  [/["'](?:npm:)?playwright(?:-core)?(?:@[^"']*)?["']/, "playwright"],
];

async function denoTasks(): Promise<Record<string, string>> {
  return JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))).tasks;
}

/** The paths (relative to the root, no trailing slash) a task's `--ignore=` list names. */
function ignoredPaths(task: string): string[] {
  const list = task.match(/--ignore=(\S+)/)?.[1] ?? "";
  return list.split(",").filter(Boolean).map((p) => p.replace(/\/+$/, ""));
}

/** Relative module specifiers a source text imports, statically or dynamically. */
function relativeImports(source: string): string[] {
  const re = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;
  return [...source.matchAll(re)].map((m) => m[1]);
}

const texts = new Map<string, Promise<string | null>>();

/** A module's source, read once; null for a path that is not a local file. */
function sourceOf(file: string): Promise<string | null> {
  let text = texts.get(file);
  if (!text) {
    text = Deno.readTextFile(join(ROOT, file)).catch(() => null);
    texts.set(file, text);
  }
  return text;
}

/**
 * The import chain from `file` to the first module that starts a process, ending with what
 * it uses, or null when none is reached. `seen` holds the modules this walk has visited.
 */
async function chainToProcess(file: string, seen: Set<string>): Promise<string[] | null> {
  if (seen.has(file)) return null;
  seen.add(file);
  const module = await scanned(file);
  if (module === null) return null;
  if (module.starts) return [file, module.starts];
  for (const target of module.imports) {
    const chain = await chainToProcess(target, seen);
    if (chain) return [file, ...chain];
  }
  return null;
}

const scans = new Map<string, Promise<{ starts: string | null; imports: string[] } | null>>();

/**
 * What a module itself starts (the first of `STARTS_A_PROCESS` its text holds) and the files
 * it imports, scanned once however many walks pass through it.
 */
function scanned(file: string): Promise<{ starts: string | null; imports: string[] } | null> {
  let scan = scans.get(file);
  if (!scan) {
    scan = sourceOf(file).then((text) =>
      text === null ? null : {
        starts: STARTS_A_PROCESS.find(([pattern]) => pattern.test(text))?.[1] ?? null,
        imports: relativeImports(text).map((spec) =>
          relative(ROOT, normalize(join(ROOT, dirname(file), spec))).replaceAll("\\", "/")
        ),
      }
    );
    scans.set(file, scan);
  }
  return scan;
}

Deno.test("deno task test:unit: no test file in it reaches code that starts a process", async () => {
  const self = relative(ROOT, fileURLToPath(import.meta.url)).replaceAll("\\", "/");
  const found: string[] = [];
  for (const file of await unitTestFiles()) {
    // Each file gets its own walk, so a shared helper that spawns is reported for every file.
    const chain = await chainToProcess(file, new Set([self]));
    if (chain) found.push(chain.join(" -> "));
  }
  assert.deepEqual(found, []);
});

Deno.test("deno task test:unit leaves out the out-of-process folders; deno task test runs all", async (t) => {
  const tasks = await denoTasks();
  await t.step("the left-out folders exist and hold tests that start processes", async () => {
    assert.deepEqual(OUT_OF_PROCESS, ["tests/e2e", "tests/cross_process", "tests/reliability"]);
    for (const dir of OUT_OF_PROCESS) {
      assert.ok((await Deno.stat(join(ROOT, dir))).isDirectory, dir);
    }
    const chain = await chainToProcess("tests/e2e/compression_clients_test.ts", new Set());
    assert.deepEqual(chain?.at(-1), "Deno.Command", "the check finds a spawning test");
  });
  await t.step("the unit set is tests/ minus those folders, and not empty", async () => {
    const set = await unitTestFiles();
    assert.ok(set.length > 50, `${set.length} files`);
    assert.ok(set.includes("tests/unit_set_test.ts"));
    assert.ok(set.every((f) => !OUT_OF_PROCESS.some((p) => f.startsWith(`${p}/`))));
    assert.ok(set.some((f) => f.startsWith("tests/") && f.split("/").length === 2));
  });
  await t.step(
    "the task runs every shard module, and the shards run each file of the set once",
    async () => {
      const shards = Array.from({ length: SHARDS }, (_, i) => `tests/unit/shard_${i}.ts`);
      assert.deepEqual(tasks["test:unit"].split(" ").filter((a) => a.startsWith("tests/")), shards);
      for (const [i, shard] of shards.entries()) {
        assert.match(
          await Deno.readTextFile(join(ROOT, shard)),
          new RegExp(`await loadShard\\(${i}\\);`),
        );
        assert.doesNotMatch(
          shard,
          TEST_FILE,
          "deno task test over tests/ must not run a shard too",
        );
      }
      const run = (await Promise.all(shards.map((_, i) => shardFiles(i)))).flat().sort();
      assert.deepEqual(run, await unitTestFiles());
    },
  );
  await t.step("the whole suite ignores nothing", () => {
    assert.match(tasks.test, /\btests\/$/);
    assert.deepEqual(ignoredPaths(tasks.test), []);
  });
});
