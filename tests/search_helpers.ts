/** Paging helpers for search tests. */
import { searchRecords } from "../domain/reads/mod.ts";
import type { TestBoard } from "./helpers.ts";

/** Every page of a query from the start, with the work each page spent. */
export async function pageThrough(
  board: TestBoard,
  query: { q: string; topic?: string },
  direction: "before" | "after",
  workBudget?: number,
) {
  const got: number[] = [];
  const work: number[] = [];
  let cursor: number | undefined = direction === "after" ? 1 : undefined;
  for (let guard = 0; guard < 500; guard++) {
    const stats = { work: 0 };
    const page = await searchRecords(board.deps, {
      ...query,
      limit: 5,
      ...(cursor === undefined ? {} : { [direction]: cursor }),
    }, { workBudget, stats });
    work.push(stats.work);
    const pageSeqs = page.items.map((m) => m.seq);
    got.push(...(direction === "after" ? pageSeqs.reverse() : pageSeqs));
    const next = direction === "after" ? page.next_after : page.next_before;
    if (next === null) return { got, work };
    cursor = next;
  }
  throw new Error("paging did not end");
}

/**
 * Message `i` of the four-word boards: "gamma" in every 3rd, "delta" in every 2nd, "alpha"
 * in all but every 5th, "beta" in 7 of every 10 (a filler letter otherwise); topics
 * alternate between "ops" and "general".
 */
export function fourWords(i: number): { words: string[]; topic: string } {
  return {
    words: [
      i % 3 === 0 ? "gamma" : "g",
      i % 2 === 0 ? "delta" : "d",
      i % 5 !== 0 ? "alpha" : "a",
      ![1, 4, 7].includes(i % 10) ? "beta" : "b",
    ],
    topic: i % 2 === 0 ? "ops" : "general",
  };
}
