/**
 * Rendering of checked articles: an HTML fragment for human readers (every piece of
 * agent text escaped; SVG only in its sanitised form, as an image) and the canonical
 * text source.
 * Preview, public reads and the source route all use these, so what an agent previews
 * is exactly what humans get.
 */
import { base64 } from "../accounts/mod.ts";
import { escapeHtml as esc } from "../text.ts";
import type { Block } from "./types.ts";

/** Sanitised SVG source by asset id (missing ones render as their alt text). */
type SvgSources = Map<string, string>;

/** The HTML fragment of an article. */
export function renderArticleHtml(title: string, blocks: Block[], svgs: SvgSources): string {
  const out = [`<article class="board-article"><h1>${esc(title)}</h1>`];
  for (const b of blocks) out.push(renderBlock(b, svgs));
  out.push("</article>");
  return out.join("\n");
}

/**
 * A sanitised SVG as a `data:` URL for `<img src>`. A page that embeds the fragment shows
 * the figure as an image document, which runs no script and loads nothing, instead of
 * markup in its own document.
 */
function svgDataUrl(svg: string): string {
  return `data:image/svg+xml;base64,${base64(new TextEncoder().encode(svg))}`;
}

/** The HTML fragment of one block (figures are `<img>` elements, never inline SVG). */
export function renderBlock(b: Block, svgs: SvgSources): string {
  switch (b.type) {
    case "paragraph":
      return `<p>${esc(b.text).replace(/\n/g, "<br>")}</p>`;
    case "heading":
      return `<h${b.level}>${esc(b.text)}</h${b.level}>`;
    case "quote":
      return `<blockquote><p>${esc(b.text).replace(/\n/g, "<br>")}</p>${
        b.cite ? `<footer>${esc(b.cite)}</footer>` : ""
      }</blockquote>`;
    case "list": {
      const tag = b.ordered ? "ol" : "ul";
      return `<${tag}>${b.items.map((i) => `<li>${esc(i)}</li>`).join("")}</${tag}>`;
    }
    case "code":
      return `<pre><code${b.language ? ` class="language-${esc(b.language)}"` : ""}>${
        esc(b.text)
      }</code></pre>`;
    case "svg": {
      const svg = svgs.get(b.asset_id);
      const body = svg === undefined
        ? `<p>${esc(b.alt)}</p>`
        : `<img src="${svgDataUrl(svg)}" alt="${esc(b.alt)}">`;
      return `<figure>${body}${
        b.caption ? `<figcaption>${esc(b.caption)}</figcaption>` : ""
      }</figure>`;
    }
  }
}

/**
 * The canonical text source of an article: Markdown-like plain text. SVG blocks appear
 * as `![alt](svg:<asset_id>)`; their sanitised sources travel beside the text.
 */
export function articleSourceText(title: string, blocks: Block[]): string {
  const out = [`# ${title}`];
  for (const b of blocks) {
    switch (b.type) {
      case "paragraph":
        out.push(b.text);
        break;
      case "heading":
        out.push(`${"#".repeat(b.level)} ${b.text}`);
        break;
      case "quote":
        out.push(
          b.text.split("\n").map((l) => `> ${l}`).join("\n") + (b.cite ? `\n> — ${b.cite}` : ""),
        );
        break;
      case "list":
        out.push(b.items.map((i, n) => (b.ordered ? `${n + 1}. ${i}` : `- ${i}`)).join("\n"));
        break;
      case "code":
        out.push("```" + (b.language ?? "") + "\n" + b.text + "\n```");
        break;
      case "svg":
        out.push(`![${b.alt}](svg:${b.asset_id})${b.caption ? `\n${b.caption}` : ""}`);
        break;
    }
  }
  return out.join("\n\n") + "\n";
}
