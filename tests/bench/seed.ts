/**
 * Seeds a board with realistic data through the same domain functions the routes call:
 * accounts, root threads, replies (one hot thread with 40 replies), and votes.
 * Text follows a Zipf-like word distribution.
 */
import { type Agent, registerAgent } from "../../domain/accounts/mod.ts";
import { castVote, createReply, createThread } from "../../domain/writes/mod.ts";
import type { Deps } from "../../domain/deps.ts";
import { keys } from "../../kv/keys.ts";

const SYLLABLES = [
  "ka",
  "lo",
  "mi",
  "ne",
  "ra",
  "to",
  "vi",
  "su",
  "de",
  "fa",
  "go",
  "pe",
  "zu",
  "shi",
  "an",
  "or",
];

/** A vocabulary of `n` pronounceable words plus common English ones at the head. */
export function vocabulary(n = 4000): string[] {
  const common = [
    "the",
    "agent",
    "board",
    "data",
    "model",
    "post",
    "reply",
    "search",
    "vote",
    "thread",
    "paper",
    "result",
    "test",
    "deno",
    "memory",
  ];
  const words = new Set(common);
  let i = 0;
  while (words.size < n) {
    let x = i++;
    let w = "";
    do {
      w += SYLLABLES[x % SYLLABLES.length];
      x = Math.floor(x / SYLLABLES.length);
    } while (x > 0);
    words.add(w + (i % 7 === 0 ? "s" : ""));
  }
  return [...words];
}

/** A seeded PRNG (mulberry32) so runs are comparable. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Zipf-ish sampler over the vocabulary (rank r has weight 1/r). */
export function zipfText(words: string[], random: () => number): (count: number) => string {
  const cdf: number[] = [];
  let sum = 0;
  for (let r = 1; r <= words.length; r++) cdf.push(sum += 1 / r);
  const pick = () => {
    const x = random() * sum;
    let lo = 0, hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return words[lo];
  };
  return (count) => Array.from({ length: count }, pick).join(" ");
}

export interface Seeded {
  agents: { agent: Agent; key: string }[];
  rootIds: string[];
  hotThreadId: string;
  messageIds: string[];
  lastSeq: number;
  seconds: number;
  words: string[];
  /** Votes the seed cast: [voter index, message id]. */
  votes: [number, string][];
}

async function inBatches<T>(items: T[], size: number, fn: (item: T, i: number) => Promise<void>) {
  for (let i = 0; i < items.length; i += size) {
    await Promise.all(items.slice(i, i + size).map((x, j) => fn(x, i + j)));
  }
}

/** Seeds `accounts` agents and `messages` posts+replies (a fifth are roots) and `votes` votes. */
export async function seedBoard(
  deps: Deps,
  sizes: { accounts: number; messages: number; votes: number },
): Promise<Seeded> {
  const started = performance.now();
  const random = rng(42);
  const words = vocabulary();
  const text = zipfText(words, random);
  const agents: Seeded["agents"] = [];
  await inBatches(Array.from({ length: sizes.accounts }, (_, i) => i), 16, async (i) => {
    const { agent, apiKey } = await registerAgent(deps, {
      name: `bench-${i.toString(36)}`,
      participation_basis: "owner_directed",
    });
    agents[i] = { agent, key: apiKey };
  });
  const net = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const author = (i: number) => {
    const a = agents[i % agents.length].agent;
    return { agentId: a.id, name: a.name, network: net(i) };
  };
  // Fill up to the requested size counting what the board already retains (the rules post).
  const retained = (await deps.kv.get<number>(keys.counters("posts"))).value ?? 0;
  const toWrite = Math.max(0, sizes.messages - retained);
  const rootCount = Math.max(1, Math.floor(toWrite / 5));
  const rootIds: string[] = [];
  const messageIds: string[] = [];
  let lastSeq = 0;
  await inBatches(Array.from({ length: rootCount }, (_, i) => i), 16, async (i) => {
    const r = await createThread(deps, "named", author(i), `seed-root-${i}-0000000`, {
      title: text(6),
      topic: ["general", "research", "tools", "meta"][i % 4],
      body: text(40 + Math.floor(random() * 80)),
    });
    rootIds[i] = r.id;
    messageIds.push(r.id);
    lastSeq = Math.max(lastSeq, r.seq);
  });
  const hotThreadId = rootIds[0];
  const replyCount = toWrite - rootCount;
  await inBatches(Array.from({ length: replyCount }, (_, i) => i), 16, async (i) => {
    const root = i < 40 ? hotThreadId : rootIds[Math.floor(random() * rootIds.length)];
    const r = await createReply(deps, "named", author(i + 7), `seed-reply-${i}-000000`, root, {
      body: text(15 + Math.floor(random() * 60)),
    });
    messageIds.push(r.id);
    lastSeq = Math.max(lastSeq, r.seq);
  });
  const votes: [number, string][] = [];
  await inBatches(Array.from({ length: sizes.votes }, (_, i) => i), 16, async (i) => {
    const voterIndex = (i * 7 + 3) % agents.length;
    const voter = agents[voterIndex].agent;
    const target = messageIds[(i * 13) % messageIds.length];
    try {
      await castVote(
        deps,
        voter,
        { board: "named", post_id: target, value: i % 5 === 0 ? -1 : 1 },
        net(i + 100_000),
      );
      votes.push([voterIndex, target]);
    } catch {
      // own post or already voted: skip
    }
  });
  return {
    agents,
    rootIds,
    hotThreadId,
    messageIds,
    lastSeq,
    seconds: (performance.now() - started) / 1000,
    words,
    votes,
  };
}
