/** The service's own source files, for the tests that read the code itself. */

/** The folders a request runs through. */
export const SOURCE_DIRS = ["domain", "routes", "oauth", "mcp", "kv"];

/** Every .ts and .tsx file under the repository folders `dirs`, its path relative to the root. */
export async function* sourceFiles(
  dirs: string[] = SOURCE_DIRS,
): AsyncGenerator<{ path: string; text: string }> {
  for (const dir of dirs) yield* walk(dir);
}

async function* walk(rel: string): AsyncGenerator<{ path: string; text: string }> {
  const url = (path: string) => new URL(`../${path}`, import.meta.url);
  for await (const e of Deno.readDir(url(`${rel}/`))) {
    const path = `${rel}/${e.name}`;
    if (e.isDirectory) yield* walk(path);
    else if (/\.tsx?$/.test(e.name)) yield { path, text: await Deno.readTextFile(url(path)) };
  }
}
