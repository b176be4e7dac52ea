/**
 * Crash: the real server killed with SIGKILL under a write load, restarted on the same KV
 * file, checked after every restart (tests/reliability/crash_harness.ts). The fast part
 * kills 5 times; `BOARD_STRESS=1` (deno task test:stress) kills 25 times and prints the
 * figures summarised in docs/reliability.md.
 */
import assert from "node:assert/strict";
import { CrashRun } from "./crash_harness.ts";
import { STRESS } from "./harness.ts";

const KILLS = STRESS ? 25 : 5;

Deno.test(`crash: ${KILLS} SIGKILLs under load; after each restart nothing acknowledged is lost, no seq reused, no orphan, purges done, quotas exact`, async () => {
  const dir = await Deno.makeTempDir({ prefix: "board-crash-" });
  try {
    const fig = await new CrashRun(dir).run(KILLS);
    assert.equal(fig.kills, KILLS);
    assert.ok(fig.acknowledged > KILLS * 20, `writes acknowledged: ${fig.acknowledged}`);
    assert.ok(fig.noAnswer > 0, "some writes were in flight at a kill");
    assert.ok(fig.deletes > 0, "roots were deleted under load");
    if (STRESS) assert.ok(fig.purgesInterrupted > 0, "some kills landed inside a purge");
    console.log(`crash figures: ${JSON.stringify(fig)}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
