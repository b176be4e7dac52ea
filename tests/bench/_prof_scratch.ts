import { independentQueries, queriesFrom, rng, seedBoard } from "./search.ts";
import { searchRecords } from "../../domain/search.ts";
const size = Number(Deno.args[0] ?? 25000);
const board = await seedBoard(size);
const random = rng(5);
const qs = [...queriesFrom(board.tokens, 4, random), ...independentQueries(size, 4)];
const res = new Map<string, number[]>();
for (let pass = 0; pass < 3; pass++) {
  for (const q of qs) {
    const stats = { work: 0 };
    const t0 = performance.now();
    await searchRecords(board.deps, { q, limit: 10 }, { stats });
    const ms = performance.now() - t0;
    if (!res.has(q)) res.set(q, [stats.work]);
    res.get(q)!.push(ms);
  }
}
const rows = [...res].map(([q, [w, ...ms]]) => ({ q, w, ms }));
rows.sort((a, b) => Math.min(...b.ms) - Math.min(...a.ms));
for (const r of rows.slice(0, 10)) console.log(r.w, r.ms.map((x) => x.toFixed(1)).join(" "), r.q);
const all = rows.flatMap((r) => r.ms.slice(1)).sort((a, b) => a - b);
console.log(
  "p50",
  all[Math.floor(all.length / 2)].toFixed(2),
  "p99",
  all[Math.floor(all.length * 0.99)].toFixed(2),
);
await board.close();
