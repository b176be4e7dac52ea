/** Hashing and constant-time comparison of secrets and their digests; a short hash of a string. */
import { createHash } from "node:crypto";

const encoder = new TextEncoder();

/**
 * SHA-256 of a string, hex encoded. Computed with `node:crypto` (built into Deno): the same
 * digest as Web Crypto's, but synchronous and about 30 times cheaper — Web Crypto's
 * `digest` was the largest single cost of an authenticated read
 * (docs/benchmark_notes.md). The signature stays async for its callers.
 */
export function sha256Hex(s: string): Promise<string> {
  return Promise.resolve(createHash("sha256").update(s, "utf8").digest("hex"));
}

/** Constant-time comparison of two strings of hex or ASCII. */
export function timingSafeEqual(a: string, b: string): boolean {
  const ab = encoder.encode(a);
  const bb = encoder.encode(b);
  let diff = ab.length ^ bb.length;
  const n = Math.max(ab.length, bb.length);
  for (let i = 0; i < n; i++) {
    diff |= (ab[i % (ab.length || 1)] ?? 0) ^ (bb[i % (bb.length || 1)] ?? 0);
  }
  return diff === 0;
}

/**
 * The 32-bit FNV-1a hash of a string's UTF-16 code units: short and fast, not for secrets
 * (mention lists store it of account ids; sealing a search batch spreads lists over passes).
 */
export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
