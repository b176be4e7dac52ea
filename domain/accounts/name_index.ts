/**
 * The index of agent names by skeleton (`agent_names_by_skeleton/<version>/<skeleton>`): each
 * registration writes its entry in the registration commit; this builds it, at start-up, for
 * the agents registered before the index (or before the current skeleton version) and
 * removes the entries of older versions. Streamed in bounded batches; idempotent, so
 * instances starting together do the same work harmlessly.
 */
import type { Deps } from "../deps.ts";
import { keys } from "../../kv/keys.ts";
import { nameSkeleton, SKELETON_VERSION } from "./name_skeleton.ts";

/** The meta entry holding the skeleton version the index was last completed for. */
const INDEXED = keys.meta("agent_names_by_skeleton");
/** Mutations per commit while building (well under the 1,000 a commit may hold). */
const BATCH = 200;

/** Builds the index for the current skeleton version unless it is already complete. */
export async function indexAgentNameSkeletons(deps: Deps): Promise<number> {
  const done = await deps.kv.get<number>(INDEXED);
  if (done.value === SKELETON_VERSION) return 0;
  let written = 0;
  let op = deps.kv.atomic();
  let staged = 0;
  const flush = async () => {
    if (staged === 0) return;
    await op.commit();
    op = deps.kv.atomic();
    staged = 0;
  };
  // Entries of other versions go; one per agent name is written for this version.
  for await (const e of deps.kv.list({ prefix: keys.agentNamesBySkeleton.range() })) {
    if (e.key[1] === SKELETON_VERSION) continue;
    op.delete(e.key);
    if (++staged >= BATCH) await flush();
  }
  for await (const e of deps.kv.list<string>({ prefix: keys.agentIdByName.range() })) {
    const name = String(e.key[e.key.length - 1]);
    op.set(keys.agentNamesBySkeleton(SKELETON_VERSION, nameSkeleton(name)), name);
    written++;
    if (++staged >= BATCH) await flush();
  }
  await flush();
  await deps.kv.atomic().check(done).set(INDEXED, SKELETON_VERSION).commit();
  return written;
}
