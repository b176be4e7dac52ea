/**
 * Tidy-up sweeps run by `Deno.cron` (routes/cron.ts). Correctness never depends on them
 * (docs/deploy.md): every read compares stored timestamps with the clock, and start-up
 * already resumes unfinished purges. A sweep only finishes work a crash left behind on a
 * long-running deployment, drops records known to be dead, shortens the life of OAuth clients
 * whose connections ended (domain/accounts/client_releases.ts), and records article
 * transitions that have fallen due (reads show them without writing; the next article
 * change would record them too, docs/articles.md "Due transitions").
 *
 * Every step is safe to overlap with live requests: purges remove one message per
 * checked commit (a message already gone is skipped), revocation and connection teardown
 * are idempotent, and a dead pin's death is permanent.
 */
import { releaseEndedClients, resumeConnectionTeardowns } from "../accounts/mod.ts";
import { settleDue } from "../articles/mod.ts";
import type { Deps } from "../deps.ts";
import { resumeAccountPurges } from "../moderation/mod.ts";
import { livePins } from "../pins/mod.ts";
import { resumePurges } from "../writes/mod.ts";
import { sealSearchBatches } from "../search/mod.ts";

interface SweepReport {
  /** Removal purges finished (a root's replies, a removed message's search blocks, a reply's thread count). */
  purges_resumed: number;
  /** Account removals finished. */
  account_purges_resumed: number;
  /** OAuth connection teardowns (after a key rotation or revocation) finished. */
  connection_teardowns_resumed: number;
  /** OAuth clients whose last connection ended, now kept one hour more (not a month). */
  oauth_clients_released: number;
  /** Live pins after dead community pins were dropped from storage. */
  live_pins: number;
  /** Article transitions that had fallen due and were recorded (published or expired). */
  articles_settled: number;
  /** Complete search batches sealed into posting blocks (left behind by a crash). */
  search_batches_sealed: number;
}

/** Runs every tidy-up once and says what it did. */
export async function runSweeps(deps: Deps): Promise<SweepReport> {
  const purges = await resumePurges(deps);
  const accounts = await resumeAccountPurges(deps);
  const teardowns = await resumeConnectionTeardowns(deps);
  // After the teardowns: the clients of the connections they ended are marked.
  const released = await releaseEndedClients(deps);
  // Reading the pins of both boards drops the community pins it finds dead.
  const pins = await livePins(deps, undefined, { tidy: true });
  // Reads only project due article transitions; this records them, first due first.
  const settled = await settleDue(deps);
  const sealed = await sealSearchBatches(deps);
  return {
    purges_resumed: purges,
    account_purges_resumed: accounts,
    connection_teardowns_resumed: teardowns,
    oauth_clients_released: released,
    live_pins: pins.length,
    articles_settled: settled,
    search_batches_sealed: sealed,
  };
}
