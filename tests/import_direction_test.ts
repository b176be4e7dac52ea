/**
 * Imports flow one way (README "Layout"): the edges (routes/, mcp/, oauth/)
 * call domain/, domain/ stores through kv/, and nothing below imports anything above;
 * oauth/ is HTTP only and never imports kv/.
 * This test reads the import statements of every source file and fails on one that goes
 * the wrong way, on an import cycle among the edges, and on an import of the operation
 * registry anywhere but the composition root (routes/app.ts).
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), ".."));

/** The HTTP plumbing in routes/ that oauth/ may use (none of it leads back to oauth/ or mcp/). */
export const HTTP_KIT = new Set([
  "routes/env.ts",
  "routes/http.ts",
  "routes/body_reader.ts",
  "routes/schemas.ts",
  "routes/web/layout.tsx",
  "routes/web/security.ts",
]);

/** Where each top-level folder may import from (besides npm: and node: modules). */
const ALLOWED: Record<string, (target: string) => boolean> = {
  kv: (t) => t.startsWith("kv/"),
  domain: (t) => t.startsWith("domain/") || t.startsWith("kv/"),
  // oauth/ is HTTP only: its stored records live in domain/accounts, so it never reaches kv/.
  oauth: (t) => t.startsWith("oauth/") || t.startsWith("domain/") || HTTP_KIT.has(t),
};

/** Every relative module specifier a source text imports or re-exports, statically or not. */
export function importsOf(source: string): string[] {
  const found: string[] = [];
  const re = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;
  for (const m of source.matchAll(re)) found.push(m[1]);
  return found;
}

async function* sourceFiles(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(join(ROOT, dir))) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) yield* sourceFiles(path);
    else if (/\.(ts|tsx)$/.test(e.name)) yield path;
  }
}

/** `[file, target]` for every import of a file under `dir`, target relative to the root. */
async function importEdges(dir: string): Promise<[string, string][]> {
  const edges: [string, string][] = [];
  for await (const file of sourceFiles(dir)) {
    const text = await Deno.readTextFile(join(ROOT, file));
    for (const spec of importsOf(text)) {
      const target = relative(ROOT, normalize(join(ROOT, dirname(file), spec)));
      edges.push([file, target.replaceAll("\\", "/")]);
    }
  }
  return edges;
}

/** The import edges of every file under each of `dirs`. */
async function importEdgesOf(...dirs: string[]): Promise<[string, string][]> {
  return (await Promise.all(dirs.map(importEdges))).flat();
}

Deno.test("importsOf finds static, type-only, re-exported and dynamic imports", () => {
  const text = `import { a } from "./a.ts";\nimport type { B } from '../b.ts';\n` +
    `export { c } from "./c.ts";\nconst d = await import("../d/d.ts");\nimport "./e.ts";\n` +
    `import { z } from "zod";\n// "not/an/import.ts"`;
  assert.deepEqual(importsOf(text), ["./a.ts", "../b.ts", "./c.ts", "../d/d.ts", "./e.ts"]);
});

for (const [dir, allowed] of Object.entries(ALLOWED)) {
  Deno.test(`${dir}/ imports only what lies below it`, async () => {
    const wrong = (await importEdges(dir)).filter(([, t]) => !allowed(t));
    assert.deepEqual(wrong.map(([f, t]) => `${f} -> ${t}`), []);
  });
}

Deno.test("the HTTP kit oauth/ uses leads back to neither oauth/ nor mcp/", async () => {
  const edges = await importEdges("routes");
  const reached = new Set(HTTP_KIT);
  const wrong: string[] = [];
  for (let grew = true; grew;) {
    grew = false;
    for (const [f, t] of edges) {
      if (!reached.has(f)) continue;
      if (t.startsWith("oauth/") || t.startsWith("mcp/")) wrong.push(`${f} -> ${t}`);
      else if (t.startsWith("routes/") && !reached.has(t)) grew = !!reached.add(t);
    }
  }
  assert.deepEqual([...new Set(wrong)], []);
});

Deno.test("the edges reach each domain area only through its entry module (mod.ts)", async () => {
  const edges = await importEdgesOf("routes", "mcp", "oauth", "cli");
  const wrong = edges.filter(([, t]) =>
    /^domain\/[^/]+\//.test(t) && !/^domain\/[^/]+\/mod\.ts$/.test(t)
  );
  assert.deepEqual(wrong.map(([f, t]) => `${f} -> ${t}`), []);
});

Deno.test("a domain area reaches another area only through its entry module", async () => {
  const areaOf = (path: string) => path.split("/").length > 2 ? path.split("/")[1] : null;
  const wrong = (await importEdges("domain")).filter(([f, t]) =>
    areaOf(t) !== null && areaOf(t) !== areaOf(f) && !t.endsWith("/mod.ts")
  );
  assert.deepEqual(wrong.map(([f, t]) => `${f} -> ${t}`), []);
});

Deno.test("nothing but the CLIs and tests imports cli/", async () => {
  const edges = await importEdgesOf("routes", "mcp", "oauth", "domain", "kv");
  assert.deepEqual(
    edges.filter(([, t]) => t.startsWith("cli/")).map(([f, t]) => `${f} -> ${t}`),
    [],
  );
});

/** The files of each import cycle (strongly connected set of more than one file) of `edges`. */
export function importCycles(edges: [string, string][]): string[][] {
  const next = new Map<string, string[]>();
  for (const [f, t] of edges) next.set(f, [...(next.get(f) ?? []), t]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const set: string[] = [];
    for (let w = ""; w !== v;) set.push(w = stack.pop()!);
    if (set.length > 1) cycles.push(set.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

Deno.test("importCycles finds a cycle and only that", () => {
  const edges: [string, string][] = [["a", "b"], ["b", "c"], ["c", "a"], ["c", "d"], ["d", "e"]];
  assert.deepEqual(importCycles(edges), [["a", "b", "c"]]);
});

Deno.test("the edges (routes/, mcp/, oauth/) import one another without a cycle", async () => {
  // The registry is handed to the routes, /openapi.json and the MCP server by routes/app.ts.
  const edges = (await importEdgesOf("routes", "mcp", "oauth")).filter(([, t]) =>
    !t.startsWith("domain/") && !t.startsWith("kv/")
  );
  assert.deepEqual(importCycles(edges), []);
});

Deno.test("only the composition root (routes/app.ts) imports the operation registry", async () => {
  const edges = await importEdgesOf("routes", "mcp", "oauth", "cli", "domain", "kv");
  const wrong = edges.filter(([f, t]) => t === "routes/api/registry.ts" && f !== "routes/app.ts");
  assert.deepEqual(wrong.map(([f, t]) => `${f} -> ${t}`), []);
});

Deno.test("the registry (routes/api/) imports nothing from mcp/: the transport is handed in", async () => {
  const wrong = (await importEdges("routes/api")).filter(([, t]) => t.startsWith("mcp/"));
  assert.deepEqual(wrong.map(([f, t]) => `${f} -> ${t}`), []);
});
