/**
 * Markdown docs as HTML pages: every heading gets a GitHub-style id (so `#fragment` links
 * written for the repository work on the site too) and a self-link, level-2 and -3
 * headings make the table of contents, and code blocks and tables are focusable labelled
 * regions (they scroll sideways on phones; a wide table says so). The docs are repository files, not user input.
 */
import { Marked, type Token, type Tokens } from "marked";
import { escapeHtml } from "../../domain/text.ts";
import { slug } from "./doc_slug.ts";

export interface TocEntry {
  depth: number;
  text: string;
  id: string;
}

export interface RenderedDoc {
  /** The first level-1 heading as plain text (no Markdown marks), else the fallback. */
  title: string;
  html: string;
  toc: TocEntry[];
}

/** The visible text of inline tokens (code spans keep their text, marks are dropped). */
function plainText(tokens: Token[]): string {
  return tokens.map((t) => {
    if ("tokens" in t && t.tokens?.length) return plainText(t.tokens);
    return "text" in t ? t.text : "";
  }).join("");
}

/**
 * Said above a table only while it is wider than its region (the stylesheet shows it through a
 * scroll-state container query), beside the edge shadows that show there is more to see.
 */
const SCROLL_HINT = `<p class="scroll-hint">Scroll sideways for more columns.</p>`;

/**
 * A link written for the repository to another document (`api.md`, `api.md#errors`): on the
 * site it leads to that document's page, `/docs/api` (`/docs/api.md` answers too, but a page
 * has one address).
 */
const DOC_FILE_LINK = /href="([a-z0-9][a-z0-9_-]{0,63})\.md(#[^"]*)?"/g;

/** Renders a document; ids repeated in it get `-1`, `-2`… as on GitHub. */
export function renderDoc(markdown: string, fallbackTitle: string): RenderedDoc {
  const seen = new Map<string, number>();
  const toc: TocEntry[] = [];
  let title: string | null = null;
  let codes = 0;
  const marked = new Marked({
    renderer: {
      heading(this: { parser: { parseInline(t: Token[]): string } }, h: Tokens.Heading) {
        const text = plainText(h.tokens);
        if (h.depth === 1) title ??= text;
        const base = slug(text) || "section";
        const n = seen.get(base) ?? 0;
        seen.set(base, n + 1);
        const id = n ? `${base}-${n}` : base;
        if (h.depth === 2 || h.depth === 3) toc.push({ depth: h.depth, text, id });
        const inner = this.parser.parseInline(h.tokens);
        const body = /<a\s/i.test(inner) ? inner : `<a class="self" href="#${id}">${inner}</a>`;
        return `<h${h.depth} id="${id}">${body}</h${h.depth}>\n`;
      },
      code(c: Tokens.Code) {
        codes++;
        const label = `Example ${codes}${c.lang ? ` (${escapeHtml(c.lang)})` : ""}`;
        return `<pre tabindex="0" role="region" aria-label="${label}"><code>${
          escapeHtml(c.text)
        }</code></pre>\n`;
      },
      // A tag written in a document's text ("in reply to <name>", "<style>") is text: as
      // markup it vanished, or (`<style>`) swallowed the rest of the page.
      html(h: Tokens.HTML | Tokens.Tag) {
        return escapeHtml(h.text);
      },
    },
  });
  let tables = 0;
  // A table scrolls sideways on phones: a focusable labelled region, like a code block.
  const html = marked.parse(markdown, { async: false }).replace(
    DOC_FILE_LINK,
    (_, name: string, fragment?: string) => `href="/docs/${name}${fragment ?? ""}"`,
  ).replace(
    /<table>([\s\S]*?)<\/table>/g,
    (_, inner: string) => {
      const head = [...(inner.match(/<thead>[\s\S]*?<\/thead>/)?.[0] ?? "").matchAll(
        /<th[^>]*>([\s\S]*?)<\/th>/g,
      )].map((m) => m[1].replace(/<[^>]+>/g, "")).join(", ");
      tables++;
      const label = `Table ${tables}${head ? `: ${head}` : ""}`;
      return `<div class="table-wrap" tabindex="0" role="region" aria-label="${label}">${SCROLL_HINT}<table>${inner}</table></div>`;
    },
  );
  return { title: title ?? fallbackTitle, html, toc };
}
