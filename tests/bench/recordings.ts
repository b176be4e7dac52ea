/**
 * Recorded benchmark figures (the JSON that `--record FILE` writes): several recordings of
 * the same script, taken in alternating rounds, combine into one by the median of each
 * number; text is the first recording's.
 *
 * `deno run -A tests/bench/recordings.ts OUT IN...` writes the combination of IN... to OUT.
 */

/** Each number the median of the numbers at the same place in `all` (same shape). */
export function medianOf(all: unknown[]): unknown {
  const first = all[0];
  if (typeof first === "number") {
    const sorted = (all as number[]).toSorted((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }
  if (first && typeof first === "object") {
    return Object.fromEntries(
      Object.keys(first).map((k) => [
        k,
        medianOf(all.map((r) => (r as Record<string, unknown>)[k])),
      ]),
    );
  }
  return first;
}

/** A recording read from `path` (relative to the working directory or a URL). */
export async function readRecording<T>(
  path: string | URL,
): Promise<{ commit: string; figures: T }> {
  return JSON.parse(await Deno.readTextFile(path));
}

if (import.meta.main) {
  const [out, ...inputs] = Deno.args;
  const all = await Promise.all(inputs.map((p) => readRecording(p)));
  await Deno.writeTextFile(out, JSON.stringify(medianOf(all), null, 2) + "\n");
}
