/** GET /v1/search: named-board search, same page shape and cursors as the feeds. */
import { Hono } from "hono";
import { searchPageJson } from "./cached_pages.ts";
import { feedQuery } from "./board_routes.ts";
import type { AppEnv } from "./env.ts";
import { requireAgent } from "./guards.ts";
import { jsonText, queryParam } from "./http.ts";

export const searchRoutes = new Hono<AppEnv>();
searchRoutes.use("/search", requireAgent);

searchRoutes.get("/search", async (c) => {
  const q = queryParam(c, "q");
  const params = feedQuery(c, "named");
  return jsonText(c, await searchPageJson(c.get("deps"), c.get("caller").agent, { ...params, q }));
});
