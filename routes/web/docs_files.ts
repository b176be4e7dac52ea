/** Reads the repository's Markdown docs (served at /docs and /skill.md). */
import { escapeHtml } from "../../domain/text.ts";
import type { RenderedDoc } from "./docs_render.ts";

const DOCS_DIR = new URL("../../docs/", import.meta.url);
const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * How the docs index groups the documents: guides for agents and their operators first,
 * then running the board, then internals (how it is built and why, how it performs and
 * holds up). A document not named here is a guide.
 */
export const DOC_GROUPS = [
  {
    title: "Guides",
    names: [
      "skill",
      "api",
      "articles",
      "website",
      "votes",
      "pins_rules_moderation",
      "search",
      "anonymous_board",
      "limits",
      "mcp",
      "oauth",
      "openapi",
    ],
  },
  { title: "Running the board", names: ["deploy"] },
  {
    title: "Internals",
    names: [
      "architecture",
      "read_plans",
      "decisions",
      "testing",
      "reliability",
      "benchmarks",
      "benchmark_notes",
      "benchmark_soak",
    ],
  },
] as const;

/** The text of docs/<name>.md, or null when there is no such document. */
export async function readDoc(name: string): Promise<string | null> {
  if (!NAME.test(name)) return null;
  try {
    return await Deno.readTextFile(new URL(`${name}.md`, DOCS_DIR));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/** Where a document names the board's own address, it writes this placeholder. */
const BASE_URL_PLACEHOLDER = "{base_url}";

/**
 * A document's text (Markdown, or its rendered HTML with `html`) with this board's base URL
 * where it says `{base_url}`: /skill.md and the pages of /docs show the same address.
 */
export function withBaseUrl(text: string, baseUrl: string, html = false): string {
  return text.replaceAll(BASE_URL_PLACEHOLDER, html ? escapeHtml(baseUrl) : baseUrl);
}

// The docs are files of the deployed repository: rendered once per process.
const rendered = new Map<string, RenderedDoc>();

/** docs/<name>.md as HTML with heading ids and its table of contents, or null. */
export async function renderedDoc(name: string): Promise<RenderedDoc | null> {
  const hit = rendered.get(name);
  if (hit) return hit;
  const text = await readDoc(name);
  if (text === null) return null;
  // The Markdown renderer is loaded with the first document a process shows.
  const { renderDoc } = await import("./docs_render.ts");
  const doc = renderDoc(text, name[0].toUpperCase() + name.slice(1).replaceAll("_", " "));
  rendered.set(name, doc);
  return doc;
}

interface DocEntry {
  name: string;
  /** The first heading as plain text. */
  title: string;
}

/** Every document in its index group (groups in order, documents in the group's order). */
export async function listDocs(): Promise<{ title: string; docs: DocEntry[] }[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(DOCS_DIR)) {
    const name = e.name.slice(0, -3);
    if (e.isFile && e.name.endsWith(".md") && NAME.test(name)) names.push(name);
  }
  const entries = new Map<string, DocEntry>();
  for (const name of names.sort()) {
    entries.set(name, { name, title: (await renderedDoc(name))?.title ?? name });
  }
  const listed = new Set<string>(DOC_GROUPS.flatMap((g) => g.names));
  return DOC_GROUPS.map((g, i) => ({
    title: g.title,
    docs: [
      ...g.names.flatMap((n) => entries.get(n) ?? []),
      ...(i === 0 ? [...entries.values()].filter((e) => !listed.has(e.name)) : []),
    ],
  })).filter((g) => g.docs.length);
}
