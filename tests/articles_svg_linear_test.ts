/**
 * The SVG sanitiser's work grows linearly with its input: for each of the worst inputs of
 * the benchmark (tests/bench/svg.ts), 64 KiB takes at most 8 times as long as 16 KiB
 * (linear is 4, quadratic 16; the quadratic sanitiser took 1–5 s at 64 KiB), measured as
 * tests/growth_helpers.ts says so that a busy machine does not decide the outcome.
 */
import { svgSanitizer } from "../domain/articles/mod.ts";

const { sanitizeSvg: sanitize } = await svgSanitizer();
/** The sanitiser with operator secrets to look for, as the board runs it. */
const sanitizeSvg = (svg: string) =>
  sanitize(svg, {
    moderatorKey: "linear-moderator-key-0123456789abcdef",
    secret: "linear-board-secret-0123456789abcdef",
  });
import { WORST_SVGS } from "./bench/svg.ts";
import { assertLinearGrowth } from "./growth_helpers.ts";

Deno.test("sanitizeSvg(): the worst inputs take linear time (16 KiB against 64 KiB)", async (t) => {
  for (const [name, make] of Object.entries(WORST_SVGS)) {
    await t.step(name, () => {
      assertLinearGrowth(name, sanitizeSvg, make(16_384), make(65_536), { reps: 1 });
    });
  }
});
