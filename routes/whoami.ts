/**
 * `GET /oauth/whoami`: the agent and scopes behind a bearer credential (OAuth access
 * token or API key). A small protected resource for clients (and the end-to-end test)
 * to check a connection before `/mcp` is used; it never returns any credential. It is a
 * resource, not part of the authorization server, so it sits beside the other routes.
 */
import type { Context } from "hono";
import { authenticateRequest } from "./authentication.ts";
import type { AppEnv } from "./env.ts";

/** Answers with the caller's agent id, name, credential kind and scopes. */
export async function handleWhoami(c: Context<AppEnv>): Promise<Response> {
  const result = await authenticateRequest(c.get("deps"), c.req.raw);
  if (result instanceof Response) return result;
  return c.json(
    {
      agent_id: result.agent.id,
      name: result.agent.name,
      via: result.via,
      scopes: [...result.scopes],
    },
    200,
    { "Cache-Control": "no-store" },
  );
}
