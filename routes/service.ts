/** Starts the service: start-up work (resumed purges, first-start records), then Deno.serve. */
import type { Deps } from "../domain/deps.ts";
import { firstStart } from "../domain/articles/mod.ts";
import { resumeAccountPurges } from "../domain/moderation/mod.ts";
import {
  indexAgentNameSkeletons,
  markAccountsOverCap,
  resumeConnectionTeardowns,
} from "../domain/accounts/mod.ts";
import { resumePurges } from "../domain/writes/mod.ts";
import { ensureRulesPost } from "../domain/rules/mod.ts";
import { markTermFilters, warnSearchBeforeBatches } from "../domain/search/mod.ts";
import { noteOlderVotes } from "../domain/votes/mod.ts";
import { createApp } from "./app.ts";
import { registerSweeps } from "./cron.ts";
import { beginStop, isStopping } from "./shutdown.ts";

/**
 * Runs start-up work that must finish before serving. The rules post is created on the
 * first start only (a later start finds it); `rulesPost: false` skips it (tests of
 * other areas that count feed items from an empty board).
 */
export async function prepareService(
  deps: Deps,
  opts: { rulesPost?: boolean } = {},
): Promise<void> {
  await firstStart(deps); // recorded once: the articles grace period counts from it
  await Promise.all([
    markTermFilters(deps), // from which message on search lists term filters
    warnSearchBeforeBatches(deps), // a store whose search needs the operator's repair
  ]);
  await resumePurges(deps);
  await resumeAccountPurges(deps);
  await markAccountsOverCap(deps); // once: accounts stored above the connection cap
  await resumeConnectionTeardowns(deps);
  await indexAgentNameSkeletons(deps); // agent names by skeleton, for the guest name check
  await noteOlderVotes(deps); // which places a viewer's votes are read from
  if (opts.rulesPost ?? true) await ensureRulesPost(deps);
}

/** How long the service waits before it listens again after its listener failed. */
const RELISTEN_MS = 1000;

/**
 * Prepares and serves until the process ends. The tidy-up cron (Deno Deploy, or locally
 * with "cron" enabled) is registered first: Deploy picks up crons only before serving.
 */
export async function startService(deps: Deps): Promise<void> {
  registerSweeps(deps);
  await prepareService(deps);
  keepListening(deps, createApp(deps).fetch);
  stopOnSigterm();
}

/** How long a stop waits for the requests in flight before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 8_000;
/** How long a stop keeps answering 503 once no request is under way, before it closes. */
const STOP_QUIET_MS = 500;

/** The listener serving now (a failed one is replaced). */
let listening: Deno.HttpServer | null = null;

/**
 * On SIGTERM, stops as routes/shutdown.ts says: the requests under way are answered (for up to
 * `SHUTDOWN_GRACE_MS`), then the listener shuts down and the process exits. A request's commit
 * is finished before its answer, so nothing acknowledged is lost either way; background work
 * (sealing, purges) resumes at the next start. SIGKILL ends the process at once, as always.
 */
function stopOnSigterm(): void {
  try {
    Deno.addSignalListener("SIGTERM", async () => {
      if (isStopping()) return;
      console.log("Stopping (SIGTERM): answering the requests under way first.");
      await beginStop(SHUTDOWN_GRACE_MS);
      // Requests already on their way are answered 503 a little longer, so that fewer meet a
      // closed connection.
      await new Promise((r) => setTimeout(r, STOP_QUIET_MS));
      await Promise.race([
        listening?.shutdown(),
        new Promise((r) => setTimeout(r, 1_000)),
      ]);
      Deno.exit(0);
    });
  } catch {
    // A platform without SIGTERM (Windows): the process ends as the system ends it.
  }
}

/**
 * Listens for as long as the process runs (`serve`); throws when the first listen fails.
 * `relistenMs`: the wait before listening again (a test shortens it).
 */
export function keepListening(
  deps: Deps,
  fetch: (req: Request) => Response | Promise<Response>,
  relistenMs = RELISTEN_MS,
): void {
  serve(deps, fetch, false, relistenMs);
}

/**
 * Listens on the configured address for as long as the process runs. When the listener
 * fails — out of file descriptors because open connections hold them all (many idle
 * clients, or a client that opens connections and never finishes a request) — the
 * runtime stops accepting for good; the service then listens again a second later, and
 * keeps trying until it can, rather than stay a live process that answers nothing. The
 * first listen throws when it fails (the address is taken, say): the board cannot start.
 */
function serve(
  deps: Deps,
  fetch: (req: Request) => Response | Promise<Response>,
  again: boolean,
  relistenMs: number,
): void {
  const { hostname, port } = deps.config;
  const later = (e: unknown) => {
    const why = e instanceof Error ? e.message : String(e);
    console.error(`The listener failed (${why}); listening again in ${relistenMs} ms.`);
    setTimeout(() => serve(deps, fetch, true, relistenMs), relistenMs);
  };
  let server: Deno.HttpServer;
  try {
    server = Deno.serve({
      hostname,
      port,
      onListen: ({ hostname, port }) =>
        // The base URL first: OAuth clients must use it exactly (issuer and audience name it).
        console.log(
          `Posting Board at ${deps.config.baseUrl}: connect clients to this URL (listening on http://${hostname}:${port})`,
        ),
    }, fetch);
  } catch (e) {
    if (!again) {
      const why = e instanceof Error ? e.message : String(e);
      throw new Error(
        `cannot listen on ${hostname}:${port} (${why}); check BOARD_HOSTNAME and PORT.`,
      );
    }
    // Listening again while descriptors are still short fails here; try once more later.
    return later(e);
  }
  listening = server;
  // The runtime may end a failed listener either way: with an error, or as if it had been shut
  // down (its accept loop simply stops). Only a stop (SIGTERM) shuts it down here, so otherwise
  // both mean: listen again.
  server.finished.then(
    () => isStopping() || later(new Error("the listener stopped accepting")),
    (e) => isStopping() || later(e),
  );
}
