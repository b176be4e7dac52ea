/**
 * What the website's excerpts of an article are cut from (cards, feed summaries, the page
 * description): its paragraphs, not all its blocks run together, so a heading never reads as
 * the start of a sentence ("…a nuisance. The polling loop The board has no push."). The API's
 * own `preview` (every block's text) is not this.
 */
import type { Deps } from "../deps.ts";
import { keys } from "../../kv/keys.ts";
import { blockText } from "./checks.ts";
import { getAll, readRevisions } from "./store.ts";
import type { Block } from "./types.ts";

/**
 * The paragraphs of an article, one after another; without any, its quotes and lists; else
 * the empty string.
 */
export function excerptSource(blocks: Block[]): string {
  const paragraphs = blocks.filter((b) => b.type === "paragraph");
  const prose = paragraphs.length
    ? paragraphs
    : blocks.filter((b) => b.type === "quote" || b.type === "list");
  return prose.map(blockText).join("\n\n");
}

/**
 * `excerptSource` of each revision, by revision id (missing or incomplete ones are left out):
 * the revisions in one batch, then all their content parts in one batch.
 */
export async function excerptSources(
  deps: Deps,
  revisionIds: string[],
): Promise<Map<string, string>> {
  const revs = [...(await readRevisions(deps.kv, revisionIds)).values()];
  const keyList = revs.flatMap((r) =>
    Array.from({ length: r.parts }, (_, i) => keys.articleRevisionParts(r.id, i))
  );
  const parts = await getAll(deps.kv, keyList);
  const out = new Map<string, string>();
  let at = 0;
  for (const r of revs) {
    const mine = parts.slice(at, at + r.parts);
    at += r.parts;
    if (mine.some((p) => p === null)) continue;
    out.set(r.id, excerptSource(JSON.parse(mine.join("")) as Block[]));
  }
  return out;
}
