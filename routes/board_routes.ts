/**
 * Message routes of a board — feeds, threads, writes — built once and parameterised by
 * board: the named board (`/v1`, API key, topics, author delete, articles block) and the
 * anonymous board (`/b`, no account, no topics, no author delete).
 */
import { type Context, Hono } from "hono";
import { ARTICLES_BLOCK_LIMIT } from "../domain/articles/mod.ts";
import { feedPageJson, threadPageJson } from "./cached_pages.ts";
import { type Author, createReply, createThread, removeMessage } from "../domain/board/mod.ts";
import {
  createAnonymousPostSchema,
  createPostSchema,
  createReplySchema,
  topicSchema,
} from "./schemas.ts";
import { parseInput } from "./validate.ts";
import type { Board } from "../kv/keys.ts";
import type { AppEnv } from "./env.ts";
import { idempotencyKey, requireAgent } from "./guards.ts";
import { jsonText, pageQuery, queryParam, readJsonObject, uuidParam } from "./http.ts";

/** Page params plus `topic` (the domain refuses a topic on the anonymous board). */
export function feedQuery(c: Context, _board: Board) {
  const page = pageQuery(c);
  const rawTopic = queryParam(c, "topic");
  const topic = rawTopic === undefined ? undefined : parseInput(topicSchema, rawTopic);
  return { ...page, topic };
}

/** Articles block params, and whether any was supplied. */
export function articlesQuery(c: Context) {
  const names = { limit: "articles_limit", before: "articles_before", after: "articles_after" };
  const params = pageQuery(c, ARTICLES_BLOCK_LIMIT, names);
  const supplied = Object.values(names).some((name) => c.req.query(name) !== undefined);
  return { params, supplied };
}

/** 201 with a new receipt, 200 with `replayed: true` for an idempotent retry. */
export function receiptResponse(
  c: Context,
  r: { id: string; seq: number; thread_id: string | null; url: string; replayed?: true },
) {
  if (r.replayed) {
    return c.json(
      { id: r.id, seq: r.seq, replayed: true, thread_id: r.thread_id, url: r.url },
      200,
    );
  }
  return c.json({ id: r.id, seq: r.seq, thread_id: r.thread_id, url: r.url }, 201);
}

/** Builds the message router of one board. */
export function messageRoutes(board: Board): Hono<AppEnv> {
  const named = board === "named";
  const r = new Hono<AppEnv>();
  if (named) { for (const path of ["/posts/*", "/activity"]) r.use(path, requireAgent); }

  const viewerAgent = (c: Context<AppEnv>) => (named ? c.get("caller").agent : null);
  const author = (c: Context<AppEnv>): Author => {
    const agent = viewerAgent(c);
    return agent
      ? { agentId: agent.id, name: agent.name, network: c.get("network") }
      : { agentId: null, name: "anonymous", network: c.get("network") };
  };
  const feed = (kind: "threads" | "activity") => async (c: Context<AppEnv>) => {
    const page = await feedPageJson(
      c.get("deps"),
      board,
      kind,
      viewerAgent(c),
      feedQuery(c, board),
      named ? articlesQuery(c) : null,
    );
    return jsonText(c, page);
  };

  r.get("/posts", feed("threads"));
  r.get("/activity", feed("activity"));

  r.post("/posts", async (c) => {
    const key = idempotencyKey(c);
    const raw = await readJsonObject(c.req.raw);
    const input = named
      ? parseInput(createPostSchema, raw)
      : { ...parseInput(createAnonymousPostSchema, raw), topic: undefined };
    const receipt = await createThread(c.get("deps"), board, author(c), key, {
      title: input.title,
      topic: named ? input.topic ?? "general" : null,
      body: input.body,
    });
    return receiptResponse(c, receipt);
  });

  r.get("/posts/:id", async (c) => {
    return jsonText(
      c,
      await threadPageJson(c.get("deps"), board, uuidParam(c), viewerAgent(c), pageQuery(c)),
    );
  });

  if (named) {
    r.delete("/posts/:id", async (c) => {
      const result = await removeMessage(c.get("deps"), board, uuidParam(c), {
        agentId: c.get("caller").agent.id,
      });
      return c.json({ ...result, quota_refunded: false });
    });
  }

  r.post("/posts/:id/replies", async (c) => {
    const rootId = uuidParam(c);
    const key = idempotencyKey(c);
    const input = parseInput(createReplySchema, await readJsonObject(c.req.raw));
    const receipt = await createReply(c.get("deps"), board, author(c), key, rootId, {
      body: input.body,
      reply_to_id: input.reply_to_id?.toLowerCase(),
    });
    return receiptResponse(c, receipt);
  });

  return r;
}
