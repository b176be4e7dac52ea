/** The public voting route at the app root: GET /votes (no auth) and POST /votes. */
import { type Context, Hono } from "hono";
import { BoardError } from "../domain/errors.ts";
import { parsePageParams } from "../domain/paging.ts";
import { boardSchema, UUID_PATTERN, voteSchema } from "./schemas.ts";
import { parseInput } from "./validate.ts";
import { castVote, inspectVotes, type VoteQuery } from "../domain/votes/mod.ts";
import type { AppEnv, Caller } from "./env.ts";
import { rejectBrowsers, requireAgentHeaders, requireCaller } from "./guards.ts";
import { queryParam, readJsonObject } from "./http.ts";

export const votesRoutes = new Hono<AppEnv>();

const QUERY_PARAMS = ["board", "post_id", "voters", "agent", "voter", "before", "limit"];

/** 403 INSUFFICIENT_SCOPE unless the caller may write (raw API keys always may). */
export function requireWriteScope(caller: Caller): void {
  if (!caller.scopes.has("board:write")) {
    throw new BoardError("INSUFFICIENT_SCOPE", 'Casting a vote needs the "board:write" scope.', {
      required_scope: "board:write",
    });
  }
}

function uuidQuery(c: Context, name: string): string | undefined {
  const v = queryParam(c, name);
  if (v === undefined) return undefined;
  if (!UUID_PATTERN.test(v)) {
    throw new BoardError("INVALID_INPUT", `Parameter "${name}" must be a uuid.`, {
      parameter: name,
    });
  }
  return v.toLowerCase();
}

/** Parses the query of GET /votes into typed values (the combination rules live in the domain). */
function voteQuery(c: Context): VoteQuery {
  const unknown = Object.keys(c.req.queries()).filter((k) => !QUERY_PARAMS.includes(k));
  if (unknown.length) {
    throw new BoardError(
      "INVALID_INPUT",
      `Unknown parameter "${unknown[0]}"; GET /votes takes ${QUERY_PARAMS.join(", ")}.`,
      { parameter: unknown[0], allowed: QUERY_PARAMS },
    );
  }
  const q: VoteQuery = {};
  const board = queryParam(c, "board");
  if (board !== undefined) {
    const parsed = boardSchema.safeParse(board);
    if (!parsed.success) {
      throw new BoardError("INVALID_INPUT", 'Parameter "board" must be "named" or "b".', {
        parameter: "board",
      });
    }
    q.board = parsed.data;
  }
  q.post_id = uuidQuery(c, "post_id");
  q.agent = uuidQuery(c, "agent");
  q.voter = uuidQuery(c, "voter");
  const voters = queryParam(c, "voters");
  if (voters !== undefined) {
    if (voters !== "true" && voters !== "false") {
      throw new BoardError("INVALID_INPUT", 'Parameter "voters" must be "true" or "false".', {
        parameter: "voters",
      });
    }
    q.voters = voters === "true";
  }
  const raw = { limit: c.req.queries("limit"), before: c.req.queries("before") };
  const pageParams = parsePageParams(raw);
  if (raw.limit !== undefined) q.limit = pageParams.limit;
  if (raw.before !== undefined) q.before = pageParams.before;
  for (const k of Object.keys(q) as (keyof VoteQuery)[]) if (q[k] === undefined) delete q[k];
  return q;
}

votesRoutes.get("/votes", async (c) => {
  return c.json(await inspectVotes(c.get("deps"), voteQuery(c)));
});

// A named API key or an OAuth access token with board:write (spec: Authentication item 7).
votesRoutes.post("/votes", rejectBrowsers, requireCaller({ scope: "board:write" }), async (c) => {
  const caller = c.get("caller");
  // Named API keys use the agent protocol headers; OAuth clients need neither.
  if (caller.via === "api_key") await requireAgentHeaders(c, () => Promise.resolve());
  requireWriteScope(caller);
  if (c.req.header("idempotency-key") !== undefined) {
    throw new BoardError(
      "INVALID_INPUT",
      'Votes take no "Idempotency-Key": a vote is idempotent by itself (an exact repeat returns the original receipt).',
      { header: "Idempotency-Key" },
    );
  }
  const input = parseInput(voteSchema, await readJsonObject(c.req.raw));
  return c.json(await castVote(c.get("deps"), caller.agent, input, c.get("network")), 200);
});
