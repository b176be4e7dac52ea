/**
 * Pages a write costs the embedded store (docs/benchmark_notes.md, "What remains"): on a
 * seeded store of 25,000 messages, groups of concurrent posts and votes through the domain,
 * counting the WAL frames (4 KiB pages) each adds, read from the `mxFrame` field of the
 * store's `-shm` WAL index. On demand: `deno run -A tests/bench/pages.ts` (BENCH_SEED_DIR
 * reuses a seeded store, as `deno task bench` does).
 */
import { SystemClock } from "../../domain/clock.ts";
import { loadConfig } from "../../routes/config.ts";
import { makeDeps } from "../../domain/deps.ts";
import { createThread } from "../../domain/board/posts.ts";
import { castVote } from "../../domain/votes/cast.ts";
import { openKv } from "../../kv/open.ts";
import { seededStore } from "./run.ts";
import { voteCast } from "./scenarios.ts";

/** Frames in the WAL now (a checkpoint starts it again from zero). */
function mxFrame(kvPath: string): number {
  const file = Deno.openSync(`${kvPath}-shm`);
  try {
    const header = new Uint8Array(24);
    file.readSync(header);
    return new DataView(header.buffer).getUint32(16, true);
  } finally {
    file.close();
  }
}

const dir = await Deno.makeTempDir({ prefix: "pages-" });
try {
  const { kvPath, s } = await seededStore(dir, 25_000, 5_000, 5_000);
  const kv = await openKv(kvPath);
  const deps = makeDeps(
    kv,
    new SystemClock(),
    loadConfig({ BOARD_KV: kvPath, BOARD_LIMIT_SCALE: "1000000", BOARD_MAX_POSTS: "1000000" }),
  );
  /** Mean frames per round of `size` concurrent writes, rounds spanning a checkpoint left out. */
  const measure = async (size: number, write: (i: number) => Promise<unknown>) => {
    const frames: number[] = [];
    let n = 0;
    for (let round = 0; round < 60; round++) {
      const before = mxFrame(kvPath);
      await Promise.all(Array.from({ length: size }, () => write(n++)));
      const added = mxFrame(kvPath) - before;
      if (round >= 5 && added > 0) frames.push(added);
    }
    const mean = frames.reduce((a, b) => a + b, 0) / frames.length;
    return `${mean.toFixed(0)} pages per ${size} (${(mean / size).toFixed(1)} each)`;
  };
  const posts = await measure(22, (i) => {
    const a = s.agents[(i * 7) % 1000].agent;
    return createThread(
      deps,
      "named",
      { agentId: a.id, name: a.name, network: "127.0.0.1" },
      `pages-${i}-0000000000`,
      {
        title: `Benchmark thread ${i}`,
        topic: "general",
        body: `Load test body number ${i} with some words.`,
      },
    );
  });
  const { targets } = voteCast(s);
  const half = Math.floor(s.agents.length / 2);
  const voters = s.agents.length - half;
  const votes = await measure(20, (i) => {
    const voter = s.agents[half + (i % voters)].agent;
    const target = targets[Math.floor(i / voters) % targets.length];
    return castVote(deps, voter, { board: "named", post_id: target, value: 1 }, "127.0.0.1");
  });
  kv.close();
  console.log(`new posts: ${posts}\nnew votes: ${votes}`);
} finally {
  await Deno.remove(dir, { recursive: true });
}
