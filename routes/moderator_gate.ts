/**
 * The gate of the moderator interface `/mod` (its operations are in
 * routes/api/moderation.ts; docs/pins_rules_moderation.md). Off (every route 404) unless
 * `BOARD_MODERATOR_KEY` is set. `Authorization: Bearer <key>` compared in constant time
 * (wrong keys throttled per network, domain/moderation/moderator_key.ts),
 * `Accept: application/json`, browsers refused; writes take an `Idempotency-Key` and
 * every write is an audited action (domain/moderation/audit.ts).
 */
import type { Context, MiddlewareHandler } from "hono";
import {
  checkModeratorKey,
  checkWrongKeyWindow,
  moderatorUnauthorized,
} from "../domain/moderation/mod.ts";
import { BoardError } from "../domain/errors.ts";
import type { AppEnv } from "./env.ts";
import { namesJson } from "./accept.ts";
import { bearerToken, callerOf, whileAuthenticating } from "./authentication.ts";
import { timingSafeEqual } from "../domain/hashing.ts";
import { requireBodyRules } from "./guards.ts";
import { errorObject } from "./http.ts";
import { DESK_PATH } from "./web/desk_session.ts";

/** The 404 of a path nobody serves (what `/mod` answers while it is off). */
export function routeNotFound(c: Context<AppEnv>) {
  return c.json(
    errorObject(
      c.get("deps").config.baseUrl,
      "NOT_FOUND",
      `No route matches ${c.req.method} ${new URL(c.req.url).pathname}.`,
    ),
    404,
  );
}

/**
 * 404 everywhere when no moderator key is configured; otherwise headers and the key. The
 * moderator desk under /mod/desk is left to its own guard (a session cookie, not the key).
 */
export const moderatorGate: MiddlewareHandler<AppEnv> = async (c, next) => {
  // The moderator desk (routes/web/desk_pages.tsx) is the browser side: its own guard.
  const path = new URL(c.req.url).pathname;
  if (path === DESK_PATH || path.startsWith(`${DESK_PATH}/`)) return await next();
  const modKey = c.get("deps").config.moderatorKey;
  if (!modKey) return routeNotFound(c);
  if (!namesJson(c.req.header("accept"))) {
    throw new BoardError("JSON_REQUIRED", 'Send the header "Accept: application/json".', {
      header: "Accept",
      expected: "application/json",
    });
  }
  requireBodyRules(c.req.raw);
  const token = bearerToken(c.req.header("authorization"));
  if (!token) throw moderatorUnauthorized();
  const deps = c.get("deps");
  if (timingSafeEqual(token, modKey)) {
    // The right key: the wrong-key window (its 429) is read while the operation reads, and
    // decides the answer (whileAuthenticating). A write waits for it before it writes
    // anything (`moderatorKeyChecked`). Wrong keys never reach a handler.
    const windowOpen: MiddlewareHandler<AppEnv> = async (_c, go) => {
      await checkWrongKeyWindow(deps, c.get("network"));
      await go();
    };
    return await whileAuthenticating([windowOpen], { tokenChecked: true })(c, next);
  }
  await checkModeratorKey(deps, c.get("network"), token, modKey);
  await next();
};

/**
 * The moderator key's check that runs beside a `/mod` operation (`moderatorGate`): resolves
 * once the key's network window admitted the request, rejects when it refused it (the request
 * then answers that refusal). A `/mod` write hands it to its audited action
 * (`ModActionSpec.keyChecked`), which reads beside it and writes nothing before it resolved.
 */
export function moderatorKeyChecked(c: Context<AppEnv>): Promise<void> {
  const checked = callerOf(c).then(() => {});
  checked.catch(() => {}); // the refusal is answered by the gate
  return checked;
}
