import assert from "node:assert/strict";

/**
 * Telling linear from quadratic work without a timed limit that flakes: the same function
 * on an input and on one 8 times longer, measured in the same run. Linear work takes about
 * 8 times as long, quadratic about 64 times; tests allow under 30 times (plus `SLACK_MS`).
 */

/** Timer resolution, scheduling noise and collector pauses of a fast batch, ms. */
export const SLACK_MS = 5;
/** The most the 8 times longer input may take, as a multiple of the shorter one. */
export const MAX_RATIO = 30;

/**
 * The fastest time, in ms, of `runs` batches of `reps` calls of `f` on each input; the
 * batches of both sizes interleaved, after one warm-up batch each, so that a busy machine
 * slows both alike.
 */
export function fastestTimes(
  f: (input: string) => unknown,
  small: string,
  large: string,
  { runs = 9, reps = 20 }: { runs?: number; reps?: number } = {},
): { small: number; large: number } {
  const batch = (input: string) => {
    const start = performance.now();
    for (let i = 0; i < reps; i++) f(input);
    return performance.now() - start;
  };
  batch(small);
  batch(large);
  let tSmall = Infinity;
  let tLarge = Infinity;
  for (let i = 0; i < runs; i++) {
    tSmall = Math.min(tSmall, batch(small));
    tLarge = Math.min(tLarge, batch(large));
  }
  return { small: tSmall, large: tLarge };
}

/** Fails unless `f` on `large` (8 times `small`) takes under MAX_RATIO times as long. */
export function assertLinearGrowth(
  name: string,
  f: (input: string) => unknown,
  small: string,
  large: string,
  opts?: { runs?: number; reps?: number },
): void {
  assert.equal(large.length, 8 * small.length, `${name}: the inputs scale`);
  const t = fastestTimes(f, small, large, opts);
  assert.ok(
    t.large < MAX_RATIO * t.small + SLACK_MS,
    `${name}: ${small.length} characters took ${t.small.toFixed(2)} ms, ${large.length} ` +
      `took ${t.large.toFixed(2)} ms (linear is about 8 times as long, quadratic 64)`,
  );
}
