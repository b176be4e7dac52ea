/**
 * `deno task test:unit` is the fast inner loop: every test file outside the folders its
 * `--ignore` list names (tests/e2e, tests/cross_process, tests/reliability) runs the app in
 * this process, through `app.request()` or an in-process `Deno.serve`. This test keeps it so:
 * it follows the imports of every file in that set and fails on one that reaches code that
 * starts another process (`Deno.Command`, a worker, a browser through playwright), as the
 * real-server, browser and external-client harnesses of tests/e2e do. Such a test belongs in
 * one of the ignored folders; `deno task test` still runs it.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), ".."));

/** What starts another process or a browser. */
const STARTS_A_PROCESS: [RegExp, string][] = [
  [/\bDeno\s*\.\s*Command\b/, "Deno.Command"],
  [/\bDeno\s*\.\s*run\s*\(/, "Deno.run"],
  [/\bnew\s+Worker\s*\(/, "a worker"],
  [/["'](?:npm:)?playwright(?:-core)?(?:@[^"']*)?["']/, "playwright"],
];

/** The file names `deno test` picks up in a folder it is given. */
const TEST_FILE = /(?:^|[_.])test\.(?:ts|tsx|mts|js|mjs|jsx)$/;

async function denoTasks(): Promise<Record<string, string>> {
  return JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))).tasks;
}

/** The paths (relative to the root, no trailing slash) a task's `--ignore=` list names. */
export function ignoredPaths(task: string): string[] {
  const list = task.match(/--ignore=(\S+)/)?.[1] ?? "";
  return list.split(",").filter(Boolean).map((p) => p.replace(/\/+$/, ""));
}

async function* filesUnder(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(join(ROOT, dir))) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) yield* filesUnder(path);
    else yield path;
  }
}

/** The test files of tests/ that `deno task test:unit` runs. */
async function unitSet(): Promise<string[]> {
  const ignored = ignoredPaths((await denoTasks())["test:unit"]);
  const inIgnored = (f: string) => ignored.some((p) => f === p || f.startsWith(`${p}/`));
  const set: string[] = [];
  for await (const f of filesUnder("tests")) {
    if (TEST_FILE.test(f.slice(f.lastIndexOf("/") + 1)) && !inIgnored(f)) set.push(f);
  }
  return set.sort();
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
  for (const file of await unitSet()) {
    // Each file gets its own walk, so a shared helper that spawns is reported for every file.
    const chain = await chainToProcess(file, new Set([self]));
    if (chain) found.push(chain.join(" -> "));
  }
  assert.deepEqual(found, []);
});

Deno.test("deno task test:unit leaves out the out-of-process folders; deno task test runs all", async (t) => {
  const tasks = await denoTasks();
  const ignored = ignoredPaths(tasks["test:unit"]);
  await t.step("the ignored folders exist and hold tests that start processes", async () => {
    assert.deepEqual(ignored, ["tests/e2e", "tests/cross_process", "tests/reliability"]);
    for (const dir of ignored) assert.ok((await Deno.stat(join(ROOT, dir))).isDirectory, dir);
    const chain = await chainToProcess("tests/e2e/compression_clients_test.ts", new Set());
    assert.deepEqual(chain?.at(-1), "Deno.Command", "the check finds a spawning test");
  });
  await t.step("the unit set is tests/ minus those folders, and not empty", async () => {
    const set = await unitSet();
    assert.ok(set.length > 50, `${set.length} files`);
    assert.ok(set.includes("tests/unit_set_test.ts"));
    assert.ok(set.every((f) => !ignored.some((p) => f.startsWith(`${p}/`))));
  });
  await t.step("the whole suite ignores nothing", () => {
    assert.match(tasks.test, /\btests\/$/);
    assert.deepEqual(ignoredPaths(tasks.test), []);
  });
});
