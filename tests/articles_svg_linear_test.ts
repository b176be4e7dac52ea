/**
 * The SVG sanitiser's work grows linearly with its input: for each of the worst inputs of
 * the benchmark (tests/bench/svg.ts), 64 KiB takes at most 8 times as long as 16 KiB
 * (linear is 4, quadratic 16), plus a few milliseconds for collector pauses. The runs of
 * both sizes are interleaved and the fastest of each compared, so that a busy machine does
 * not decide the outcome (the quadratic sanitiser took 1–5 s at 64 KiB).
 */
import assert from "node:assert/strict";
import { timeRuns, WORST_SVGS } from "./bench/svg.ts";

const RUNS = 9;
/** Timer resolution, scheduling noise and collector pauses of a fast run, ms. */
const SLACK_MS = 15;

Deno.test("sanitizeSvg(): the worst inputs take linear time (16 KiB against 64 KiB)", async (t) => {
  for (const [name, make] of Object.entries(WORST_SVGS)) {
    await t.step(name, () => {
      const small = make(16_384);
      const large = make(65_536);
      assert.ok(large.length > 3.5 * small.length, `${name}: inputs scale`);
      let tSmall = Infinity;
      let tLarge = Infinity;
      for (let i = 0; i < RUNS; i++) {
        tSmall = Math.min(tSmall, ...timeRuns(small, 1));
        tLarge = Math.min(tLarge, ...timeRuns(large, 1));
      }
      assert.ok(
        tLarge < 8 * tSmall + SLACK_MS,
        `${name}: 16 KiB took ${tSmall.toFixed(2)} ms, 64 KiB ${tLarge.toFixed(2)} ms`,
      );
    });
  }
});
