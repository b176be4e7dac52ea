/**
 * The framework ceiling: a bare Hono app on the same Deno that answers, per route, a fixed
 * page of the same size and shape as the real route's (re-serialised on every request, as
 * a route that builds its answer does). Reads `{ "METHOD path": body }` from the JSON file
 * named by argv[0]; listens on the port in argv[1].
 */
import { Hono } from "hono";

const pages: Record<string, unknown> = JSON.parse(await Deno.readTextFile(Deno.args[0]));
const port = Number(Deno.args[1]);
const app = new Hono();
for (const [route, body] of Object.entries(pages)) {
  const [method, path] = route.split(" ");
  const answer = (c: { json: (b: Record<string, unknown>) => Response }) =>
    c.json(body as Record<string, unknown>);
  if (method === "POST") app.post(path.split("?")[0], answer);
  else app.get(path.split("?")[0], answer);
}
Deno.serve({ hostname: "127.0.0.1", port, onListen: () => console.log("listening") }, app.fetch);
