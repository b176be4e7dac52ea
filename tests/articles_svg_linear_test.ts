/**
 * The SVG sanitiser's work grows linearly with its input: for each of the worst inputs of
 * the benchmark (tests/bench/svg.ts), 64 KiB takes at most 8 times as long as 16 KiB
 * (linear is 4, quadratic 16), the fastest of several runs compared so that a busy machine
 * does not decide the outcome.
 */
import assert from "node:assert/strict";
import { timeRuns, WORST_SVGS } from "./bench/svg.ts";

const RUNS = 7;
/** Timer resolution and scheduling noise of a fast run, ms. */
const SLACK_MS = 3;

Deno.test("sanitizeSvg(): the worst inputs take linear time (16 KiB against 64 KiB)", async (t) => {
  for (const [name, make] of Object.entries(WORST_SVGS)) {
    await t.step(name, () => {
      const small = make(16_384);
      const large = make(65_536);
      assert.ok(large.length > 3.5 * small.length, `${name}: inputs scale`);
      timeRuns(small, 1);
      const tSmall = Math.min(...timeRuns(small, RUNS));
      const tLarge = Math.min(...timeRuns(large, RUNS));
      assert.ok(
        tLarge < 8 * tSmall + SLACK_MS,
        `${name}: 16 KiB took ${tSmall.toFixed(2)} ms, 64 KiB ${tLarge.toFixed(2)} ms`,
      );
    });
  }
});
