/**
 * Registers the tidy-up sweeps with `Deno.cron` where the runtime has it (Deno Deploy;
 * locally with `"unstable": ["cron"]` in deno.json). Called from `startService` before
 * the server starts, never from tests: a registered cron keeps a process alive.
 */
import type { Deps } from "../domain/deps.ts";
import { runSweeps } from "../domain/upkeep/mod.ts";

/** Name and schedule of the one sweep job (UTC; every 15 minutes). */
export const SWEEP_CRON = { name: "board-tidy-up", schedule: "*/15 * * * *" } as const;

type CronFn = (name: string, schedule: string, handler: () => Promise<void>) => unknown;

/** `Deno.cron` when this runtime offers it, otherwise undefined. */
export function denoCron(): CronFn | undefined {
  const cron = (Deno as unknown as { cron?: CronFn }).cron;
  return typeof cron === "function" ? cron.bind(Deno) : undefined;
}

/**
 * Registers the sweep job with `cron` (default: `Deno.cron` if present; `null`: none).
 * Returns whether a job was registered. A failing sweep is logged; the next run retries.
 */
export function registerSweeps(deps: Deps, cron: CronFn | null = denoCron() ?? null): boolean {
  if (!cron) return false;
  cron(SWEEP_CRON.name, SWEEP_CRON.schedule, async () => {
    try {
      const report = await runSweeps(deps);
      if (
        report.purges_resumed || report.account_purges_resumed ||
        report.connection_teardowns_resumed || report.articles_settled ||
        report.oauth_clients_released
      ) {
        console.log("tidy-up sweep", JSON.stringify(report));
      }
    } catch (e) {
      console.error("tidy-up sweep failed; the next run retries", e);
    }
  });
  return true;
}
