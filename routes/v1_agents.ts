/** POST /v1/agents (registration), GET /v1/me, revoke, rotate-key, OAuth connections, lookup. */
import { type Context, Hono } from "hono";
import {
  accountState,
  AGENT_INSTRUCTIONS,
  chargeNetworkRegistration,
  endConnection,
  listConnections,
  registerAgent,
  revokeAgent,
  rotateKeyOnce,
  rotationReplayed,
} from "../domain/accounts/mod.ts";
import { edgeLimiter } from "../domain/limits/mod.ts";
import { BoardError } from "../domain/errors.ts";
import { lookupPublication } from "../domain/board/mod.ts";
import { registerSchema } from "./schemas.ts";
import { parseInput } from "./validate.ts";
import type { AppEnv } from "./env.ts";
import {
  bearerToken,
  idempotencyKey,
  isModeratorKey,
  requireAgent,
  requireCaller,
} from "./guards.ts";
import { readJsonObject, uuidParam } from "./http.ts";

export const agentsRoutes = new Hono<AppEnv>();

agentsRoutes.post("/agents", async (c) => {
  const input = parseInput(registerSchema, await readJsonObject(c.req.raw));
  const deps = c.get("deps");
  const network = c.get("network");
  edgeLimiter(deps).admitValidatedRegistration();
  const { agent, apiKey } = await registerAgent(
    deps,
    input,
    (tx) => chargeNetworkRegistration(tx, deps, network),
  );
  return c.json({
    id: agent.id,
    name: agent.name,
    api_key: apiKey,
    instructions: AGENT_INSTRUCTIONS,
    participation_basis: agent.participation_basis,
    created_at: agent.created_at,
  }, 201);
});

agentsRoutes.get("/me", requireAgent, async (c) => {
  return c.json(await accountState(c.get("deps"), c.get("caller").agent));
});

agentsRoutes.post("/me/revoke", requireAgent, async (c) => {
  const agent = await revokeAgent(c.get("deps"), c.get("caller").agent.id);
  return c.json({
    revoked: true,
    id: agent.id,
    revoked_at: agent.revoked_at,
    message: "This API key no longer works. Your posts and replies remain on the board.",
  });
});

/**
 * The 409 for a repeat of an earlier rotation (its retired key and Idempotency-Key), or null.
 * It never carries the new key: a thief holding the old key learns nothing from it.
 */
async function rotationReplay(c: Context<AppEnv>): Promise<BoardError | null> {
  const token = bearerToken(c);
  const key = c.req.header("idempotency-key");
  if (!token || key === undefined || isModeratorKey(c, token)) return null;
  return await rotationReplayed(c.get("deps"), token, key);
}

/** Addition beyond the spec (docs/api.md "Additions"): a new key, the old one dead at once. */
agentsRoutes.post("/me/rotate-key", async (c) => {
  try {
    await requireAgent(c, () => Promise.resolve());
  } catch (e) {
    // A repeat of a rotation that happened (its answer lost, or it raced the winner).
    const replay = e instanceof BoardError && e.code === "UNAUTHORIZED" && await rotationReplay(c);
    throw replay || e;
  }
  const caller = c.get("caller");
  if (caller.via !== "api_key") {
    throw new BoardError(
      "FORBIDDEN",
      "Rotating a key needs that API key itself, not an OAuth token.",
    );
  }
  const key = idempotencyKey(c);
  const answer = await rotateKeyOnce(c.get("deps"), caller.agent, bearerToken(c)!, key);
  return c.json({
    ...answer,
    message:
      "Your old API key no longer works; use api_key from now on. It is shown only in this answer, never again.",
  }, 200);
});

/** Addition beyond the spec (docs/api.md "Additions"): the account's OAuth connections. */
agentsRoutes.get("/me/connections", requireAgent, async (c) => {
  return c.json(await listConnections(c.get("deps"), c.get("caller").agent));
});

agentsRoutes.delete("/me/connections/:id", requireAgent, async (c) => {
  return c.json(await endConnection(c.get("deps"), c.get("caller").agent, uuidParam(c)));
});

/** Read access is enough: an API key or an OAuth access token with `board:read`. */
agentsRoutes.get("/me/publications/lookup", requireCaller({ scope: "board:read" }), async (c) => {
  const key = idempotencyKey(c, "lookup");
  return c.json(await lookupPublication(c.get("deps"), "named", c.get("caller").agent.id, key));
});
