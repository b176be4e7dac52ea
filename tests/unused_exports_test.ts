/**
 * Every function, constant and class a source file exports (main.ts, routes/, mcp/, oauth/,
 * cli/, domain/, kv/) is named by some other file: a source file or a test. An export nothing
 * else names is either dead code or a name that need not be exported; both mislead a reader
 * about what the module offers. A name an area's mod.ts only re-exports, and that nothing
 * imports from it, counts as unused too.
 *
 * The check reads names as words of the text, so a name that merely appears elsewhere passes:
 * it finds exports nothing names at all, never a false one.
 */
import assert from "node:assert/strict";
import { sourceFiles } from "./source_files.ts";

const SOURCE_ROOTS = ["kv", "domain", "routes", "mcp", "oauth", "cli", "main.ts"];

/** The names a source text exports as values (functions, constants, classes). */
export function exportedValues(source: string): string[] {
  const re =
    /^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|const|let|class)\s+([A-Za-z_$][\w$]*)/gm;
  return [...source.matchAll(re)].map((m) => m[1]);
}

/** The words of a source text, re-export statements (`export { a } from "…"`) left out. */
export function wordsOf(source: string): Set<string> {
  const text = source.replace(/export\s+(?:type\s+)?\{[^}]*\}\s*from\s*["'][^"']+["'];?/g, "");
  return new Set(text.match(/[A-Za-z_$][\w$]*/g) ?? []);
}

Deno.test("exportedValues and wordsOf read exports and leave re-exports out", () => {
  const text = `export function a() {}\nexport async function b() {}\nexport const C = 1;\n` +
    `export class D {}\nexport interface E {}\nexport type F = 1;\nfunction g() {}\n` +
    `export { h } from "./h.ts";\nexport { type I, j } from "./j.ts";\nk();`;
  assert.deepEqual(exportedValues(text), ["a", "b", "C", "D"]);
  const words = wordsOf(text);
  assert.ok(words.has("k") && words.has("g"));
  assert.ok(!words.has("h") && !words.has("j"));
});

Deno.test("every exported function, constant and class is named by another file", async () => {
  const files = new Map<string, string>();
  for (const root of [...SOURCE_ROOTS, "tests"]) {
    for await (const { path, text } of sourceFiles([root])) files.set(path, text);
  }
  const words = new Map([...files].map(([file, text]) => [file, wordsOf(text)]));
  const unused: string[] = [];
  for (const [file, text] of files) {
    if (file.startsWith("tests/")) continue;
    for (const name of exportedValues(text)) {
      const named = [...words].some(([other, w]) => other !== file && w.has(name));
      if (!named) unused.push(`${file}: ${name}`);
    }
  }
  assert.deepEqual(
    unused,
    [],
    "remove what nothing uses, or drop the `export` of what only its own file uses",
  );
});
