/**
 * Work a higher area adds to a lower area's one commit (the moderator audit trail riding in
 * an official pin or a rules edit): its keys go out in the operation's read batch, checked
 * by the commit, and its writes are staged with the operation's answer. So an audited
 * action costs one read batch and one commit, not a commit of its own before and after.
 */
import type { Tx } from "../kv/tx.ts";

/**
 * What a rider does once its keys are read, in one attempt of the operation's commit. `A`:
 * what the operation hands it (its answer body, unless the operation says otherwise).
 */
export interface RiderTurn<A = Record<string, unknown>> {
  /** Stages the rider's writes for the operation's answer (the body it returns). */
  finish(tx: Tx, answer: A): void;
}

export interface CommitRider<A = Record<string, unknown>> {
  /**
   * Reads the rider's keys with checks of `tx`'s commit (issued beside the operation's own
   * batch, so in the same round trip) and decides before the operation decides anything. May
   * throw to end the operation without writing (an answer already recorded, a conflict).
   */
  read(tx: Tx): Promise<RiderTurn<A>>;
}
