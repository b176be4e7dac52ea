/** Canonical JSON: one text for equal payloads, whatever their key order. */

/** Stable JSON: object keys sorted, for fingerprints of payloads. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => {
    if (v && typeof v === "object" && !Array.isArray(v)) {
      return Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]));
    }
    return v;
  });
}
