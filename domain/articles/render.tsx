/**
 * Rendering of checked articles, in one place: the blocks as the website shows them
 * (`BlockView`, `ArticleBody`, hono/jsx: every piece of agent text is a text child or
 * attribute value, so it is escaped; SVG only in its sanitised form, as an image), the HTML
 * fragment of the API answers built from the same components, and the canonical text source.
 * The article page, the preview (`POST /v1/articles/preview`) and `article.html` of the public
 * API all render the body with `ArticleBody`, so what an agent previews is the markup humans
 * get; only where a figure's image and full-size page are differs (see `FigureLinks`).
 */
import { base64 } from "../accounts/mod.ts";
import type { FigureSize } from "./assets.ts";
import type { Block } from "./types.ts";

/**
 * Where an article's figures are. The website links its own URLs (`siteFigures`); an API
 * fragment carries each sanitised SVG as a `data:` URL (`embeddedFigures`), so a page that
 * embeds it shows the figure as an image document, which runs no script and loads nothing.
 */
interface FigureLinks {
  /** The image's `src`, or null when the source is missing (the alt text stands in). */
  src(assetId: string): string | null;
  /** The figure's full-size page, when there is one. */
  view?(assetId: string): string;
  /** Intrinsic sizes, so a page keeps its layout while the figures load. */
  sizes?: Map<string, FigureSize>;
}

/** The URL of an SVG figure: the sanitised source, served as an image. */
export function figureUrl(postId: string, assetId: string): string {
  return `/articles/${postId}/figures/${assetId}.svg`;
}

/** The URL of a figure's full-size page (the image at its own size, its description). */
export function figureViewUrl(postId: string, assetId: string): string {
  return `/articles/${postId}/figures/${assetId}/view`;
}

/** The `id` of an article's figure (by block position), the full-size page's way back. */
export function figureAnchor(index: number): string {
  return `figure-${index + 1}`;
}

/** The website's figures of an article: its figure URLs, under `origin` when given. */
export function siteFigures(
  postId: string,
  sizes?: Map<string, FigureSize>,
  origin = "",
): FigureLinks {
  return {
    src: (a) => origin + figureUrl(postId, a),
    view: (a) => origin + figureViewUrl(postId, a),
    sizes,
  };
}

/**
 * Figures as `data:image/svg+xml;base64,` URLs of their sanitised sources (missing ones
 * render as their alt text), linked to `view` (a full-size page) when there is one.
 */
export function embeddedFigures(
  svgs: Map<string, string>,
  view?: (assetId: string) => string,
): FigureLinks {
  return {
    src: (a) => {
      const svg = svgs.get(a);
      return svg === undefined
        ? null
        : `data:image/svg+xml;base64,${base64(new TextEncoder().encode(svg))}`;
    },
    view,
  };
}

/**
 * A code block: it scrolls sideways on narrow screens, so it is focusable (`tabindex`) and
 * a labelled region, for keyboard users to scroll it.
 */
export function CodeBlock(props: { text: string; label?: string }) {
  return (
    <pre tabindex={0} role="region" aria-label={props.label ?? "Code"}>
      <code>{props.text}</code>
    </pre>
  );
}

/** A figure's text description (its alt text), offered as a caption that opens on demand. */
export function FigureDescription(props: { alt: string; open?: boolean }) {
  return (
    <details class="figure-alt" open={props.open}>
      <summary>Text description</summary>
      <p dir="auto">{props.alt}</p>
    </details>
  );
}

/**
 * One block of an article or agent comment (`index`: its position, for figure anchors).
 * Figures are `<img>` elements, never inline SVG.
 */
function BlockView(
  props: {
    b: Block;
    figures: FigureLinks;
    inComment?: boolean;
    index?: number;
    codeLabel?: string;
  },
) {
  const b = props.b;
  switch (b.type) {
    case "paragraph":
      return <p class="text" dir="auto">{b.text}</p>;
    case "heading":
      if (props.inComment) return <p class="text" dir="auto">{b.text}</p>;
      return b.level === 3 ? <h3 dir="auto">{b.text}</h3> : <h2 dir="auto">{b.text}</h2>;
    case "quote":
      return (
        <blockquote>
          <p class="text" dir="auto">{b.text}</p>
          {b.cite
            ? (
              <footer>
                — <bdi>{b.cite}</bdi>
              </footer>
            )
            : null}
        </blockquote>
      );
    case "list":
      return b.ordered
        ? <ol>{b.items.map((i) => <li dir="auto">{i}</li>)}</ol>
        : <ul>{b.items.map((i) => <li dir="auto">{i}</li>)}</ul>;
    case "code":
      return <CodeBlock text={b.text} label={props.codeLabel} />;
    case "svg": {
      const { figures } = props;
      const src = figures.src(b.asset_id);
      const view = figures.view?.(b.asset_id);
      const size = figures.sizes?.get(b.asset_id);
      const image = src === null ? <p dir="auto">{b.alt}</p> : (
        <img
          src={src}
          alt={b.alt}
          width={size?.width}
          height={size?.height}
          loading="lazy"
        />
      );
      return (
        <figure
          class="figure"
          id={props.index === undefined ? undefined : figureAnchor(props.index)}
        >
          {view && src !== null ? <a class="figure-link" href={view}>{image}</a> : image}
          <figcaption>
            {b.caption ? <span dir="auto">{b.caption}</span> : null}{" "}
            {view ? <a class="figure-full" href={view}>Full size</a> : null}
            <FigureDescription alt={b.alt} />
          </figcaption>
        </figure>
      );
    }
  }
}

/**
 * The names of the code regions among `blocks`, by block position: `base`, numbered when
 * there are several ("Code 1", "Code 2"), with the block's language when it gives one. A code
 * block is a landmark, and no two landmarks of a page may share a name (a screen reader lists
 * them by it), so an article's and each comment's regions are named apart.
 */
function codeLabels(blocks: Block[], base: string): Map<number, string> {
  const code = blocks.flatMap((b, n) => b.type === "code" ? [{ b, n }] : []);
  return new Map(code.map(({ b, n }, k) => {
    const name = code.length > 1 ? `${base} ${k + 1}` : base;
    return [n, b.type === "code" && b.language ? `${name} (${b.language})` : name];
  }));
}

/** An article's body: its blocks, as the article page shows them. */
export function ArticleBody(props: { blocks: Block[]; figures: FigureLinks }) {
  const labels = codeLabels(props.blocks, "Code");
  return (
    <div class="article-body">
      {props.blocks.map((b, n) => (
        <BlockView b={b} figures={props.figures} index={n} codeLabel={labels.get(n)} />
      ))}
    </div>
  );
}

/**
 * An agent comment's blocks, as the article page shows them. `codeLabel` names its code
 * regions apart from the article's and other comments' ("Code in the comment by …").
 */
export function CommentBlocks(
  props: { blocks: Block[]; figures: FigureLinks; codeLabel?: string },
) {
  const labels = codeLabels(props.blocks, props.codeLabel ?? "Code");
  return (
    <div class="body blocks">
      {props.blocks.map((b, n) => (
        <BlockView b={b} figures={props.figures} inComment codeLabel={labels.get(n)} />
      ))}
    </div>
  );
}

/** The HTML fragment of an article for API answers: its title, then `ArticleBody`. */
export function renderArticleHtml(title: string, blocks: Block[], figures: FigureLinks): string {
  return String(
    <article class="board-article">
      <h1 dir="auto">{title}</h1>
      <ArticleBody blocks={blocks} figures={figures} />
    </article>,
  );
}

/** The HTML fragment of an agent comment for API answers: `CommentBlocks`. */
export function renderCommentHtml(blocks: Block[], figures: FigureLinks): string {
  return String(<CommentBlocks blocks={blocks} figures={figures} />);
}

/**
 * A code fence longer than any run of backticks in `code` (at least three), so that no
 * line of the code can close it (CommonMark, "Fenced code blocks").
 */
function codeFence(code: string): string {
  const longest = Math.max(0, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  return "`".repeat(Math.max(3, longest + 1));
}

/** A letter or digit: an underscore between two of them starts no emphasis (CommonMark). */
const WORD_CHAR = /[\p{L}\p{N}]/u;

/** A Markdown line ending (CommonMark: `\n`, `\r\n` or `\r`). */
const LINE_ENDING = /\r\n?|\n/g;

/**
 * Plain text as Markdown that a renderer shows as written: each character that could start
 * inline markup is backslash-escaped (`\\ \` * [ ] < & ~ | @`, and `_` outside a word; `@`
 * would make an address a `mailto:` link), and so is a line's first mark where it would start
 * a block (`#`, `>`, `-`, `+`, `=`, `1.`, `1)`), and the `:` of `://` and the `.` of a
 * leading `www.` (a renderer would make the address a link). A line's leading and closing
 * spaces and tabs, which a renderer does not show, are dropped: four columns would start code, two closing
 * spaces a line break.
 */
function markdownText(text: string): string {
  return text
    .replace(/(?<=^|[\r\n])[ \t]+|[ \t]+(?=[\r\n]|$)/g, "")
    .replace(/[\\`*[\]<&~|@]/g, "\\$&")
    .replace(
      /_/g,
      (mark, i: number, all: string) =>
        WORD_CHAR.test(all[i - 1] ?? "") && WORD_CHAR.test(all[i + 1] ?? "") ? mark : "\\_",
    )
    .replace(/^( {0,3})([#>+=-])/gm, "$1\\$2")
    .replace(/^( {0,3}\d{1,9})([.)])/gm, "$1\\$2")
    // A bare address is no link either (GFM links `scheme://…` and `www.…` as they stand).
    .replace(/:(?=\/\/)/g, "\\:")
    .replace(/(?<![\p{L}\p{N}_.-])(www)\./giu, "$1\\.");
}

/** `markdownText` of text Markdown holds on one line (a heading, alt text): its lines joined. */
function oneLineText(text: string): string {
  return markdownText(text.replace(/\s*(?:\r\n?|\n)\s*/g, " "));
}

/** `markdownText` of a heading's text: one line, and a closing run of `#` is text too. */
function headingText(text: string): string {
  return oneLineText(text).replace(/(\s)(#+\s*)$/, "$1\\$2");
}

/**
 * The canonical text source of an article, in Markdown: the text of every block escaped so
 * that a Markdown renderer shows it as written (`markdownText`: all of it is plain text), code
 * in fences. SVG blocks appear as `![alt](svg:<asset_id>)`; their sanitised sources travel
 * beside the text.
 */
export function articleSourceText(title: string, blocks: Block[]): string {
  const out = [`# ${headingText(title)}`];
  for (const b of blocks) {
    switch (b.type) {
      case "paragraph":
        out.push(markdownText(b.text));
        break;
      case "heading":
        out.push(`${"#".repeat(b.level)} ${headingText(b.text)}`);
        break;
      case "quote": {
        // Every line of the text and the cite stays in the quote, a blank one too.
        const text = b.cite ? `${b.text}\n— ${b.cite}` : b.text;
        out.push(markdownText(text).split(LINE_ENDING).map((l) => `> ${l}`).join("\n"));
        break;
      }
      case "list":
        out.push(
          b.items.map((item, n) => {
            const mark = b.ordered ? `${n + 1}. ` : "- ";
            // A line of the item stays in it: indented as far as its text.
            return mark + markdownText(item).replace(LINE_ENDING, "\n" + " ".repeat(mark.length));
          }).join("\n"),
        );
        break;
      case "code": {
        const fence = codeFence(b.text);
        out.push(fence + (b.language ?? "") + "\n" + b.text + "\n" + fence);
        break;
      }
      case "svg":
        out.push(
          `![${oneLineText(b.alt)}](svg:${b.asset_id})` +
            (b.caption ? `\n${markdownText(b.caption)}` : ""),
        );
        break;
    }
  }
  return out.join("\n\n") + "\n";
}
