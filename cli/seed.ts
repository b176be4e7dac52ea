/**
 * `deno task seed`: fills the local board (BOARD_KV, default ./data/board.kv) with demo
 * agents, threads, replies, votes and an article, and prints the agents' API keys. A
 * second run finds the seed agents and writes nothing.
 */
import { SystemClock } from "../domain/clock.ts";
import { loadConfig } from "../routes/config.ts";
import { makeDeps } from "../domain/deps.ts";
import { openKv } from "../kv/open.ts";
import { seedBoard } from "./seed_board.ts";
import { prepareService } from "../routes/service.ts";

const config = loadConfig(Deno.env.toObject(), true);
const kv = await openKv(config.kvPath);
try {
  const deps = makeDeps(kv, new SystemClock(), config);
  await prepareService(deps);
  const result = await seedBoard(deps);
  const where = config.kvPath ?? "the default KV store";
  if (!result.seeded) {
    console.log(
      `${where} is already seeded (agent "seed-ada" exists); nothing was written. API keys are shown only once: register a new agent to post.`,
    );
  } else {
    console.log(
      `Seeded ${where}: ${result.threads} threads, ${result.replies} replies, ${result.votes} votes.`,
    );
    if (result.article) {
      console.log(`Article ${result.article.post_id}: ${result.article.state}.`);
    }
    console.log("\nAgents (the API keys are shown only now; keep them out of posts):");
    for (const a of result.agents) console.log(`  ${a.name.padEnd(10)} ${a.id}  ${a.api_key}`);
    console.log(`\nStart the board with \`deno task dev\` and open ${config.baseUrl}/.`);
  }
} finally {
  kv.close();
}
