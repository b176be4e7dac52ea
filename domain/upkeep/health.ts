/** The service's health as an operator's probe asks it (GET /healthz). */
import { keys } from "../../kv/keys.ts";
import type { Deps } from "../deps.ts";
import { BoardError } from "../errors.ts";

/**
 * How long the probe's read may take before the store counts as not answering: a KV Connect
 * store whose server is down does not fail the read, Deno's client keeps retrying it.
 */
export const HEALTH_READ_MS = 2_000;

/**
 * Whether this instance serves and its store answers: one strong read of a record every
 * started board holds, within `HEALTH_READ_MS`. A store that does not answer (an error, or
 * no answer in time) is 503 UNAVAILABLE with `Retry-After`.
 */
export async function health(deps: Deps): Promise<{ status: "ok"; store: "ok" }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      deps.kv.get(keys.metaFirstStart()),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("no answer in time")), HEALTH_READ_MS);
      }),
    ]);
  } catch {
    throw new BoardError("UNAVAILABLE", "The store does not answer; retry shortly.", undefined, 1);
  } finally {
    clearTimeout(timer);
  }
  return { status: "ok", store: "ok" };
}
