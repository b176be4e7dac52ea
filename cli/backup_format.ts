/**
 * Whole-store backup as newline-delimited JSON: one line per entry,
 * `{"key": [...], "value": ...}` with a type tag for what JSON cannot hold
 * (bigint, Uint8Array, KvU64, Date, undefined). Expiry deadlines are not readable from
 * KV and are not exported: every expiry is enforced in code anyway (docs/deploy.md).
 */

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

/** Streams every entry of the store as NDJSON lines. Returns the number of entries. */
export async function exportKv(
  kv: Deno.Kv,
  write: (line: string) => Promise<void> | void,
): Promise<number> {
  let n = 0;
  for await (const e of kv.list({ prefix: [] }, { consistency: "strong" })) {
    await write(
      JSON.stringify({ key: encodeValue([...e.key]), value: encodeValue(e.value) }) + "\n",
    );
    n++;
  }
  return n;
}

/** Writes NDJSON lines into the store in batches. Returns the number of entries written. */
export async function importKv(
  kv: Deno.Kv,
  lines: AsyncIterable<string> | Iterable<string>,
): Promise<number> {
  let n = 0;
  let op = kv.atomic();
  let inBatch = 0;
  let bytes = 0;
  const flush = async () => {
    if (inBatch === 0) return;
    const res = await op.commit();
    if (!res.ok) throw new Error("import batch failed to commit");
    op = kv.atomic();
    inBatch = 0;
    bytes = 0;
  };
  for await (const raw of lines) {
    const line = raw.trim();
    if (!line) continue;
    const { key, value } = JSON.parse(line);
    if (bytes + line.length > 400_000 || inBatch >= 500) await flush();
    op.set(decodeValue(key) as Deno.KvKey, decodeValue(value));
    inBatch++;
    bytes += line.length;
    n++;
  }
  await flush();
  return n;
}
