/**
 * Whole-store backup as newline-delimited JSON: one line per entry,
 * `{"key": [...], "value": ...}` with a type tag for what JSON cannot hold
 * (bigint, Uint8Array, KvU64, Date, undefined), and a last line `{"end": {"entries": n}}`
 * that says the file is whole (or, from an export the store changed under, `{"store_changed":
 * true}`, which no import takes). Expiry deadlines are not readable from KV and are not
 * exported: every expiry is enforced in code anyway (docs/deploy.md).
 */
import { createHash } from "node:crypto";
import { keySize, KV_LIMITS, storedValueSize, valueSize } from "../kv/atomic_limits.ts";
import { keys, READ_VERSION_KEY } from "../kv/keys.ts";
import type { KeyValues } from "../kv/key_values.ts";
import { unfinishedImport } from "../kv/open.ts";

/**
 * The mark of an import under way: set with the first entry, deleted with the last, so a store
 * an import left part-way is known as such (kv/open.ts `unfinishedImport`).
 */
const IMPORT_MARK = keys.metaImportUnfinished();
type ImportMark = KeyValues["metaImportUnfinished"];

type Tagged =
  | { $bigint: string }
  | { $bytes: string }
  | { $u64: string }
  | { $date: number }
  | { $undefined: true };

function b64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function unb64(s: string): Uint8Array {
  return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
}

/** Encodes a KV value or key part into plain JSON. */
function encodeValue(v: unknown): unknown {
  if (typeof v === "bigint") return { $bigint: v.toString() } satisfies Tagged;
  if (v instanceof Uint8Array) return { $bytes: b64(v) } satisfies Tagged;
  if (v instanceof Deno.KvU64) return { $u64: v.value.toString() } satisfies Tagged;
  if (v instanceof Date) return { $date: v.getTime() } satisfies Tagged;
  if (v === undefined) return { $undefined: true } satisfies Tagged;
  if (Array.isArray(v)) return v.map(encodeValue);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = encodeValue(x);
    return out;
  }
  return v;
}

/** Reverses `encodeValue`. */
function decodeValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(decodeValue);
  if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    const ks = Object.keys(o);
    if (ks.length === 1) {
      if (typeof o.$bigint === "string") return BigInt(o.$bigint);
      if (typeof o.$bytes === "string") return unb64(o.$bytes);
      if (typeof o.$u64 === "string") return new Deno.KvU64(BigInt(o.$u64));
      if (typeof o.$date === "number") return new Date(o.$date);
      if (o.$undefined === true) return undefined;
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(o)) out[k] = decodeValue(x);
    return out;
  }
  return v;
}

/**
 * What one reading of the whole store saw: a digest of every key with its versionstamp, in
 * order. Two readings with the same digest saw every key unchanged between its two reads, so
 * the store held just these entries at any moment between the end of the first and the start
 * of the second. `each` sees every entry and its key as encoded for the file.
 */
async function readingOf(
  kv: Deno.Kv,
  each: (entry: Deno.KvEntry<unknown>, key: string) => Promise<void> | void = () => {},
): Promise<{ digest: string; entries: number }> {
  const hash = createHash("sha256");
  let entries = 0;
  for await (const e of kv.list({ prefix: [] }, { consistency: "strong" })) {
    const key = JSON.stringify(encodeValue([...e.key]));
    hash.update(`${key}\t${e.versionstamp}\n`);
    await each(e, key);
    entries++;
  }
  return { digest: hash.digest("hex"), entries };
}

/**
 * Streams every entry of the store as NDJSON lines, then the end line, and returns the entry
 * count. A store holds many entries and one listing reads them in many reads, each seeing the
 * commits done by then: a write that lands meanwhile can be in the file in part (a message
 * above its board's head, so that a board restored from it would give its number again). So
 * the store is read a second time, comparing every key and versionstamp; when anything
 * changed in between, the end line is not written: a line that says so is (`STORE_CHANGED`,
 * which an import refuses, also one told to take a file without an end line) and
 * `StoreChanged` is thrown: export again, with the writes stopped.
 */
export async function exportKv(
  kv: Deno.Kv,
  write: (line: string) => Promise<void> | void,
): Promise<number> {
  const unfinished = await unfinishedImport(kv);
  if (unfinished) throw new BackupRefused(`the store ${unfinished}`);
  const first = await readingOf(
    kv,
    (e, key) => write(`{"key":${key},"value":${JSON.stringify(encodeValue(e.value))}}\n`),
  );
  const second = await readingOf(kv);
  if (second.digest !== first.digest) {
    try {
      await write(JSON.stringify(STORE_CHANGED) + "\n");
    } catch { /* the output is gone: the refusal below still says why */ }
    throw new StoreChanged(
      "the store changed while it was read (something wrote to it): the file would mix " +
        "states, such as a message above its board's head",
    );
  }
  await write(JSON.stringify({ end: { entries: first.entries } }) + "\n");
  return first.entries;
}

/**
 * The last line of an export the store changed under: its entries mix states, so no import
 * takes the file, not even as one made before end lines existed (`--without-end-line`, which
 * the refusal of a file without an end line suggests), as when its output went on through a
 * pipe that hid the export's exit code.
 */
const STORE_CHANGED = { store_changed: true } as const;

/** How full the import fills each commit, against the portable atomic limits (estimates). */
const FILL = 0.8;

/** A backup the import refuses, with what is wrong and where. */
export class BackupRefused extends Error {}

/** An export the store changed under: the file it wrote has no end line, but `STORE_CHANGED`. */
export class StoreChanged extends BackupRefused {}

type Lines = AsyncIterable<string> | Iterable<string>;

const errorText = (e: unknown) => e instanceof Error ? e.message : String(e);

/**
 * Why KV would refuse to store this entry (so the import would stop part-way), or null: a key
 * empty, with a part of another type than KV keys take, or over the key size; a value over
 * the value size. An export never writes such a line.
 */
function unstorable(key: unknown[], value: unknown): string | null {
  if (key.length === 0) return "its key is empty";
  // By index: an undefined part (`{"$undefined":true}`) is one KV keys cannot hold too.
  const at = key.findIndex((p) =>
    !["string", "number", "bigint", "boolean"].includes(typeof p) && !(p instanceof Uint8Array)
  );
  if (at >= 0) {
    return `its key has a part KV keys cannot hold (${JSON.stringify(key[at]) ?? String(key[at])})`;
  }
  const k = keySize(key as Deno.KvKey);
  if (k > KV_LIMITS.keyBytes) return `its key is ${k} bytes, over ${KV_LIMITS.keyBytes}`;
  const v = valueSize(value);
  if (v > KV_LIMITS.valueBytes) return `its value is ${v} bytes, over ${KV_LIMITS.valueBytes}`;
  return null;
}

/** An entry line's key and value, or null for the end line; refuses anything else. */
function parseLine(
  line: string,
  at: number,
): { key: Deno.KvKey; value: unknown } | { end: number } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new BackupRefused(`line ${at} is not JSON (a file cut short or changed?)`);
  }
  const o = parsed as { key?: unknown; value?: unknown; end?: { entries?: unknown } };
  if (o && typeof o === "object" && Array.isArray(o.key) && "value" in o) {
    let key: unknown[], value: unknown;
    try {
      key = decodeValue(o.key) as unknown[];
      value = decodeValue(o.value);
    } catch (e) {
      throw new BackupRefused(`line ${at} holds a tag that does not decode (${errorText(e)})`);
    }
    const why = unstorable(key, value);
    if (why) throw new BackupRefused(`line ${at} cannot be stored: ${why}`);
    return { key: key as Deno.KvKey, value };
  }
  if (o && typeof o === "object" && typeof o.end?.entries === "number") {
    return { end: o.end.entries };
  }
  if (o && typeof o === "object" && "store_changed" in o) {
    throw new BackupRefused(
      `line ${at} says the store changed while the export read it: its entries mix states ` +
        "(export again with the board stopped)",
    );
  }
  throw new BackupRefused(`line ${at} is neither an entry nor the end line`);
}

/**
 * Checks a whole backup before anything is written: every line an entry of a key no other line
 * holds, then the end line with the count of the entries before it (a file cut short has none,
 * or a different count).
 * `endLine: false` accepts a file without one (an export made before end lines existed).
 * Returns the entry count.
 */
export async function checkBackup(lines: Lines, endLine: boolean): Promise<number> {
  let n = 0;
  let at = 0;
  let end: number | null = null;
  /** Each key's line, by the key's JSON: a key twice is a file changed by hand. */
  const keyLines = new Map<string, number>();
  for await (const raw of lines) {
    at++;
    const line = raw.trim();
    if (!line) continue;
    if (end !== null) throw new BackupRefused(`line ${at} comes after the end line`);
    const parsed = parseLine(line, at);
    if ("end" in parsed) {
      end = parsed.end;
      continue;
    }
    const key = JSON.stringify(JSON.parse(line).key);
    if (key === JSON.stringify(IMPORT_MARK)) {
      throw new BackupRefused(
        `line ${at} is the mark of an import that did not finish: the backup was made of a ` +
          "store that held part of another backup",
      );
    }
    const first = keyLines.get(key);
    if (first !== undefined) throw new BackupRefused(`line ${at} repeats the key of line ${first}`);
    keyLines.set(key, at);
    n++;
  }
  if (end === null && endLine) {
    throw new BackupRefused(
      `the file has no end line: it was cut short, or made before end lines existed (then import it with --without-end-line)`,
    );
  }
  if (end !== null && end !== n) {
    throw new BackupRefused(`the end line says ${end} entries, the file holds ${n}`);
  }
  return n;
}

/**
 * Commits the backup's first entry alone, then makes sure the store was still empty when it
 * landed. KV cannot check a whole range in a commit, but every entry carries the versionstamp of
 * the commit that wrote it, and no two commits share one: if the store then holds an entry of
 * another commit (a writer that committed after the emptiness check, before this commit or just
 * after it), the entry is taken back (unless that writer has already replaced it) and the import
 * is refused.
 */
async function commitFirstEntry(
  kv: Deno.Kv,
  key: Deno.KvKey,
  value: unknown,
  mark: ImportMark,
): Promise<void> {
  const res = await kv.atomic().check({ key, versionstamp: null }).set(key, value)
    .set(IMPORT_MARK, mark).commit();
  const raced = "another writer committed to the store as the import began (is the board " +
    "running on it?): import into an empty store nothing else writes to";
  if (!res.ok) throw new BackupRefused(raced);
  for await (const e of kv.list({ prefix: [] }, { consistency: "strong" })) {
    if (e.versionstamp === res.versionstamp) continue; // this commit's (and the read version)
    const versionstamp = res.versionstamp;
    await kv.atomic().check({ key, versionstamp }).delete(key).commit();
    await kv.atomic().check({ key: IMPORT_MARK, versionstamp }).delete(IMPORT_MARK).commit();
    throw new BackupRefused(raced);
  }
}

/**
 * Writes a backup into an empty store, in batches, once the whole file checked out
 * (`checkBackup`): a file cut short or changed, or a store that already holds entries (an
 * import sets keys; it would mix two boards' sequences), is refused with `BackupRefused`
 * before anything is written. The emptiness holds when the first entry lands
 * (`commitFirstEntry`), so a writer that commits meanwhile is refused too; one that starts
 * writing after that is not noticed. `read` is called once per pass. Returns the entries
 * written.
 */
export async function importKv(
  kv: Deno.Kv,
  read: () => Lines,
  { endLine = true }: { endLine?: boolean } = {},
): Promise<number> {
  for await (const _ of kv.list({ prefix: [] }, { limit: 1, consistency: "strong" })) {
    throw new BackupRefused(
      `the store ${
        await unfinishedImport(kv) ?? "already holds entries: import into an empty store"
      }`,
    );
  }
  const expected = await checkBackup(read(), endLine);
  const mark = { started_at: Math.floor(Date.now() / 1000), entries: expected };
  let n = 0;
  let op = kv.atomic();
  // Each commit also carries the read-version bump a versioned handle adds (kv/versioned_kv.ts).
  const reserved = keySize(READ_VERSION_KEY);
  let inBatch = 0;
  let keyBytes = reserved;
  let bytes = reserved;
  const flush = async () => {
    if (inBatch === 0) return;
    const res = await op.commit();
    if (!res.ok) throw new Error("import batch failed to commit");
    op = kv.atomic();
    inBatch = 0;
    keyBytes = bytes = reserved;
  };
  let at = 0;
  for await (const raw of read()) {
    at++;
    const line = raw.trim();
    if (!line) continue;
    const parsed = parseLine(line, at);
    if ("end" in parsed) break;
    if (n === 0) {
      await commitFirstEntry(kv, parsed.key, parsed.value, mark);
      n++;
      continue;
    }
    // Within the limits of every store (a key of 190 bytes, as long idempotency keys make,
    // 500 times is over the 80 KB of keys an atomic may hold), each value counted as KV counts
    // it: English bodies with a curly quote are stored at two bytes a character.
    const k = keySize(parsed.key);
    const v = storedValueSize(parsed.value);
    if (
      inBatch + 2 > KV_LIMITS.mutationsPerAtomic * FILL ||
      keyBytes + k > KV_LIMITS.keyBytesPerAtomic * FILL ||
      bytes + k + v > KV_LIMITS.bytesPerAtomic * FILL
    ) await flush();
    op.set(parsed.key, parsed.value);
    inBatch++;
    keyBytes += k;
    bytes += k + v;
    n++;
  }
  // Left in place (the store holds part of a backup) when the file changed meanwhile.
  if (n !== expected) throw new Error(`the file changed during the import (${n} of ${expected})`);
  if (n > 0) {
    op.delete(IMPORT_MARK);
    inBatch++;
  }
  await flush();
  return n;
}
