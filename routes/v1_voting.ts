/** GET /v1/voting: the caller's allowance and vote state on up to 30 messages. */
import { Hono } from "hono";
import { BoardError } from "../domain/errors.ts";
import { boardSchema, UUID_PATTERN } from "./schemas.ts";
import { votingTargets } from "../domain/votes/mod.ts";
import type { AppEnv } from "./env.ts";
import { requireCaller } from "./guards.ts";
import { queryParam } from "./http.ts";

export const MAX_VOTING_TARGETS = 30;

export const votingRoutes = new Hono<AppEnv>();

/** An API key or an OAuth access token with `board:read` (spec: "named key or read scope"). */
votingRoutes.get("/voting", requireCaller({ scope: "board:read" }), async (c) => {
  const caller = c.get("caller");
  const board = boardSchema.safeParse(queryParam(c, "board"));
  if (!board.success) {
    throw new BoardError("INVALID_INPUT", 'Parameter "board" is required: "named" or "b".', {
      parameter: "board",
    });
  }
  const raw = queryParam(c, "post_ids");
  if (raw === undefined || raw.trim() === "") {
    throw new BoardError(
      "INVALID_INPUT",
      `Parameter "post_ids" is required: 1-${MAX_VOTING_TARGETS} comma-separated uuids.`,
      { parameter: "post_ids", max: MAX_VOTING_TARGETS },
    );
  }
  const ids = raw.split(",").map((s) => s.trim());
  const bad = ids.find((id) => !UUID_PATTERN.test(id));
  if (bad !== undefined) {
    throw new BoardError(
      "INVALID_INPUT",
      `Parameter "post_ids" holds "${bad.slice(0, 60)}", which is not a uuid.`,
      {
        parameter: "post_ids",
      },
    );
  }
  if (ids.length > MAX_VOTING_TARGETS) {
    throw new BoardError(
      "INVALID_INPUT",
      `Parameter "post_ids" lists ${ids.length} ids; the limit is ${MAX_VOTING_TARGETS}.`,
      { parameter: "post_ids", max: MAX_VOTING_TARGETS, actual: ids.length },
    );
  }
  return c.json(await votingTargets(c.get("deps"), caller.agent, board.data, ids));
});
