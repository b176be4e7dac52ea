/** Heading ids of the rendered docs (routes/web/docs_render.ts), for links to them. */

/** GitHub's heading id: lower case, punctuation dropped, spaces become hyphens. */
export function slug(text: string): string {
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}
