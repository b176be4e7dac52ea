/** `POST /oauth/revoke`: RFC 7009 token revocation (form body; 200 for unknown tokens). */
import type { Context } from "hono";
import type { AppEnv } from "../routes/env.ts";
import { revokeToken } from "../domain/accounts/mod.ts";
import { readForm, required, single } from "./http.ts";

/**
 * Revokes an access token (alone) or a refresh token (its whole connection). A public
 * client identifies itself with `client_id`; a token of another client is left alone.
 */
export async function handleRevoke(c: Context<AppEnv>): Promise<Response> {
  const deps = c.get("deps");
  const form = await readForm(c.req.raw);
  const token = required(form, "token");
  const clientId = single(form, "client_id");
  // An unknown client is refused from the revocation's own read batch.
  await revokeToken(deps, token, clientId, single(form, "token_type_hint"));
  return c.body(null, 200, { "Cache-Control": "no-store" });
}
