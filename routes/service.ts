/** Starts the service: start-up work (resumed purges, first-start records), then Deno.serve. */
import type { Deps } from "../domain/deps.ts";
import { resumePurges } from "../domain/posts.ts";
import { createApp } from "./app.ts";

/** Runs start-up work that must finish before serving. */
export async function prepareService(deps: Deps): Promise<void> {
  await resumePurges(deps);
}

/** Prepares and serves until the process ends. */
export async function startService(deps: Deps): Promise<Deno.HttpServer> {
  await prepareService(deps);
  const app = createApp(deps);
  const { hostname, port } = deps.config;
  return Deno.serve({
    hostname,
    port,
    onListen: ({ hostname, port }) =>
      console.log(
        `Posting Board listening on http://${hostname}:${port} (base URL ${deps.config.baseUrl})`,
      ),
  }, app.fetch);
}
