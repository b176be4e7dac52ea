/** Hashing and constant-time comparison of secrets and their digests. */
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
