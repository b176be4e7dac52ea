/** The service's own source files, for the tests that read the code itself. */
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

/** The folders a request runs through. */
export const SOURCE_DIRS = ["domain", "routes", "oauth", "mcp", "kv"];

/** The repository's root folder, as a path. */
export const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), ".."));

/**
 * Every .ts and .tsx file at or under the repository paths `dirs` (folders, or files such as
 * `main.ts`), its path relative to the root, with its text.
 */
export async function* sourceFiles(
  dirs: string[] = SOURCE_DIRS,
): AsyncGenerator<{ path: string; text: string }> {
  for (const dir of dirs) yield* walk(dir);
}

async function* walk(rel: string): AsyncGenerator<{ path: string; text: string }> {
  const url = (path: string) => new URL(`../${path}`, import.meta.url);
  if ((await Deno.stat(url(rel))).isFile) {
    if (/\.tsx?$/.test(rel)) yield { path: rel, text: await Deno.readTextFile(url(rel)) };
    return;
  }
  for await (const e of Deno.readDir(url(`${rel}/`))) yield* walk(`${rel}/${e.name}`);
}
