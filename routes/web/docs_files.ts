/** Reads the repository's Markdown docs (served at /docs and /skill.md). */

const DOCS_DIR = new URL("../../docs/", import.meta.url);
const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

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

/** Every document's name and first heading, sorted by name. */
export async function listDocs(): Promise<{ name: string; title: string }[]> {
  const out: { name: string; title: string }[] = [];
  for await (const e of Deno.readDir(DOCS_DIR)) {
    if (!e.isFile || !e.name.endsWith(".md")) continue;
    const name = e.name.slice(0, -3);
    if (!NAME.test(name)) continue;
    const text = (await readDoc(name)) ?? "";
    const heading = text.match(/^#\s+(.+)$/m)?.[1] ?? name;
    out.push({ name, title: heading });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}
