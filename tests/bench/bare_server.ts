/**
 * The framework ceiling: a bare Hono app on the same Deno that answers, per path, a fixed
 * page of the same size and shape as the real route's (re-serialised on every request,
 * as the real route does). Reads pages from the JSON file named by argv[0].
 */
import { Hono } from "hono";

const pages: Record<string, unknown> = JSON.parse(await Deno.readTextFile(Deno.args[0]));
const port = Number(Deno.args[1]);
const app = new Hono();
for (const [path, body] of Object.entries(pages)) {
  app.get(path.split("?")[0], (c) => c.json(body as Record<string, unknown>));
}
Deno.serve({ hostname: "127.0.0.1", port, onListen: () => console.log("listening") }, app.fetch);
