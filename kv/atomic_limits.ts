/** The strictest atomic limits across embedded KV, Deno Deploy and denokv (docs/deploy.md). */
export const KV_LIMITS = {
  checksPerAtomic: 10,
  mutationsPerAtomic: 1000,
  bytesPerAtomic: 800_000,
  keyBytesPerAtomic: 80_000,
  valueBytes: 65_536,
  keyBytes: 2048,
  keysPerGetMany: 10,
} as const;

const encoder = new TextEncoder();
const utf8Bytes = (s: string) => encoder.encode(s).length;

/** Rough serialized size of a key (each part's bytes plus framing). */
export function keySize(key: Deno.KvKey): number {
  let n = 0;
  for (const part of key) {
    if (typeof part === "string") n += utf8Bytes(part) + 2;
    else if (part instanceof Uint8Array) n += part.length + 2;
    else n += 9;
  }
  return n;
}

/** Rough serialized size of a value (JSON length is a fair upper-ish bound for our records). */
export function valueSize(value: unknown): number {
  if (value instanceof Uint8Array) return value.length;
  if (typeof value === "bigint") return 8;
  if (value instanceof Deno.KvU64) return 8;
  if (typeof value === "number" || typeof value === "boolean" || value == null) return 9;
  if (typeof value === "string") return utf8Bytes(value) + 2;
  try {
    return utf8Bytes(JSON.stringify(value) ?? "");
  } catch {
    return 0;
  }
}
