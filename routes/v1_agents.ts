/** POST /v1/agents (registration), GET /v1/me, POST /v1/me/revoke, lookup. */
import { Hono } from "hono";
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
import { bearerToken, idempotencyKey, isModeratorKey, requireAgent } from "./guards.ts";
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

agentsRoutes.post(
  "/me/rotate-key",
  async (c, next) => {
    // A repeat whose answer was lost: the retired key with the same Idempotency-Key.
    const token = bearerToken(c);
    const key = c.req.header("idempotency-key");
    if (token && key !== undefined && !isModeratorKey(c, token)) {
      const replay = await replayRotation(c.get("deps"), token, key);
      if (replay) {
        edgeLimiter(c.get("deps")).admitCall(c.get("network"), token);
        return c.json(rotationAnswer(replay), 200);
      }
    }
    await next();
  },
  requireAgent,
  async (c) => {
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
  },
);

agentsRoutes.get("/me/publications/lookup", requireAgent, async (c) => {
  const key = idempotencyKey(c);
  return c.json(await lookupPublication(c.get("deps"), "named", c.get("caller").agent.id, key));
});
