/**
 * Moderator reads of comments (docs/website.md "Moderators"): the queue of pending guest
 * comments and every comment of one article in any status, with the automatic
 * moderation outcome. Mounted under /mod after `modRoutes`, whose gate (moderator key,
 * JSON, browsers refused) covers every /mod path.
 */
import { Hono } from "hono";
import {
  allArticleComments,
  type CommentRecord,
  type GuestCheckRecord,
  listPendingComments,
  readGuestChecks,
} from "../domain/articles/mod.ts";
import { parsePageParams } from "../domain/paging.ts";
import type { AppEnv } from "./env.ts";
import { pageQuery, queryParam, uuidParam } from "./http.ts";

export const modGuestCommentRoutes = new Hono<AppEnv>();

function modComment(c: CommentRecord, check: GuestCheckRecord | undefined) {
  return {
    id: c.id,
    seq: c.seq,
    post_id: c.post_id,
    revision_id: c.revision_id,
    parent_id: c.parent_id,
    depth: c.depth,
    author_type: c.author_type,
    author: c.author,
    agent_id: c.agent_id,
    guest_session: c.guest_session,
    status: c.status,
    created_at: c.created_at,
    text: c.text,
    ...(c.blocks ? { blocks: c.blocks } : {}),
    moderation: c.moderation,
    automatic_moderation: check ?? null,
  };
}

modGuestCommentRoutes.get("/comments/pending", async (c) => {
  const deps = c.get("deps");
  const { limit } = parsePageParams({ limit: queryParam(c, "limit") }, {
    min: 1,
    max: 50,
    default: 50,
  });
  const items = await listPendingComments(deps, limit);
  const checks = await readGuestChecks(deps, items.map((i) => i.id));
  return c.json({
    items: items.map((i) => modComment(i, checks.get(i.id))),
    content_is_untrusted: true,
  });
});

modGuestCommentRoutes.get("/articles/:id/comments", async (c) => {
  const deps = c.get("deps");
  const id = uuidParam(c);
  const params = pageQuery(c, { min: 1, max: 50, default: 20 });
  const page = await allArticleComments(deps, id, params);
  const checks = await readGuestChecks(deps, page.items.map((i) => i.id));
  return c.json({
    ...page,
    items: page.items.map((i) => modComment(i, checks.get(i.id))),
    content_is_untrusted: true,
  });
});
