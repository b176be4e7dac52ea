/**
 * Work a higher area adds to a lower area's one commit (the moderator audit trail riding in
 * an official pin or a rules edit): its keys go out in the operation's read batch, checked
 * by the commit, and its writes are staged with the operation's answer. So an audited
 * action costs one read batch and one commit, not a commit of its own before and after.
 */
import type { Tx } from "../kv/tx.ts";

/** What a rider does once its keys are read, in one attempt of the operation's commit. */
export interface RiderTurn {
  /** Stages the rider's writes for the operation's answer (the body it returns). */
  finish(tx: Tx, answer: Record<string, unknown>): void;
}

export interface CommitRider {
  /**
   * Reads the rider's keys with checks of `tx`'s commit (issued beside the operation's own
   * batch, so in the same round trip) and decides before the operation decides anything. May
   * throw to end the operation without writing (an answer already recorded, a conflict).
   */
  read(tx: Tx): Promise<RiderTurn>;
}
