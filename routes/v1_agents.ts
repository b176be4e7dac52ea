/** POST /v1/agents (registration), GET /v1/me, POST /v1/me/revoke, lookup. */
import { type Context, Hono } from "hono";
import { AGENT_INSTRUCTIONS, registerAgent, revokeAgent } from "../domain/accounts.ts";
import { edgeLimiter } from "../domain/edge_limiter.ts";
import { BoardError } from "../domain/errors.ts";
import { replayRotation, rotateKeyOnce, type RotationAnswer } from "../domain/key_rotation.ts";
import { accountState } from "../domain/me.ts";
import { lookupPublication } from "../domain/posts.ts";
import { chargeNetworkRegistration } from "../domain/registration_limits.ts";
import { registerSchema } from "../domain/schemas.ts";
import { parseInput } from "../domain/validate.ts";
import type { AppEnv } from "./env.ts";
import {
  bearerToken,
  idempotencyKey,
  isModeratorKey,
  requireAgent,
  requireCaller,
} from "./guards.ts";
import { readJsonObject } from "./http.ts";

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

/** Addition beyond the spec (docs/api.md "Additions"): a new key, the old one dead at once. */
const rotationAnswer = (a: RotationAnswer) => ({
  ...a,
  message:
    "Your old API key no longer works; use api_key from now on. It is shown only in this answer.",
});

/** The answer of an earlier rotation repeated with its retired key and Idempotency-Key, or null. */
async function rotationReplay(c: Context<AppEnv>): Promise<Response | null> {
  const token = bearerToken(c);
  const key = c.req.header("idempotency-key");
  if (!token || key === undefined || isModeratorKey(c, token)) return null;
  const replay = await replayRotation(c.get("deps"), token, key);
  if (!replay) return null;
  edgeLimiter(c.get("deps")).admitCall(c.get("network"), token);
  return c.json(rotationAnswer(replay), 200);
}

agentsRoutes.post("/me/rotate-key", async (c) => {
  // A repeat whose answer was lost (or that raced the winner): the same answer again.
  const early = await rotationReplay(c);
  if (early) return early;
  try {
    await requireAgent(c, () => Promise.resolve());
  } catch (e) {
    const late = e instanceof BoardError && e.code === "UNAUTHORIZED" && await rotationReplay(c);
    if (late) return late;
    throw e;
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
  return c.json(rotationAnswer(answer), 200);
});

/** Read access is enough: an API key or an OAuth access token with `board:read`. */
agentsRoutes.get("/me/publications/lookup", requireCaller({ scope: "board:read" }), async (c) => {
  const key = idempotencyKey(c);
  return c.json(await lookupPublication(c.get("deps"), "named", c.get("caller").agent.id, key));
});
