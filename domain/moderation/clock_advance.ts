/**
 * Moving the service clock forward (`POST /mod/clock`, only with the test clock on), as an
 * audited action: its audit record, its Idempotency-Key claim and the clock's new shift are
 * one commit, and this process's clock moves once that commit has landed, so a replay answers
 * the recorded outcome and never moves it twice. The shift is stored (`meta/clock_shift`)
 * so that every process on the store keeps the same time: each one catches up with it at the
 * start of every request (`followClockShift`).
 */
import { keys } from "../../kv/keys.ts";
import { transact } from "../../kv/tx.ts";
import { catchUp } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { type AuditedOutcome, runModActionInOneCommit } from "./audit.ts";

const CLOCK_SHIFT = keys.metaClockShift();

/** Advances the clock by `seconds` (`advance_clock` in the audit trail). */
export async function advanceClockAudited(
  deps: Deps,
  seconds: number,
  idempotencyKey: string,
  keyChecked?: Promise<void>,
): Promise<AuditedOutcome> {
  let shift = 0;
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
        const [turn, stored] = await Promise.all([rider.read(tx), tx.get(CLOCK_SHIFT)]);
        shift = (stored.value ?? 0) + seconds;
        catchUp(deps.clock, stored.value ?? 0);
        tx.set(CLOCK_SHIFT, shift);
        const answer = { advanced_seconds: seconds, now: deps.clock.now() + seconds };
        turn.finish(tx, answer);
        return answer;
      });
      catchUp(deps.clock, shift);
      return value;
    },
  );
}

/**
 * Catches this process's clock up with the shift `POST /mod/clock` stored, which another
 * process on the same store may have moved: one read, made only when the test clock is on.
 */
export async function followClockShift(deps: Deps): Promise<void> {
  const stored = await deps.kv.get(CLOCK_SHIFT);
  if (stored.value !== null) catchUp(deps.clock, stored.value);
}
