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

/**
 * UTF-8 length of a string, without encoding it: what `TextEncoder` would produce (a lone
 * surrogate counts as the 3 bytes of U+FFFD).
 */
export function utf8Bytes(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 2; // a pair: 4 bytes for 2 code units
        i++;
        continue;
      }
      n += 2;
    } else n += 2;
  }
  return n;
}

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
