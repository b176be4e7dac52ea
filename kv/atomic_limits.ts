import { serialize } from "node:v8";

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

/**
 * Above this estimate a value is measured exactly. KV stores a value as V8 serializes it, a
 * string with any character above U+00FF at two bytes per UTF-16 unit, so the UTF-8 estimate
 * can be half the stored size; below this, even three times the estimate fits a value.
 */
const MEASURE_ABOVE = 16_384;

/**
 * The serialized size of a value, as KV's limits count it: estimated from its UTF-8 or JSON
 * length when small, measured with V8's serializer (what KV stores) when it may come near the
 * 64 KiB limit.
 */
export function valueSize(value: unknown): number {
  if (value instanceof Uint8Array) return value.length;
  if (typeof value === "bigint") return 8;
  if (value instanceof Deno.KvU64) return 8;
  if (typeof value === "number" || typeof value === "boolean" || value == null) return 9;
  let estimate: number;
  try {
    estimate = typeof value === "string"
      ? utf8Bytes(value) + 2
      : utf8Bytes(JSON.stringify(value) ?? "");
  } catch {
    estimate = Infinity;
  }
  if (estimate <= MEASURE_ABOVE) return estimate;
  try {
    return storedValueSize(value);
  } catch {
    return estimate === Infinity ? 0 : estimate;
  }
}

/**
 * The size KV counts for a value, measured: bytes as they are, a `KvU64` as 8, anything else
 * as V8 serializes it (what KV stores; throws for what V8 cannot serialize). A sum of
 * `valueSize` estimates can be half what KV counts (English text with one curly quote is stored
 * at two bytes a character): what fills a commit with many values sums these.
 */
export function storedValueSize(value: unknown): number {
  if (value instanceof Uint8Array) return value.length;
  if (value instanceof Deno.KvU64) return 8;
  return serialize(value).length;
}
