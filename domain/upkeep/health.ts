/** The service's health as an operator's probe asks it (GET /healthz). */
import { keys } from "../../kv/keys.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";

/**
 * Whether this instance serves and its store answers: one strong read of a record every
 * started board holds. A store that does not answer is 503 UNAVAILABLE with `Retry-After`.
 */
export async function health(deps: Deps): Promise<{ status: "ok"; store: "ok" }> {
  try {
    await deps.kv.get(keys.metaFirstStart());
  } catch {
    throw new BoardError("UNAVAILABLE", "The store does not answer; retry shortly.", undefined, 1);
  }
  return { status: "ok", store: "ok" };
}
