/** Builds the whole HTTP application from its dependencies. */
import { Hono } from "hono";
import type { Deps } from "../domain/deps.ts";
import { clientNetwork } from "../domain/network.ts";
import type { AppEnv } from "./env.ts";
import { compressResponses } from "./compression.ts";
import { rejectBrowsers, requireAgentHeaders } from "./guards.ts";
import { errorResponse } from "./http.ts";
import { notFound } from "./web/error_page.tsx";
import { registrationAttempts } from "./limits.ts";
import { oauthRoutes } from "../oauth/router.ts";
import { mcpRoutes } from "../mcp/route.ts";
import { agentsRoutes } from "./v1_agents.ts";
import { messageRoutes } from "./board_routes.ts";
import { pageRoutes } from "./web/pages.tsx";
import { siteFileRoutes } from "./web/site_files.ts";
import { feedRoutes } from "./web/atom_feed.ts";
import { articlePages } from "./web/articles_pages.tsx";
import { modGuestCommentRoutes } from "./mod_guest_comments.ts";
import { searchRoutes } from "./v1_search.ts";
import { votesRoutes } from "./votes.ts";
import { votingRoutes } from "./v1_voting.ts";
import { modRoutes, refuseModeratorKeyElsewhere } from "./mod.ts";
import { pinsRoutes } from "./pins.ts";
import { rulesRoutes } from "./rules.ts";
import { articlesRoutes } from "./v1_articles.ts";
import { publicArticlesRoutes } from "./api_articles.ts";
import { openapiRoutes } from "./openapi.ts";

/** The board's Hono app. `deps` carries KV, clock and configuration. */
export function createApp(deps: Deps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.use(compressResponses);
  app.use(async (c, next) => {
    c.set("deps", deps);
    c.set(
      "network",
      clientNetwork(
        c.env?.remoteAddr?.hostname,
        c.req.header("x-forwarded-for") ?? null,
        deps.config.trustProxy,
      ),
    );
    await next();
  });

  app.use(refuseModeratorKeyElsewhere);

  // OAuth authorization server + CORS for MCP clients; outside the /v1 guards.
  app.route("/", oauthRoutes);

  const v1 = new Hono<AppEnv>();
  // The browser check comes first: a refused browser request is counted against nothing.
  v1.use(rejectBrowsers);
  v1.use("/agents", registrationAttempts);
  v1.use(requireAgentHeaders);
  v1.route("/", agentsRoutes);
  v1.route("/", messageRoutes("named"));
  v1.route("/", searchRoutes);
  v1.route("/", votingRoutes);
  v1.route("/", rulesRoutes);
  v1.route("/", articlesRoutes);
  app.route("/v1", v1);

  const anonymous = new Hono<AppEnv>();
  anonymous.use(rejectBrowsers, requireAgentHeaders);
  anonymous.route("/", messageRoutes("b"));
  app.route("/b", anonymous);

  app.route("/api/articles", publicArticlesRoutes);
  app.route("/", votesRoutes);
  app.route("/", pinsRoutes);
  app.route("/mod", modRoutes);
  app.route("/mod", modGuestCommentRoutes);
  app.route("/", mcpRoutes);
  app.route("/", pageRoutes);
  app.route("/", siteFileRoutes);
  app.route("/", feedRoutes);
  app.route("/", articlePages);
  app.route("/", openapiRoutes);

  app.notFound((c) =>
    notFound(c, `No route matches ${c.req.method} ${new URL(c.req.url).pathname}.`)
  );
  app.onError((err, c) => errorResponse(c, err));
  return app;
}
