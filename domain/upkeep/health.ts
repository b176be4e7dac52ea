/** The service's health as an operator's probe asks it (GET /healthz). */
import { keys } from "../../kv/keys.ts";
import { withinDeadline } from "../../kv/store_deadline.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";

/**
 * How long the probe's read may take before the store counts as not answering: a KV Connect
 * store whose server is down does not fail the read, Deno's client keeps retrying it. Shorter
 * than every other call's deadline (kv/store_deadline.ts), so that a probe answers first.
 */
export const HEALTH_READ_MS = 2_000;

/**
 * Whether this instance serves and its store answers: one strong read of a record every
 * started board holds, within `HEALTH_READ_MS`. A store that does not answer (an error, or
 * no answer in time) is 503 UNAVAILABLE with `Retry-After`.
 */
export async function health(deps: Deps): Promise<{ status: "ok"; store: "ok" }> {
  try {
    await withinDeadline(deps.kv.get(keys.metaFirstStart()), HEALTH_READ_MS, "health read");
  } catch {
    throw new BoardError("UNAVAILABLE", "The store does not answer; retry shortly.", undefined, 1);
  }
  return { status: "ok", store: "ok" };
}
