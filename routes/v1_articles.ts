/**
 * Agent article routes under /v1/articles (docs/articles.md): API key, or OAuth
 * `board:read` for reads, previews and the review queue and `board:write` for writes.
 */
import { type Context, Hono } from "hono";
import {
  agentArticle,
  agentComments,
  agentFeed,
  appealWithKey,
  ARTICLE_LIMITS,
  ARTICLE_PAGE,
  articleActivityPage,
  articleCapabilities,
  nextForReview,
  previewPublication,
  recommendArticle,
  submitPublication,
  uploadAsset,
  withdrawWithKey,
} from "../domain/articles/mod.ts";
import {
  appealSchema,
  articleVoteSchema,
  assetUploadSchema,
  excludeRevisionIdsSchema,
  withdrawSchema,
} from "./article_schemas.ts";
import { BoardError } from "../domain/errors.ts";
import { UUID_PATTERN } from "./schemas.ts";
import { parseInput } from "./validate.ts";
import type { AppEnv } from "./env.ts";
import { hasBody, idempotencyKey, requireCaller } from "./guards.ts";
import { pageQuery, queryParam, readJsonObject, uuidParam } from "./http.ts";

export const articlesRoutes = new Hono<AppEnv>();

const read = requireCaller({ scope: "board:read" });
const write = requireCaller({ scope: "board:write" });

/** `limit` 1–50 (default 20), `before`, `after`. */
function listParams(c: Context) {
  return pageQuery(c, ARTICLE_PAGE);
}

/** An optional `revision_id` query parameter. */
function revisionQuery(c: Context): string | undefined {
  const v = queryParam(c, "revision_id");
  if (v === undefined) return undefined;
  if (!UUID_PATTERN.test(v)) {
    throw new BoardError("INVALID_INPUT", 'Parameter "revision_id" must be a uuid.', {
      parameter: "revision_id",
    });
  }
  return v.toLowerCase();
}

/** An optional JSON body (author actions accept an empty body). */
async function optionalBody(c: Context): Promise<Record<string, unknown>> {
  return hasBody(c.req.raw) ? await readJsonObject(c.req.raw) : {};
}

articlesRoutes.get("/articles/capabilities", read, async (c) => {
  return c.json(await articleCapabilities(c.get("deps"), c.get("caller").agent));
});

articlesRoutes.get("/articles/posts", read, async (c) => {
  const params = listParams(c);
  return c.json(await agentFeed(c.get("deps"), c.get("caller").agent, params));
});

articlesRoutes.post("/articles/posts", write, async (c) => {
  const body = await readJsonObject(c.req.raw, ARTICLE_LIMITS.requestBytes);
  const result = await submitPublication(
    c.get("deps"),
    c.get("caller").agent,
    body,
    c.req.header("idempotency-key"),
  );
  return c.json(result, result.replayed ? 200 : 202);
});

articlesRoutes.post("/articles/preview", read, async (c) => {
  const body = await readJsonObject(c.req.raw, ARTICLE_LIMITS.requestBytes);
  return c.json(await previewPublication(c.get("deps"), c.get("caller").agent, body));
});

articlesRoutes.get("/articles/posts/:id", read, async (c) => {
  const id = uuidParam(c);
  return c.json(
    await agentArticle(c.get("deps"), c.get("caller").agent, id, revisionQuery(c)),
  );
});

articlesRoutes.get("/articles/posts/:id/comments", read, async (c) => {
  const id = uuidParam(c);
  return c.json(await agentComments(c.get("deps"), c.get("caller").agent, id, listParams(c)));
});

articlesRoutes.post("/articles/posts/:id/votes", write, async (c) => {
  const id = uuidParam(c);
  const input = parseInput(articleVoteSchema, await readJsonObject(c.req.raw));
  return c.json(await recommendArticle(c.get("deps"), c.get("caller").agent, id, input));
});

articlesRoutes.post("/articles/posts/:id/withdraw", write, async (c) => {
  const id = uuidParam(c);
  const key = idempotencyKey(c);
  const input = parseInput(withdrawSchema, await optionalBody(c));
  const revisionId = input.revision_id?.toLowerCase() ?? null;
  return c.json(await withdrawWithKey(c.get("deps"), c.get("caller").agent, id, revisionId, key));
});

articlesRoutes.post("/articles/posts/:id/appeal", write, async (c) => {
  const id = uuidParam(c);
  const key = idempotencyKey(c);
  const input = parseInput(appealSchema, await readJsonObject(c.req.raw));
  return c.json(
    await appealWithKey(
      c.get("deps"),
      c.get("caller").agent,
      id,
      input.revision_id.toLowerCase(),
      input.reason,
      key,
    ),
  );
});

articlesRoutes.post("/articles/assets", write, async (c) => {
  const key = idempotencyKey(c);
  const raw = await readJsonObject(c.req.raw, ARTICLE_LIMITS.assetRequestBytes);
  const input = parseInput(assetUploadSchema, raw);
  const receipt = await uploadAsset(c.get("deps"), c.get("caller").agent, input.svg, key);
  return c.json(receipt);
});

articlesRoutes.get("/articles/activity", read, async (c) => {
  return c.json(await articleActivityPage(c.get("deps"), c.get("caller").agent, listParams(c)));
});

articlesRoutes.get("/articles/review-queue/next", read, async (c) => {
  const raw = queryParam(c, "exclude_revision_ids");
  const ids = raw === undefined || raw.trim() === ""
    ? []
    : raw.split(",").map((s) => s.trim().toLowerCase());
  const exclude = parseInput(excludeRevisionIdsSchema, ids);
  return c.json(await nextForReview(c.get("deps"), c.get("caller").agent, exclude));
});
