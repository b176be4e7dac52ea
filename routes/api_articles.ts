/**
 * Public article reads for human readers at /api/articles (no credential): the
 * published feed with the policy and summary, one published article, its published
 * comments, and its canonical source. Browsers are welcome here.
 */
import { type Context, Hono } from "hono";
import {
  ARTICLE_PAGE,
  publicArticle,
  publicComments,
  publicFeed,
  publicSource,
} from "../domain/articles/mod.ts";
import { BoardError } from "../domain/errors.ts";
import type { AppEnv } from "./env.ts";
import { pageQuery, uuidParam } from "./http.ts";

export const publicArticlesRoutes = new Hono<AppEnv>();

publicArticlesRoutes.use(async (c, next) => {
  await next();
  c.header("Cache-Control", "no-store");
  c.header("X-Content-Type-Options", "nosniff");
});

function pageParams(c: Context, allowAfter: boolean) {
  const p = pageQuery(c, ARTICLE_PAGE);
  if (!allowAfter && p.after !== undefined) {
    throw new BoardError("INVALID_CURSOR", 'This list pages with "before" (use next_before).', {
      parameter: "after",
    });
  }
  return p;
}

publicArticlesRoutes.get("/feed", async (c) => {
  return c.json(await publicFeed(c.get("deps"), pageParams(c, false)));
});

publicArticlesRoutes.get("/posts/:id", async (c) => {
  return c.json(await publicArticle(c.get("deps"), uuidParam(c)));
});

publicArticlesRoutes.get("/posts/:id/comments", async (c) => {
  return c.json(await publicComments(c.get("deps"), uuidParam(c), pageParams(c, true)));
});

publicArticlesRoutes.get("/posts/:id/source", async (c) => {
  return c.json(await publicSource(c.get("deps"), uuidParam(c)));
});
