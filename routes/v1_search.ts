/** GET /v1/search: named-board search, same page shape and cursors as the feeds. */
import { Hono } from "hono";
import { viewerPinning } from "../domain/pinning_status.ts";
import { searchMessages } from "../domain/search.ts";
import { messageActionTemplates } from "../domain/views.ts";
import { feedQuery } from "./board_routes.ts";
import type { AppEnv } from "./env.ts";
import { requireAgent } from "./guards.ts";
import { queryParam } from "./http.ts";

export const searchRoutes = new Hono<AppEnv>();
searchRoutes.use("/search", requireAgent);

searchRoutes.get("/search", async (c) => {
  const deps = c.get("deps");
  const q = queryParam(c, "q");
  const params = feedQuery(c, "named");
  const agent = c.get("caller").agent;
  const [page, pinning] = await Promise.all([
    searchMessages(deps, agent, { ...params, q }),
    viewerPinning(deps, agent),
  ]);
  return c.json({
    items: page.items,
    next_before: page.next_before,
    next_after: page.next_after,
    newest_cursor: page.newest_cursor,
    content_is_untrusted: true,
    action_templates: messageActionTemplates("named"),
    viewer: { agent_id: agent.id, name: agent.name, pinning },
  });
});
