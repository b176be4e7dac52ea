/**
 * SVG assets (POST /v1/articles/assets): checked and sanitised on upload, stored in
 * parts under the value limit, referenced from article blocks `{ "type": "svg",
 * "asset_id" }` by their owner.
 */
import { keys } from "../../kv/keys.ts";
import { listTyped, readMany } from "../../kv/read_many.ts";
import { transact, type Tx } from "../../kv/tx.ts";
import { type Agent, stillActive } from "../accounts/mod.ts";
import type { Deps } from "../deps.ts";
import { utf8Length } from "../text.ts";
import { type CheckFailure, checksFailed } from "./checks.ts";
import { articleFingerprint, matchArticleIdem, putArticleIdem } from "./idempotency.ts";
import { articleQuotaKey, chargeArticleQuota } from "./quotas.ts";
import { getAll, writeAssetSvg } from "./store.ts";
import type { SvgResult } from "./svg_sanitize.ts";
import type { AssetRecord } from "./types.ts";

interface AssetReceipt {
  asset_id: string;
  source_bytes: number;
  sanitized_bytes: number;
  removed: string[];
  width: string | null;
  height: string | null;
  view_box: string | null;
  replayed?: true;
}

/** SVG failures as check failures (path `svg`, with element and position). */
function svgFailures(r: SvgResult, path = "svg"): CheckFailure[] {
  return r.failures.map((f) => ({
    check: f.rule === "size" || f.rule === "content" ? f.rule : "svg",
    path,
    block_index: null,
    message: f.message,
    element: f.element,
    line: f.line,
    column: f.column,
  }));
}

let sanitizer: Promise<typeof import("./svg_sanitize.ts")> | undefined;

/**
 * The SVG sanitiser and its XML parser, loaded with the first upload a process takes: no other
 * request needs them, so an instance (a Deploy isolate) that serves none never loads them.
 */
export function svgSanitizer(): Promise<typeof import("./svg_sanitize.ts")> {
  return sanitizer ??= import("./svg_sanitize.ts");
}

/**
 * Uploads an SVG asset (idempotent on the Idempotency-Key) in one commit, read in one batch
 * (the idempotency record and today's allowance). The daily allowance is charged before the
 * SVG is parsed, and a refused upload is charged too (the commit stores the charge alone,
 * then the refusal is answered): nobody gets the parser's work for free.
 */
export async function uploadAsset(
  deps: Deps,
  agent: Agent,
  source: string,
  idemKey: string,
): Promise<AssetReceipt> {
  const [print, { sanitizeSvg }] = await Promise.all([
    articleFingerprint("asset", { svg: source }),
    svgSanitizer(),
  ]);
  let checked: SvgResult | undefined; // parsed once, whatever the attempts
  const { value } = await transact(deps.kv, async (tx) => {
    // One clock reading per attempt: the day charged is the day of `created_at`.
    const now = deps.clock.now();
    // The day's count is read in the same batch, for `chargeArticleQuota` below.
    const { idem, account } = await tx.getNamed({
      idem: keys.articleIdempotency(agent.id, idemKey),
      quota: articleQuotaKey("article_assets", agent.id, now),
      account: keys.agents(agent.id),
    });
    stillActive(account.value); // refused when revoked or removed since it was admitted
    const stored = matchArticleIdem<AssetReceipt>(idem.value, print);
    if (stored) return { receipt: { ...stored, replayed: true as const } };
    await chargeArticleQuota(tx, deps, "article_assets", agent.id, now);
    const r = checked ??= sanitizeSvg(source, deps.config);
    const svg = r.svg;
    if (r.failures.length || svg === null) return { refused: r };
    const id = deps.newId();
    const record: AssetRecord = {
      id,
      owner_id: agent.id,
      created_at: now,
      source_bytes: utf8Length(source),
      sanitized_bytes: utf8Length(svg),
      parts: writeAssetSvg(tx, id, svg),
      width: r.width,
      height: r.height,
      view_box: r.view_box,
      removed: r.removed,
    };
    tx.set(keys.articleAssets(id), record);
    const receipt: AssetReceipt = {
      asset_id: id,
      source_bytes: record.source_bytes,
      sanitized_bytes: record.sanitized_bytes,
      removed: record.removed,
      width: record.width,
      height: record.height,
      view_box: record.view_box,
    };
    putArticleIdem(tx, deps, agent.id, idemKey, "asset", print, receipt);
    return { receipt };
  });
  if (value.refused) throw checksFailed(svgFailures(value.refused));
  return value.receipt!;
}

/**
 * The assets of `ownerId` among `assetIds`, by id (the lookup the checks use for svg blocks):
 * every record in one round trip (`getMany` calls of at most 10 keys, sent together).
 */
export async function ownAssets(
  deps: Deps,
  ownerId: string,
  assetIds: string[],
): Promise<Map<string, AssetRecord>> {
  const ids = [...new Set(assetIds)];
  return ownedBy(ownerId, await getAll(deps.kv, ids.map((id) => keys.articleAssets(id))));
}

/**
 * `ownAssets` inside a write: the records are read through `tx` (call it beside the write's
 * first batch, which it joins) without checks. None is needed: an asset record is written
 * once, by its upload's commit, and never changed or removed, so what it says of its owner
 * still holds at the commit (and a check per figure would take the commit past the atomic
 * limit of checks).
 */
export async function ownAssetsIn(
  tx: Tx,
  ownerId: string,
  assetIds: string[],
): Promise<Map<string, AssetRecord>> {
  const ids = [...new Set(assetIds)];
  const entries = await tx.peekMany(ids.map((id) => keys.articleAssets(id)));
  return ownedBy(ownerId, entries.map((e) => e.value));
}

/** The records of `records` that `ownerId` owns, by id. */
function ownedBy(ownerId: string, records: Iterable<AssetRecord | null>) {
  const out = new Map<string, AssetRecord>();
  for (const a of records) if (a && a.owner_id === ownerId) out.set(a.id, a);
  return out;
}

/**
 * The lookup of `ownAssets` for a preview, which renders the figures it checks: each asset's
 * sanitised source (`sources`, after the lookup) is read with its record, in the same round
 * trip.
 */
export function ownAssetsWithSources(deps: Deps, ownerId: string) {
  let read: Promise<AssetsRead> | undefined;
  return {
    lookup: async (assetIds: string[]) =>
      ownedBy(ownerId, (await (read = readAssets(deps, assetIds))).records.values()),
    sources: async () => read ? (await read).sources : new Map<string, string>(),
  };
}

/** Asset records and their sanitised SVG sources, by id (missing assets left out). */
interface AssetsRead {
  records: Map<string, AssetRecord>;
  sources: Map<string, string>;
}

/**
 * Sanitised SVG sources of asset ids (missing ones are left out): the records and the parts
 * of every asset in one round trip (the parts listed by their asset's prefix), checked
 * against the record's count of parts.
 */
export async function svgSources(
  deps: Deps,
  assetIds: string[],
  consistency: Deno.KvConsistencyLevel = "strong",
): Promise<Map<string, string>> {
  return (await readAssets(deps, assetIds, consistency)).sources;
}

/** The records and sources of `svgSources`, in its one round trip. */
async function readAssets(
  deps: Deps,
  assetIds: string[],
  consistency: Deno.KvConsistencyLevel = "strong",
): Promise<AssetsRead> {
  const ids = [...new Set(assetIds)];
  const [records, parts] = await Promise.all([
    readMany(deps.kv, ids.map((id) => keys.articleAssets(id)), { consistency }),
    Promise.all(ids.map((id) =>
      Array.fromAsync(
        listTyped(deps.kv, { prefix: keys.articleAssetParts.range(id) }, { consistency }),
      )
    )),
  ]);
  const out: AssetsRead = { records: new Map(), sources: new Map() };
  ids.forEach((id, i) => {
    const a = records[i].value;
    if (!a) return;
    const mine = parts[i].map((e) => e.value);
    if (mine.length !== a.parts) throw new Error(`asset ${a.id} is incomplete`);
    out.records.set(id, a);
    out.sources.set(id, mine.join(""));
  });
  return out;
}

/**
 * A length in CSS pixels: an SVG number, unitless or in px ("1200", "1200px", "12.5", "1e3",
 * "+.5E2"), or null (percent, other units, junk, or a size no screen shows).
 */
function pixels(value: string | null): number | null {
  const m = value?.trim().match(/^(\+?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(?:px)?$/);
  const n = m ? Number(m[1]) : NaN;
  return n >= 1 && n <= 100_000 ? n : null;
}

/** A figure's size in CSS pixels. */
export interface FigureSize {
  width: number;
  height: number;
}

/**
 * The size an asset is drawn at on its own, in CSS pixels: its `width` and `height` (in
 * px or unitless), either one completed from the `viewBox` proportions, else the `viewBox`
 * size. Null when neither says (a browser then draws 300 × 150).
 */
function sizeOf(a: AssetRecord): FigureSize | null {
  const box = (a.view_box ?? "").trim().split(/[\s,]+/).map(Number);
  const vb = box.length === 4 && box[2] > 0 && box[3] > 0 ? { w: box[2], h: box[3] } : null;
  let width = pixels(a.width);
  let height = pixels(a.height);
  if (width === null && height === null && vb) [width, height] = [vb.w, vb.h];
  else if (width !== null && height === null && vb) height = (width * vb.h) / vb.w;
  else if (height !== null && width === null && vb) width = (height * vb.w) / vb.h;
  if (width === null || height === null) return null;
  return { width: Math.round(width), height: Math.round(height) };
}

/** The size of one asset (`sizeOf`), or null when it is unknown or has none. */
export async function figureSize(
  deps: Deps,
  assetId: string,
  consistency: Deno.KvConsistencyLevel = "strong",
): Promise<FigureSize | null> {
  const a = (await deps.kv.get(keys.articleAssets(assetId), { consistency })).value;
  return a ? sizeOf(a) : null;
}

/**
 * The sizes of several assets read in one batch (an article's figures, so that each `<img>`
 * has its intrinsic width and height and the page does not shift as they load).
 */
export async function figureSizes(
  deps: Deps,
  assetIds: string[],
): Promise<Map<string, FigureSize>> {
  const ids = [...new Set(assetIds)];
  const records = await getAll(deps.kv, ids.map((id) => keys.articleAssets(id)));
  const out = new Map<string, FigureSize>();
  records.forEach((a, i) => {
    const size = a ? sizeOf(a) : null;
    if (size) out.set(ids[i], size);
  });
  return out;
}
