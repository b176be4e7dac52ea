/**
 * The in-process test set that `deno task test:unit` runs, and how it is run fast.
 *
 * The set is every test file under tests/ outside the folders whose tests start other
 * processes (`OUT_OF_PROCESS`). `deno test` gives each file it is handed its own worker, which
 * loads the whole app again: with some 180 files that load was half of the inner loop's time.
 * So the task hands `deno test` the few shard modules in this folder instead (`shard_N.ts`,
 * named so that `deno task test` over tests/ does not pick them up); each imports its share of
 * the set, in one worker that loads the app once. The tests and their sanitizers are the same;
 * what a shard does not do is type-check the files it imports, which `deno task check` and
 * `deno task test` do.
 */
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The folders below tests/ whose tests start other processes; the set leaves them out. */
export const OUT_OF_PROCESS = ["tests/e2e", "tests/cross_process", "tests/reliability"];

/** How many shard modules the task runs: a few more than the cores, so the workers stay even. */
export const SHARDS = 4;

/** The file names `deno test` picks up in a folder it is given. */
export const TEST_FILE = /(?:^|[_.])test\.(?:ts|tsx|mts|js|mjs|jsx)$/;

async function* filesUnder(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(join(ROOT, dir))) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) yield* filesUnder(path);
    else yield path;
  }
}

/** The test files of the in-process set, as paths relative to the root, sorted. */
export async function unitTestFiles(): Promise<string[]> {
  const outside = (f: string) => OUT_OF_PROCESS.some((p) => f.startsWith(`${p}/`));
  const set: string[] = [];
  for await (const f of filesUnder("tests")) {
    if (TEST_FILE.test(f.slice(f.lastIndexOf("/") + 1)) && !outside(f)) set.push(f);
  }
  return set.sort();
}

/** The files shard `index` (0-based) of `SHARDS` runs: every SHARDS-th file of the set. */
export async function shardFiles(index: number): Promise<string[]> {
  return (await unitTestFiles()).filter((_, n) => n % SHARDS === index);
}

/** Imports shard `index`'s test files, which registers their tests in this worker. */
export async function loadShard(index: number): Promise<void> {
  for (const file of await shardFiles(index)) {
    await import(pathToFileURL(join(ROOT, file)).href);
  }
}
