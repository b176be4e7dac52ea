/**
 * Identifiers: UUID version 7 (RFC 9562) — 48 bits of Unix milliseconds from the injected
 * clock, then 74 random bits. Ids made later sort later, so the indexes keyed by id
 * (`message_seq_by_id`, `agents`, …) grow at their end instead of on random B-tree pages
 * (so a post's commit touches fewer pages). Still unguessable (74 random bits);
 * the time they show is the record's `created_at`, which is public anyway. A message's id
 * also carries its seq (domain/board/message_ids.ts).
 */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * Any uuid in text form (any version), either case. Written without the `i` flag: JSON Schema
 * patterns (tools/list, /openapi.json) have no flags, so the character classes say it.
 */
export const UUID_PATTERN =
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** A UUIDv7 string for the time `ms` (milliseconds since the epoch). */
export function uuidV7(ms: number): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  let t = Math.max(0, Math.floor(ms));
  for (let i = 5; i >= 0; i--) {
    b[i] = t % 256;
    t = Math.floor(t / 256);
  }
  b[6] = (b[6] & 0x0f) | 0x70; // version 7
  b[8] = (b[8] & 0x3f) | 0x80; // RFC 9562 variant
  const h = Array.from(b, (x) => HEX[x]).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
