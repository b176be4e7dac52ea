/**
 * Where write time goes (issue 12, docs/benchmark_notes.md): the domain write paths called
 * directly (no HTTP), one at a time, on a copy of the seeded store, timing every atomic
 * commit they make. The commit of one new post or vote writes dozens of keys (index copies,
 * body, id index, idempotency, quotas, search postings), so its own duration bounds the
 * route far below the storage ceiling's one-key commit.
 */
import { SystemClock } from "../../domain/clock.ts";
import { loadConfig } from "../../routes/config.ts";
import { makeDeps } from "../../domain/deps.ts";
import { createThread } from "../../domain/board/posts.ts";
import { castVote } from "../../domain/votes/cast.ts";
import { versionedKv } from "../../kv/versioned_kv.ts";
import { wrapCommits } from "../commit_wrapper.ts";
import { voteCast } from "./scenarios.ts";
import type { Seeded } from "./seed.ts";

export interface WritePathFigures {
  name: string;
  /** Writes per second, one at a time. */
  perSecond: number;
  /** Mean and median duration of the write's commit, ms. */
  commitMeanMs: number;
  commitP50Ms: number;
}

/** Measures `n` sequential posts and votes through the domain on a copy of `kvPath`. */
export async function measureWritePaths(
  kvPath: string,
  s: Seeded,
  n = 500,
): Promise<WritePathFigures[]> {
  const copy = `${kvPath}-writes`;
  for (const suffix of ["", "-wal", "-shm"]) {
    await Deno.copyFile(kvPath + suffix, copy + suffix).catch(() => {});
  }
  const raw = await Deno.openKv(copy);
  let commits: number[] = [];
  const timed = wrapCommits(raw, async (commit) => {
    const t = performance.now();
    const res = await commit();
    commits.push(performance.now() - t);
    return res;
  });
  const kv = versionedKv(timed);
  const deps = makeDeps(
    kv,
    new SystemClock(),
    loadConfig({ BOARD_KV: copy, BOARD_LIMIT_SCALE: "1000000", BOARD_MAX_POSTS: "1000000" }),
  );
  const out: WritePathFigures[] = [];
  const time = async (name: string, one: (i: number) => Promise<unknown>) => {
    for (let i = 0; i < 20; i++) await one(n + i); // warm-up
    commits = [];
    const t = performance.now();
    for (let i = 0; i < n; i++) await one(i);
    const seconds = (performance.now() - t) / 1000;
    const sorted = [...commits].sort((a, b) => a - b);
    out.push({
      name,
      perSecond: n / seconds,
      commitMeanMs: commits.reduce((a, b) => a + b, 0) / commits.length,
      commitP50Ms: sorted[Math.floor(sorted.length / 2)],
    });
  };
  try {
    await time("new post (createThread)", (i) => {
      const a = s.agents[i % 1000].agent;
      return createThread(
        deps,
        "named",
        { agentId: a.id, name: a.name, network: "127.0.0.1" },
        `bench-write-path-${i}-000000`,
        {
          title: `Benchmark thread ${i}`,
          topic: "general",
          body: `Load test body number ${i} with some words.`,
        },
      );
    });
    const { targets } = voteCast(s);
    const half = Math.floor(s.agents.length / 2);
    await time("new vote (castVote)", (i) => {
      const voter = s.agents[half + (i % (s.agents.length - half))].agent;
      const target = targets[(Math.floor(i / (s.agents.length - half)) + 7) % targets.length];
      return castVote(deps, voter, { board: "named", post_id: target, value: 1 }, "127.0.0.1");
    });
  } finally {
    raw.close();
    for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(copy + suffix).catch(() => {});
  }
  return out;
}
