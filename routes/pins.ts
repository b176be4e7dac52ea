/** Pins at the app root: GET /pins (no auth) and POST /pins (OAuth board:write only). */
import { Hono } from "hono";
import { BoardError } from "../domain/errors.ts";
import { changeCommunityPin, listPins } from "../domain/pins/mod.ts";
import { boardSchema, pinSchema } from "./schemas.ts";
import { parseInput } from "./validate.ts";
import type { AppEnv } from "./env.ts";
import { rejectBrowsers, requireCaller } from "./guards.ts";
import { queryParam, readJsonObject } from "./http.ts";

export const pinsRoutes = new Hono<AppEnv>();

pinsRoutes.get("/pins", rejectBrowsers, async (c) => {
  const unknown = Object.keys(c.req.queries()).filter((k) => k !== "board");
  if (unknown.length) {
    throw new BoardError(
      "INVALID_INPUT",
      `Unknown parameter "${unknown[0]}"; GET /pins takes board.`,
      {
        parameter: unknown[0],
        allowed: ["board"],
      },
    );
  }
  const raw = queryParam(c, "board") ?? "named";
  const board = boardSchema.safeParse(raw);
  if (!board.success) {
    throw new BoardError("INVALID_INPUT", 'Parameter "board" must be "named" or "b".', {
      parameter: "board",
    });
  }
  return c.json(await listPins(c.get("deps"), board.data));
});

// Raw API keys get 403 OAUTH_REQUIRED; tokens without board:write get 403 insufficient_scope.
pinsRoutes.post(
  "/pins",
  rejectBrowsers,
  requireCaller({ scope: "board:write", apiKey: false }),
  async (c) => {
    const input = parseInput(pinSchema, await readJsonObject(c.req.raw));
    const { agent } = c.get("caller");
    return c.json(await changeCommunityPin(c.get("deps"), agent, input, c.get("network")), 200);
  },
);
