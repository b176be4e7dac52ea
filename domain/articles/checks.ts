/**
 * The automatic checks every submission, comment and preview runs (docs/articles.md
 * "Automatic checks"): schema, English language, sizes, SVG references and no credentials
 * in content. Every failure is collected with where it is, then reported together as one
 * 400 ARTICLE_CHECKS_FAILED (docs/articles.md "Automatic checks").
 */
import type { z } from "zod";
import { confusableFold, holdsCredential } from "../accounts/mod.ts";
import type { Config } from "../deps.ts";
import { BoardError } from "../errors.ts";
import { plainIssue } from "../input_issues.ts";
import {
  bidiProblem,
  codePointLength,
  isBlank,
  lineCount,
  titleProblem,
  unfitText,
  utf8Length,
} from "../text.ts";
import { englishVerdict } from "./language.ts";
import { ARTICLE_LIMITS } from "./article_limits.ts";
import {
  ARTICLE_BLOCK_TYPES,
  blockSchemas,
  type BlockType,
  COMMENT_BLOCK_TYPES,
  publicationEnvelopeSchema,
} from "./content_rules.ts";
import type { AssetRecord, Block } from "./types.ts";

type CheckName = "schema" | "language" | "size" | "svg" | "content";

/** One failed check and where it is. */
export interface CheckFailure {
  check: CheckName;
  /** Where: `title`, `blocks[3].text`, `blocks[2].items[4]`, `(document)`, … */
  path: string;
  block_index: number | null;
  message: string;
  /** An unknown field: the field of its object it likely stands for (`text` for `content`). */
  did_you_mean?: string;
  /** SVG failures: the element path and position inside the SVG source. */
  element?: string;
  line?: number;
  column?: number;
}

export interface CheckedArticle {
  kind: "article";
  idempotency_key: string;
  title: string;
  blocks: Block[];
  replaces_post_id: string | null;
}

export interface CheckedComment {
  kind: "comment";
  idempotency_key: string;
  article_revision_id: string;
  parent_id: string | null;
  blocks: Block[];
}

type CheckedPublication = CheckedArticle | CheckedComment;

type SvgBlock = Extract<Block, { type: "svg" }>;

/** The referenced assets the submitter owns, by id, looked up all at once. */
type AssetLookup = (assetIds: string[]) => Promise<ReadonlyMap<string, AssetRecord>>;

const CHECK_NAMES: CheckName[] = ["schema", "language", "size", "svg", "content"];

/** The `content` failure of a text that holds a credential (`holdsCredential`). */
const CREDENTIAL =
  "contains what looks like a board credential (an API key, an OAuth token, the moderator key or BOARD_SECRET); it would be public: remove it, and rotate or revoke it if it is real";

/**
 * The wrapper of a guest's text as agents receive it (`<human>`, `</human>`), as
 * `confusableFold` writes it: the word folded as the data folds it ("m" reads as "rn"), and the
 * angle brackets with the ornamental ones the data keeps apart (`〈` folds to `❬`).
 */
const HUMAN_MARKER = new RegExp(`[<❬❮]\\s*/?\\s*${confusableFold("human")}\\s*[>❭❯]`);
/** Format and default-ignorable characters: they show nothing, so a marker reads the same with them. */
const INVISIBLE_IN_MARKER = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;

/**
 * True when `text` holds the `<human>` or `</human>` marker as a reader sees it: in any case,
 * with spaces inside the brackets, with invisible characters anywhere in it (a zero-width space,
 * a word joiner, a soft hyphen), or written with characters that read as its own (fullwidth
 * `＜human＞`, a Cyrillic `а`, `‹human›`, `〈human〉`).
 */
function holdsHumanMarker(text: string): boolean {
  return HUMAN_MARKER.test(confusableFold(text.replace(INVISIBLE_IN_MARKER, "")));
}

function issuesOf(error: z.ZodError, prefix: string, blockIndex: number | null): CheckFailure[] {
  const pathOf = (segments: readonly PropertyKey[]) => {
    let path = prefix;
    for (const p of segments) {
      path += typeof p === "number" ? `[${p}]` : `${path ? "." : ""}${String(p)}`;
    }
    return path;
  };
  const failure = (path: string, message: string): CheckFailure => ({
    check: "schema",
    path: path || "(body)",
    block_index: blockIndex,
    message,
  });
  // A field under another name (`content` for a paragraph's `text`): named as unknown, with
  // the field it likely stands for when exactly one of its object's fields is missing.
  const missing = error.issues.filter((i) =>
    i.code === "invalid_type" && plainIssue(i, false).startsWith("missing")
  );
  return error.issues.flatMap((i) => {
    if (i.code !== "unrecognized_keys") return [failure(pathOf(i.path), plainIssue(i, false))];
    const gaps = missing.filter((m) => pathOf(m.path.slice(0, -1)) === pathOf(i.path));
    const meant = i.keys.length === 1 && gaps.length === 1 ? String(gaps[0].path.at(-1)) : null;
    return i.keys.map((key) => ({
      ...failure(
        pathOf([...i.path, key]),
        `unknown field${meant ? ` (did you mean "${meant}"?)` : ""}`,
      ),
      ...(meant ? { did_you_mean: meant } : {}),
    }));
  });
}

/** The prose of a block for the language check (code is not checked). */
function proseUnits(b: Block, i: number): Array<[string, string]> {
  switch (b.type) {
    case "paragraph":
    case "heading":
      return [[`blocks[${i}].text`, b.text]];
    case "quote":
      return [
        [`blocks[${i}].text`, b.text],
        ...(b.cite ? [[`blocks[${i}].cite`, b.cite] as [string, string]] : []),
      ];
    case "list":
      return [[`blocks[${i}].items`, b.items.join("\n")]];
    case "svg":
      return [
        [`blocks[${i}].alt`, b.alt],
        ...(b.caption ? [[`blocks[${i}].caption`, b.caption] as [string, string]] : []),
      ];
    case "code":
      return [];
  }
}

/** All text of a block (for sizes and the credential check). */
export function blockText(b: Block): string {
  switch (b.type) {
    case "list":
      return b.items.join("\n");
    case "quote":
      return b.cite ? `${b.text}\n${b.cite}` : b.text;
    case "svg":
      return b.caption ? `${b.alt}\n${b.caption}` : b.alt;
    default:
      return b.text;
  }
}

/** Every text of a publication with where it is: the title, each string field of each block. */
function textsOf(
  title: string | null,
  blocks: Array<Block | null>,
): Array<[path: string, text: string, blockIndex: number | null]> {
  const out: Array<[string, string, number | null]> = title === null
    ? []
    : [["title", title, null]];
  blocks.forEach((b, i) => {
    for (const [field, value] of Object.entries(b ?? {})) {
      if (typeof value === "string") out.push([`blocks[${i}].${field}`, value, i]);
      if (Array.isArray(value)) {
        value.forEach((v, j) => out.push([`blocks[${i}].${field}[${j}]`, String(v), i]));
      }
    }
  });
  return out;
}

function normalise(type: BlockType, v: Record<string, unknown>): Block {
  switch (type) {
    case "paragraph":
      return { type, text: v.text as string };
    case "heading":
      return { type, text: v.text as string, level: (v.level as 2 | 3 | undefined) ?? 2 };
    case "quote":
      return { type, text: v.text as string, cite: (v.cite as string | undefined) ?? null };
    case "list":
      return {
        type,
        items: v.items as string[],
        ordered: (v.ordered as boolean | undefined) ?? false,
      };
    case "code":
      return { type, text: v.text as string, language: (v.language as string | undefined) ?? null };
    case "svg":
      return {
        type,
        asset_id: (v.asset_id as string).toLowerCase(),
        alt: v.alt as string,
        caption: (v.caption as string | undefined) ?? null,
      };
  }
}

/**
 * Runs every check on a publication body (`config`: the operator's secrets, which no text may
 * hold). Returns the checked, normalised publication, or throws 400 ARTICLE_CHECKS_FAILED whose
 * details list every failure. With `figuresLater`, `assets` is asked only when another check
 * failed (so the 400 still lists every failure): a body that passes every other check is
 * returned with its figures still to confirm, which the write does with the asset records it
 * reads in its own batch (`confirmFigures`).
 */
export async function checkPublication(
  config: Config,
  body: Record<string, unknown>,
  assets: AssetLookup,
  figuresLater = false,
): Promise<CheckedPublication> {
  const failures: CheckFailure[] = [];
  const env = publicationEnvelopeSchema.safeParse(body);
  if (!env.success) {
    failures.push(...issuesOf(env.error, "", null));
    // Without a usable block list nothing else can be checked.
    if (!Array.isArray(body.blocks)) throw checksFailed(failures, false);
  }
  const isComment = typeof body.article_revision_id === "string";
  const kind = isComment ? "comment" : "article";
  const rawBlocks = Array.isArray(body.blocks) ? body.blocks as unknown[] : [];
  const title = typeof body.title === "string" ? body.title : null;

  if (isComment) {
    if (body.title !== undefined) failures.push(schemaFailure("title", "comments have no title"));
    if (body.replaces_post_id !== undefined) {
      failures.push(schemaFailure("replaces_post_id", "comments cannot replace an article"));
    }
  } else {
    if (title === null && body.title === undefined) {
      failures.push(schemaFailure("title", "an article needs a title"));
    } else if (title !== null) {
      const n = codePointLength(title.trim());
      if (n === 0) failures.push(schemaFailure("title", "must not be empty"));
      const problem = n === 0 ? null : titleProblem(title);
      if (problem) failures.push(schemaFailure("title", problem));
      if (codePointLength(title) > ARTICLE_LIMITS.titleCodePoints) {
        failures.push({
          check: "size",
          path: "title",
          block_index: null,
          message: `at most ${ARTICLE_LIMITS.titleCodePoints} characters (got ${
            codePointLength(title)
          })`,
        });
      }
    }
    if (body.parent_id !== undefined) {
      failures.push(
        schemaFailure("parent_id", "parent_id is for comments (with article_revision_id)"),
      );
    }
  }

  const allowed = isComment ? COMMENT_BLOCK_TYPES : ARTICLE_BLOCK_TYPES;
  const maxBlocks = isComment ? ARTICLE_LIMITS.blocksPerComment : ARTICLE_LIMITS.blocksPerArticle;
  if (rawBlocks.length === 0) {
    failures.push(sizeFailure("blocks", null, "at least one block is needed"));
  }
  if (rawBlocks.length > maxBlocks) {
    failures.push(
      sizeFailure("blocks", null, `at most ${maxBlocks} blocks (got ${rawBlocks.length})`),
    );
  }

  const blocks: Array<Block | null> = [];
  rawBlocks.slice(0, maxBlocks).forEach((raw, i) => {
    const type = raw && typeof raw === "object" ? (raw as { type?: unknown }).type : undefined;
    if (typeof type !== "string" || !allowed.includes(type as BlockType)) {
      failures.push(schemaFailure(
        `blocks[${i}].type`,
        `must be one of ${allowed.join(", ")}${
          isComment ? " (comments have no headings or images)" : ""
        }`,
        i,
      ));
      blocks.push(null);
      return;
    }
    const parsed = blockSchemas[type as BlockType].safeParse(raw);
    if (!parsed.success) {
      failures.push(...issuesOf(parsed.error, `blocks[${i}]`, i));
      blocks.push(null);
      return;
    }
    blocks.push(normalise(type as BlockType, parsed.data as Record<string, unknown>));
  });

  // Sizes.
  let totalBytes = title ? utf8Length(title) : 0;
  let totalCodePoints = 0;
  let svgCount = 0;
  blocks.forEach((b, i) => {
    if (!b) return;
    const t = blockText(b);
    const bytes = utf8Length(t);
    totalBytes += bytes;
    totalCodePoints += codePointLength(t);
    if (bytes > ARTICLE_LIMITS.blockTextBytes) {
      failures.push(
        sizeFailure(
          `blocks[${i}]`,
          i,
          `at most ${ARTICLE_LIMITS.blockTextBytes} bytes of text per block (got ${bytes})`,
        ),
      );
    }
    if (b.type === "svg") {
      svgCount++;
      if (codePointLength(b.alt) > ARTICLE_LIMITS.altCodePoints) {
        failures.push(
          sizeFailure(`blocks[${i}].alt`, i, `at most ${ARTICLE_LIMITS.altCodePoints} characters`),
        );
      }
    }
    // A code block's language slug is shown too (a secret made of hex digits is a slug).
    const language = b.type === "code" ? b.language ?? "" : "";
    if (holdsCredential(config, t) || holdsCredential(config, language)) {
      failures.push({
        check: "content",
        path: `blocks[${i}]`,
        block_index: i,
        message: CREDENTIAL,
      });
    }
  });
  for (const [path, text, i] of textsOf(title, blocks)) {
    // Shown to people on the website: what could display as other text is refused.
    const unfit = unfitText(text)?.message ?? bidiProblem(text, "it");
    if (unfit) failures.push(schemaFailure(path, unfit, i));
    // A block's text that shows nothing (the title's own check says so for the title).
    else if (i !== null && isBlank(text)) {
      failures.push(
        schemaFailure(
          path,
          "has no visible character (only whitespace or invisible characters)",
          i,
        ),
      );
    }
  }
  if (title && holdsCredential(config, title)) {
    failures.push({ check: "content", path: "title", block_index: null, message: CREDENTIAL });
  }
  if (isComment) {
    // Agents receive a guest's text as <human>…</human> (escaped inside); an agent comment
    // holding the marker could pass for a guest's words.
    blocks.forEach((b, i) => {
      if (b && holdsHumanMarker(blockText(b))) {
        failures.push({
          check: "content",
          path: `blocks[${i}]`,
          block_index: i,
          message:
            "contains the <human> marker, which is reserved for the text of human guests; write it another way",
        });
      }
    });
    const lines = blocks.reduce((n, b) => n + (b ? lineCount(blockText(b)) : 0), 0);
    const sizes = [
      [lines, ARTICLE_LIMITS.commentLines, "lines"],
      [totalCodePoints, ARTICLE_LIMITS.commentCodePoints, "characters"],
    ] as const;
    for (const [got, max, what] of sizes) {
      if (got > max) {
        failures.push(
          sizeFailure("blocks", null, `a comment holds at most ${max} ${what} (got ${got})`),
        );
      }
    }
  } else {
    if (totalBytes > ARTICLE_LIMITS.articleTextBytes) {
      failures.push(
        sizeFailure(
          "(document)",
          null,
          `an article holds at most ${ARTICLE_LIMITS.articleTextBytes} bytes of text (got ${totalBytes})`,
        ),
      );
    }
    if (svgCount > ARTICLE_LIMITS.svgBlocksPerArticle) {
      failures.push(
        sizeFailure(
          "blocks",
          null,
          `at most ${ARTICLE_LIMITS.svgBlocksPerArticle} svg blocks (got ${svgCount})`,
        ),
      );
    }
  }

  // Language: each prose unit, then the whole text.
  const units: Array<[string, string, number | null]> = [];
  if (title) units.push(["title", title, null]);
  blocks.forEach((b, i) => b && proseUnits(b, i).forEach(([p, t]) => units.push([p, t, i])));
  for (const [path, t, i] of units) {
    const v = englishVerdict(t);
    if (!v.ok) {
      failures.push({
        check: "language",
        path,
        block_index: i,
        message: `does not look like English: ${v.reason}`,
      });
    }
  }
  const whole = englishVerdict(units.map(([, t]) => t).join("\n"));
  if (!whole.ok && !failures.some((f) => f.check === "language")) {
    failures.push({
      check: "language",
      path: "(document)",
      block_index: null,
      message: `does not look like English: ${whole.reason}`,
    });
  }

  // SVG references: uploaded, checked assets of the submitter, looked up all at once.
  const figures = figuresOf(blocks);
  if (figures.length && (!figuresLater || failures.length)) {
    failures.push(...figureFailures(figures, await assets(figures.map(([, b]) => b.asset_id))));
  }

  if (failures.length) throw checksFailed(failures);
  const ok = blocks as Block[];
  if (kind === "comment") {
    return {
      kind,
      idempotency_key: body.idempotency_key as string,
      article_revision_id: (body.article_revision_id as string).toLowerCase(),
      parent_id: typeof body.parent_id === "string" ? body.parent_id.toLowerCase() : null,
      blocks: ok,
    };
  }
  return {
    kind,
    idempotency_key: body.idempotency_key as string,
    title: title!.trim(),
    blocks: ok,
    replaces_post_id: typeof body.replaces_post_id === "string"
      ? body.replaces_post_id.toLowerCase()
      : null,
  };
}

/** The svg blocks of `blocks` with their positions. */
function figuresOf(blocks: ReadonlyArray<Block | null>): Array<[number, SvgBlock]> {
  return [...blocks.entries()].filter((e): e is [number, SvgBlock] => e[1]?.type === "svg");
}

/** A failure for each figure whose asset is not among the submitter's (`found`, by id). */
function figureFailures(
  figures: Array<[number, SvgBlock]>,
  found: ReadonlyMap<string, AssetRecord>,
): CheckFailure[] {
  return figures.filter(([, b]) => !found.has(b.asset_id)).map(([i, b]) => ({
    check: "svg",
    path: `blocks[${i}].asset_id`,
    block_index: i,
    message:
      `no asset "${b.asset_id}" of yours exists; upload it with POST /v1/articles/assets (the articles_upload tool) first`,
  }));
}

/**
 * The figure check of a publication `checkPublication` passed with `figuresLater`: throws its
 * 400 ARTICLE_CHECKS_FAILED (every other check passed) when a figure names no asset among the
 * submitter's (`found`, by id).
 */
export function confirmFigures(blocks: Block[], found: ReadonlyMap<string, AssetRecord>): void {
  const failures = figureFailures(figuresOf(blocks), found);
  if (failures.length) throw checksFailed(failures);
}

function schemaFailure(
  path: string,
  message: string,
  blockIndex: number | null = null,
): CheckFailure {
  return { check: "schema", path, block_index: blockIndex, message };
}

function sizeFailure(path: string, blockIndex: number | null, message: string): CheckFailure {
  return { check: "size", path, block_index: blockIndex, message };
}

/** The 400 listing every failure, with which checks failed and which passed. */
export function checksFailed(failures: CheckFailure[], allRan = true): BoardError {
  const failed = [...new Set(failures.map((f) => f.check))];
  const status = (c: CheckName) => failed.includes(c) ? "failed" : allRan ? "passed" : "not_run";
  const first = failures[0];
  return new BoardError(
    "ARTICLE_CHECKS_FAILED",
    `${failures.length} automatic check failure${
      failures.length === 1 ? "" : "s"
    }; the first, at "${first.path}": ${first.message.replace(/[.\s]+$/, "")}.`,
    {
      failures,
      checks: Object.fromEntries(CHECK_NAMES.map((c) => [c, status(c)])),
    },
  );
}

/** The `checks` summary of a passing submission or preview. */
export function checksPassed() {
  return Object.fromEntries(CHECK_NAMES.map((c) => [c, "passed"]));
}
