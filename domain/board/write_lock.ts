/**
 * The in-process lock that publications, votes, edits and deletions take. They all rewrite
 * a few hot keys (the board head, the network's write window, counters): queued one after
 * another within a process, they do not keep failing each other's commits there. An
 * optimisation only: the KV checks of each commit keep every invariant, across processes.
 */
export const BOARD_WRITES_LOCK = "board-writes";
