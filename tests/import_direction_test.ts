/**
 * Imports flow one way (docs/architecture.md, "Layers and areas"). This test reads the import
 * statements of every source file (main.ts, routes/, mcp/, oauth/, cli/, domain/, kv/; the
 * tests only for the rule that they reach areas through mod.ts), builds the import graph and
 * fails on:
 *
 * - any cycle, naming its files;
 * - any import against the order of the layers: kv/ < domain/ < the edges;
 * - any import against the order of the domain's areas (AREA_ORDER);
 * - an edge, a test or another area reaching inside an area other than through its mod.ts.
 *
 * Type-only imports count: they are edges of the graph like any other.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { ROOT, sourceFiles } from "./source_files.ts";

/**
 * The order of the domain's areas, lowest first; this list is the one declaration of it. An
 * area (a folder `domain/<area>/`) imports only areas of earlier tiers, never one of its own
 * tier or a later one. The files at the top of `domain/` (clock, errors, ids, paging, text,
 * the read cache, the agent event log, mentions...) are the shared base below every area:
 * they import no area. A new area folder must be placed here before it passes.
 */
export const AREA_ORDER: readonly (readonly string[])[] = [
  ["limits"],
  ["accounts"],
  ["board"],
  ["search", "votes"],
  ["pins"],
  ["writes"],
  ["rules", "articles"],
  ["moderation"],
  ["reads", "upkeep"],
  ["inbox"],
];

/** The layers, lowest first: a file imports only its own layer and lower ones. */
const LAYERS = ["kv", "domain", "edges"] as const;

/** The folders (and file) of the edges layer: the HTTP routes, MCP, OAuth, the CLIs, main.ts. */
const EDGE_ROOTS = ["routes", "mcp", "oauth", "cli", "main.ts"];

/** The HTTP plumbing in routes/ that oauth/ may use (none of it leads back to oauth/ or mcp/). */
export const HTTP_KIT = new Set([
  "routes/env.ts",
  "routes/http.ts",
  "routes/body_reader.ts",
  "routes/json_keys.ts",
  "routes/schemas.ts",
  "routes/web/layout.tsx",
  "routes/web/security.ts",
]);

/** Every relative module specifier a source text imports or re-exports, statically or not. */
export function importsOf(source: string): string[] {
  const found: string[] = [];
  const re = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;
  for (const m of source.matchAll(re)) found.push(m[1]);
  return found;
}

/** The layer of a source file (relative to the root), or null for tests and other files. */
export function layerOf(path: string): (typeof LAYERS)[number] | null {
  const top = path.split("/")[0];
  if (top === "kv" || top === "domain") return top;
  return EDGE_ROOTS.includes(top) ? "edges" : null;
}

/** The area of a domain file: its folder under domain/, "" for the shared files at the top. */
export function areaOf(path: string): string | null {
  const parts = path.split("/");
  if (parts[0] !== "domain") return null;
  return parts.length > 2 ? parts[1] : "";
}

/** The tier of an area in AREA_ORDER (-1 for the shared base), or undefined if undeclared. */
export function tierOf(area: string): number | undefined {
  if (area === "") return -1;
  const i = AREA_ORDER.findIndex((tier) => tier.includes(area));
  return i < 0 ? undefined : i;
}

/** Why an import from `file` to `target` goes against the layers or the area order, if it does. */
export function orderProblem(file: string, target: string): string | null {
  const from = layerOf(file), to = layerOf(target);
  if (from === null || to === null) return null;
  if (LAYERS.indexOf(to) > LAYERS.indexOf(from)) return `layer ${from} imports layer ${to}`;
  const a = areaOf(file), b = areaOf(target);
  if (a === null || b === null || a === b) return null;
  const ta = tierOf(a), tb = tierOf(b);
  if (ta === undefined) return `area ${a} is not declared in AREA_ORDER`;
  if (tb === undefined) return `area ${b} is not declared in AREA_ORDER`;
  if (tb >= ta) return `${a || "the shared base"} (tier ${ta}) imports ${b} (tier ${tb})`;
  return null;
}

/**
 * The strongly connected sets of a graph that hold a cycle (more than one file, or a file
 * importing itself), each sorted (Tarjan's algorithm).
 */
export function cyclicSets(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>(), low = new Map<string, number>();
  const stack: string[] = [], onStack = new Set<string>(), found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const set: string[] = [];
    for (let w = ""; w !== v;) {
      w = stack.pop()!;
      onStack.delete(w);
      set.push(w);
    }
    if (set.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(set.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** One shortest loop through `start` inside `set` (a cyclic set of `graph`), as a path of files. */
export function loopThrough(graph: Map<string, string[]>, set: string[], start: string): string[] {
  const inSet = new Set(set);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    for (const w of graph.get(queue[i]) ?? []) {
      if (!inSet.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let v = queue[i]; v !== start; v = cameFrom.get(v)!) path.splice(1, 0, v);
        return [...path, start];
      }
      if (!cameFrom.has(w)) {
        cameFrom.set(w, queue[i]);
        queue.push(w);
      }
    }
  }
  return [start];
}

/** `[file, target]` for every relative import of every source file under `roots`. */
async function importEdges(roots: string[]): Promise<[string, string][]> {
  const edges: [string, string][] = [];
  for (const root of roots) {
    for await (const { path: file, text } of sourceFiles([root])) {
      for (const spec of importsOf(text)) {
        const target = relative(ROOT, normalize(join(ROOT, dirname(file), spec)));
        edges.push([file, target.replaceAll("\\", "/")]);
      }
    }
  }
  return edges;
}

const SOURCE_ROOTS = ["kv", "domain", ...EDGE_ROOTS];
let readSources: Promise<[string, string][]> | null = null;

/** The import edges of every source file, read once, by the first test that needs them. */
function sourceEdges(): Promise<[string, string][]> {
  return readSources ??= importEdges(SOURCE_ROOTS);
}

function graphOf(edges: [string, string][]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [f, t] of edges) {
    if (!graph.has(f)) graph.set(f, []);
    if (!graph.has(t)) graph.set(t, []);
    graph.get(f)!.push(t);
  }
  return graph;
}

Deno.test("importsOf finds static, type-only, re-exported and dynamic imports", () => {
  const text = `import { a } from "./a.ts";\nimport type { B } from '../b.ts';\n` +
    `export { c } from "./c.ts";\nconst d = await import("../d/d.ts");\nimport "./e.ts";\n` +
    `import { z } from "zod";\n// "not/an/import.ts"`;
  assert.deepEqual(importsOf(text), ["./a.ts", "../b.ts", "./c.ts", "../d/d.ts", "./e.ts"]);
});

Deno.test("cyclicSets and loopThrough find a cycle and name its files", () => {
  const graph = new Map([
    ["a.ts", ["b.ts"]],
    ["b.ts", ["c.ts", "d.ts"]],
    ["c.ts", ["a.ts"]],
    ["d.ts", []],
    ["e.ts", ["e.ts"]],
  ]);
  const sets = cyclicSets(graph);
  assert.deepEqual(sets.sort(), [["a.ts", "b.ts", "c.ts"], ["e.ts"]]);
  assert.deepEqual(loopThrough(graph, sets[0], "a.ts"), ["a.ts", "b.ts", "c.ts", "a.ts"]);
  assert.deepEqual(cyclicSets(new Map([["a.ts", ["b.ts"]], ["b.ts", []]])), []);
});

Deno.test("orderProblem refuses imports against the layers and the area order", () => {
  assert.equal(orderProblem("domain/reads/me.ts", "domain/votes/mod.ts"), null);
  assert.equal(orderProblem("domain/votes/cast.ts", "domain/clock.ts"), null);
  assert.equal(orderProblem("routes/app.ts", "domain/reads/mod.ts"), null);
  assert.match(orderProblem("domain/votes/cast.ts", "domain/pins/mod.ts")!, /votes.*pins/);
  assert.match(orderProblem("domain/votes/cast.ts", "domain/search/mod.ts")!, /tier 3.*tier 3/);
  assert.match(orderProblem("domain/clock.ts", "domain/board/mod.ts")!, /shared base/);
  assert.match(orderProblem("kv/tx.ts", "domain/clock.ts")!, /layer kv imports layer domain/);
  assert.match(orderProblem("domain/deps.ts", "routes/config.ts")!, /layer domain/);
  assert.match(orderProblem("domain/nowhere/x.ts", "domain/board/mod.ts")!, /not declared/);
});

Deno.test("every area folder of domain/ has a place in the area order, once", async () => {
  const folders: string[] = [];
  for await (const e of Deno.readDir(join(ROOT, "domain"))) if (e.isDirectory) folders.push(e.name);
  const declared = AREA_ORDER.flat();
  assert.deepEqual([...declared].sort(), folders.sort());
  assert.equal(new Set(declared).size, declared.length);
});

Deno.test("docs/architecture.md draws the area order AREA_ORDER declares", async () => {
  const doc = await Deno.readTextFile(join(ROOT, "docs/architecture.md"));
  const line = AREA_ORDER.map((tier) => tier.join(", ")).join(" < ");
  assert.ok(doc.includes(line), `docs/architecture.md should show: ${line}`);
});

Deno.test("no import cycle among the source files", async () => {
  const graph = graphOf(await sourceEdges());
  const wrong = cyclicSets(graph).map((set) => ({
    files: set,
    loop: loopThrough(graph, set, set[0]).join(" -> "),
  }));
  assert.deepEqual(
    wrong,
    [],
    'no import cycle: break each loop at the import that goes against docs/architecture.md "Layers and areas" (move the code to the higher area, or pass the effect in as a parameter)',
  );
});

Deno.test("no import goes against the layers or the area order", async () => {
  const wrong = (await sourceEdges()).flatMap(([f, t]) => {
    const problem = orderProblem(f, t);
    return problem ? [`${f} -> ${t}: ${problem}`] : [];
  });
  assert.deepEqual(
    wrong,
    [],
    'imports go down only: move the code into the higher area (a read model that composes areas into reads, a commit that spans areas into writes), pass the higher effect in as a parameter, or place a new area in AREA_ORDER (docs/architecture.md "Layers and areas")',
  );
});

Deno.test("oauth/ uses nothing of routes/ but the HTTP kit, and reaches no mcp/", async () => {
  const wrong = (await sourceEdges()).filter(([f, t]) =>
    f.startsWith("oauth/") &&
    (t.startsWith("mcp/") || t.startsWith("cli/") || (t.startsWith("routes/") && !HTTP_KIT.has(t)))
  );
  assert.deepEqual(wrong.map(([f, t]) => `${f} -> ${t}`), []);
});

Deno.test("the HTTP kit oauth/ uses leads back to neither oauth/ nor mcp/", async () => {
  const edges = (await sourceEdges()).filter(([f]) => f.startsWith("routes/"));
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

Deno.test("the edges and the tests reach each domain area only through its mod.ts", async () => {
  const edges = [...await sourceEdges(), ...await importEdges(["tests"])];
  const wrong = edges.filter(([f, t]) =>
    !f.startsWith("domain/") && /^domain\/[^/]+\//.test(t) && !/^domain\/[^/]+\/mod\.ts$/.test(t)
  );
  assert.deepEqual(
    wrong.map(([f, t]) => `${f} -> ${t}`),
    [],
    "import the area's mod.ts instead (export the name there if it is not yet)",
  );
});

Deno.test("a domain area reaches another area only through its entry module", async () => {
  const wrong = (await sourceEdges()).filter(([f, t]) => {
    const a = areaOf(f), b = areaOf(t);
    return a !== null && b !== null && b !== "" && a !== b && !t.endsWith("/mod.ts");
  });
  assert.deepEqual(
    wrong.map(([f, t]) => `${f} -> ${t}`),
    [],
    "import the other area's mod.ts instead (export the name there if it is not yet)",
  );
});

Deno.test("nothing but the CLIs and tests imports cli/", async () => {
  const wrong = (await sourceEdges()).filter(([f, t]) =>
    t.startsWith("cli/") && !f.startsWith("cli/")
  );
  assert.deepEqual(wrong.map(([f, t]) => `${f} -> ${t}`), []);
});

Deno.test("oauth/ is HTTP only: it imports nothing from kv/", async () => {
  const wrong = (await sourceEdges()).filter(([f, t]) =>
    f.startsWith("oauth/") && t.startsWith("kv/")
  );
  assert.deepEqual(wrong.map(([f, t]) => `${f} -> ${t}`), []);
});

Deno.test("only the composition root (routes/app.ts) imports the operation registry", async () => {
  const wrong = (await sourceEdges()).filter(([f, t]) =>
    t === "routes/api/registry.ts" && f !== "routes/app.ts" && !f.startsWith("tests/")
  );
  assert.deepEqual(wrong.map(([f, t]) => `${f} -> ${t}`), []);
});

Deno.test("the registry (routes/api/) imports nothing from mcp/: the transport is handed in", async () => {
  const wrong = (await sourceEdges()).filter(([f, t]) =>
    f.startsWith("routes/api/") && t.startsWith("mcp/")
  );
  assert.deepEqual(wrong.map(([f, t]) => `${f} -> ${t}`), []);
});
