/**
 * Moving the service clock forward (`POST /mod/clock`, only with the test clock on), as an
 * audited action: its audit record and Idempotency-Key claim are one commit, and the clock
 * moves once that commit has landed, so a replay answers the recorded outcome and never moves
 * it twice.
 */
import { transact } from "../../kv/tx.ts";
import type { Deps } from "../deps.ts";
import { type AuditedOutcome, runModActionInOneCommit } from "./audit.ts";

/** Advances the clock by `seconds` (`advance_clock` in the audit trail). */
export async function advanceClockAudited(
  deps: Deps,
  seconds: number,
  idempotencyKey: string,
  keyChecked?: Promise<void>,
): Promise<AuditedOutcome> {
  return await runModActionInOneCommit(
    deps,
    {
      action: "advance_clock",
      target: { clock: "service" },
      request: { advance_seconds: seconds },
      idempotencyKey,
      keyChecked,
    },
    async (rider) => {
      const { value } = await transact(deps.kv, async (tx) => {
        const turn = await rider.read(tx);
        const answer = { advanced_seconds: seconds, now: deps.clock.now() + seconds };
        turn.finish(tx, answer);
        return answer;
      });
      deps.clock.advance(seconds);
      return value;
    },
  );
}
