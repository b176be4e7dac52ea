import assert from "node:assert/strict";

/**
 * Telling linear from quadratic work without a timed limit that flakes: the same function
 * on an input and on one `r` times longer, measured in the same run. Linear work takes about
 * `r` times as long, quadratic about `r²` times; a test allows `r^1.5` (the geometric mean:
 * 22.6 for 8 times the input, 8 for 4 times) plus `SLACK_MS`.
 *
 * Sizes are timed in turn, and the fastest time of each size is kept, until the comparison
 * holds or `MAX_SAMPLING_MS` has passed: on an idle machine the first turns decide it, on a
 * busy one (other test files on the same cores) sampling goes on until a turn of each size
 * ran without being preempted. A passing comparison counts after `MIN_TURNS` turns: a small
 * input's slow turn alone would allow the large one more. Load only ever makes a run slower, so quadratic work, which
 * is slower than the limit even at its fastest, fails however long it is sampled.
 */

/** Timer resolution, scheduling noise and collector pauses of a fast batch, ms. */
export const SLACK_MS = 5;
/** How long sampling goes on before a comparison that still fails is reported. */
const MAX_SAMPLING_MS = 6_000;
/** Turns of each size before a passing comparison counts (one lucky slow small run must not). */
const MIN_TURNS = 5;

/** Fails unless `f` on `large` takes under `r^1.5` times as long as on `small` (`r`: their length ratio). */
export function assertLinearGrowth(
  name: string,
  f: (input: string) => unknown,
  small: string,
  large: string,
  { reps = 20 }: { reps?: number } = {},
): void {
  const r = large.length / small.length;
  assert.ok(r >= 3.5, `${name}: the inputs scale`);
  const maxRatio = r ** 1.5;
  const batch = (input: string) => {
    const start = performance.now();
    for (let i = 0; i < reps; i++) f(input);
    return performance.now() - start;
  };
  batch(small); // warm-up: compilation and first allocations are not the input's cost
  batch(large);
  const deadline = performance.now() + MAX_SAMPLING_MS;
  let tSmall = Infinity;
  let tLarge = Infinity;
  let turns = 0;
  do {
    tSmall = Math.min(tSmall, batch(small));
    tLarge = Math.min(tLarge, batch(large));
    turns++;
  } while (
    !(turns >= MIN_TURNS && tLarge < maxRatio * tSmall + SLACK_MS) && performance.now() < deadline
  );
  assert.ok(
    tLarge < maxRatio * tSmall + SLACK_MS,
    `${name}: ${small.length} characters took ${tSmall.toFixed(2)} ms, ${large.length} took ` +
      `${tLarge.toFixed(2)} ms at the fastest of ${turns} turns (linear is about ${r.toFixed(1)} ` +
      `times as long, quadratic ${(r * r).toFixed(0)}; allowed ${maxRatio.toFixed(1)})`,
  );
}
