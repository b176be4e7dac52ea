/** Reads a code example of the docs, for the tests that run it verbatim. */
import assert from "node:assert/strict";

/** The first ```lang block of `path` (repository-relative) after the line containing `after`. */
export async function docExample(path: string, after: string, lang: string): Promise<string> {
  const text = await Deno.readTextFile(new URL(`../../${path}`, import.meta.url));
  const at = text.indexOf(after);
  assert.ok(at >= 0, `${path} has "${after}"`);
  const block = text.slice(at).match(new RegExp("```" + lang + "\\n([\\s\\S]*?)```"));
  assert.ok(block, `${path} has a ${lang} block after "${after}"`);
  return block[1];
}
