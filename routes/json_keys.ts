/**
 * Duplicate member names in JSON text. `JSON.parse` keeps the last of two members with one
 * name, where another reader (a proxy, a validator, the client's own log) may keep the first:
 * the board refuses such a body instead of acting on a different request than was checked.
 * Also where a value sits inside parsed JSON (`valueAt`).
 */

/**
 * The first member name that appears twice in one object of `text`, or null. `text` must
 * be valid JSON (parse it first); names are compared decoded (`"a"` and `"\u0061"` are one).
 */
export function repeatedMemberName(text: string): string | null {
  /** Per open object the names seen so far; null for an open array. */
  const open: (Set<string> | null)[] = [];
  let nameNext = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      const names = open[open.length - 1];
      if (names && nameNext) {
        const name = JSON.parse(text.slice(i, end + 1)) as string;
        if (names.has(name)) return name;
        names.add(name);
        nameNext = false;
      }
      i = end;
    } else if (ch === "{") {
      open.push(new Set());
      nameNext = true;
    } else if (ch === "[") {
      open.push(null);
    } else if (ch === "}" || ch === "]") {
      open.pop();
    } else if (ch === ",") {
      nameNext = open[open.length - 1] != null;
    }
  }
  return null;
}

/** The value at `path` inside `value` (undefined where the path leaves it). */
export function valueAt(value: unknown, path: PropertyKey[]): unknown {
  let v = value;
  for (const p of path) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}
